"""Bulk actions for runbooks: select jobs by role, staleness, age, worker and group, then act
on them batch by batch.

Each batch is read (a plain read, in id order after the last batch) and then acted on
in its own short transaction, guarded row by row and audited as a hand-picked action
is; one command never holds many rows for long, and a row that moved on between the
read and the action is skipped with its reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

import psycopg
from psycopg import sql

from dashboard.actions.guards import FROM_ROLES, JobRow
from dashboard.actions.jobs import friendly_error, job_rows
from dashboard.actions.results import ActionResult
from dashboard.errors import UserError
from dashboard.models import QueueSpec
from dashboard.observed.records import ObservedJob
from dashboard.queue_sql.parts import queue_parts, statement, value_rows

DEFAULT_BATCH = 100
MAX_BATCH = 10_000


@dataclass(frozen=True)
class Selection:
    """Which jobs: the raw state values, only stale ones (running jobs past their lease),
    older than a duration, of one worker or group, at most `limit` of them."""

    values: tuple[str, ...]
    stale_only: bool = False
    older_than_s: float | None = None
    worker: str | None = None
    group: str | None = None
    limit: int | None = None
    batch_size: int = DEFAULT_BATCH

    def describe(self) -> str:
        what = "stale leases" if self.stale_only else f"jobs in {', '.join(self.values)}"
        more = [
            f"older than {self.older_than_s:g}s" if self.older_than_s else "",
            f"of worker {self.worker}" if self.worker else "",
            f"in group {self.group}" if self.group else "",
            f"at most {self.limit}" if self.limit else "",
        ]
        return " ".join([what, *filter(None, more)])


def selection_values(spec: QueueSpec, state: str, action: str) -> tuple[str, ...]:
    """`--state failed`: a role (its values) or one raw value; refused when the action does
    not apply to it, in one line naming what does."""
    allowed = FROM_ROLES[action]
    role = state if state in spec.roles else spec.role_of(state)
    if role is None:
        known = [r for r in spec.roles if spec.values(r)]
        raise UserError(
            f"bad --state {state!r}: not a role ({', '.join(known)}) nor a state "
            f"value of {spec.table}"
        )
    if role not in allowed:
        raise UserError(
            f"{action} does not apply to {role} jobs; --state takes "
            f"{', '.join(r for r in allowed if r in spec.roles)}"
        )
    values = spec.values(role) if state == role else (state,)
    if role == "scheduled" and not spec.values("scheduled"):
        raise UserError(
            "scheduled jobs are ready jobs due later here: select them with --state ready"
        )
    if not values:
        raise UserError(f"the spec of {spec.table} has no {role} state value")
    return values


def _older(spec: QueueSpec, parts: dict[str, sql.Composable], stale_only: bool) -> sql.Composable:
    """The time a job's age is measured from: its lease expiry for a stale lease, else its
    last claim, due time or enqueue time, whichever the spec has first."""
    if stale_only:
        return parts["expires_at"]
    cols = spec.columns
    if not (cols.started_at or cols.scheduled_at or cols.created_at):
        raise UserError(
            f"--older-than needs a time column: the spec of {spec.table} names no "
            "started_at, scheduled_at or created_at; pass --started-at-column or "
            "--created-at-column"
        )
    return sql.SQL("coalesce({}, {}, {})").format(
        parts["started_at"], parts["scheduled_at"], parts["created_at"]
    )


def select_batch(
    conn: psycopg.Connection, spec: QueueSpec, sel: Selection, after: str | None, size: int
) -> list[ObservedJob]:
    """The next `size` jobs of the selection after id `after`, as observed now."""
    parts = queue_parts(spec)
    # an OR of equalities: partial indexes on each value can serve it (see queue_sql.state_in)
    holders = {f"v{i}": v for i, v in enumerate(sel.values)}
    rows = sql.SQL("({})").format(
        sql.SQL(" OR ").join(
            value_rows(spec, parts, v, sql.Placeholder(k)) for k, v in holders.items()
        )
    )
    params = {**holders, "limit": size}
    clause = {
        name: sql.SQL("true") for name in ("stale", "older", "of_worker", "in_group", "after")
    }
    if sel.stale_only:
        clause["stale"] = parts["is_stale"]
    if sel.older_than_s:
        clause["older"] = sql.SQL("{} <= now() - make_interval(secs => %(older_s)s)").format(
            _older(spec, parts, sel.stale_only)
        )
        params["older_s"] = float(sel.older_than_s)
    if sel.worker is not None:
        clause["of_worker"] = sql.SQL("{}::text = %(worker)s").format(parts["worker"])
        params["worker"] = sel.worker
    if sel.group is not None:
        clause["in_group"] = sql.SQL("{}::text = %(group)s").format(parts["group"])
        params["group"] = sel.group
    if after is not None:
        clause["after"] = sql.SQL("{} > %(after)s::text::{}").format(
            parts["job_id"], parts["id_type"]
        )
        params["after"] = after
    stmt = statement(spec, "actions/select_jobs", **parts, rows=rows, **clause)
    try:
        found: list[JobRow] = job_rows(conn, stmt, params)
    except psycopg.Error as exc:
        conn.rollback()
        raise (friendly_error(exc, spec) or exc) from exc
    conn.commit()  # the read is over before the batch is acted on
    return [r.observed() for r in found]


def batches(
    conn: psycopg.Connection, spec: QueueSpec, sel: Selection
) -> Iterator[list[ObservedJob]]:
    """The selection, batch after batch, each read just before it is acted on."""
    if not sel.values:
        return
    after: str | None = None
    taken = 0
    while sel.limit is None or taken < sel.limit:
        size = sel.batch_size if sel.limit is None else min(sel.batch_size, sel.limit - taken)
        batch = select_batch(conn, spec, sel, after, size)
        if not batch:
            return
        taken += len(batch)
        yield batch
        after = batch[-1].id
        if len(batch) < size:
            return


def run_batches(
    conn: psycopg.Connection,
    spec: QueueSpec,
    sel: Selection,
    act: Callable[[Sequence[ObservedJob]], ActionResult],
    on_batch: Callable[[int, ActionResult], None] | None = None,
    action: str = "",
    dry_run: bool = False,
) -> ActionResult:
    """Act on every batch (each its own transaction); one result for them all (a dry run's,
    even when no batch matched)."""
    id_type = spec.column_types.get(spec.columns.id, "text")
    total = ActionResult(action, id_type=id_type, dry_run=dry_run)
    tokens: dict[str, object] = {}
    for n, batch in enumerate(batches(conn, spec, sel), start=1):
        result = act(batch)
        tokens.update(result.detail.get("new_lease_tokens", {}))
        total = total.merged(result)
        if on_batch is not None:
            on_batch(n, result)
    return replace(total, detail={"new_lease_tokens": tokens})
