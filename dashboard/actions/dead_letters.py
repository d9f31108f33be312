"""Retry from the dead-letter table: a job moved there goes back into the queue as ready.

One statement moves each job (DELETE … RETURNING from the dead-letter table, INSERT
into the queue), only while it is still as the operator saw it there and its id is
free in the queue; worker and lease are cleared, attempts kept, the lease token
advanced. The audit record is written in the same transaction, as for every action.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import psycopg
from psycopg import sql

import queries
from dashboard.actions.guards import LOCKED, NOT_FOUND, JobRow, require_privileges
from dashboard.actions.jobs import (
    Changed,
    audited_transaction,
    changed_result,
    friendly_error,
    job_rows,
    run_guarded,
    skipped_entries,
    written,
)
from dashboard.actions.results import ActionResult, Skipped
from dashboard.actions.statements import INTEGER_TYPES, ready_value
from dashboard.actions.writes import resolve as resolve_writes
from dashboard.audit.writers import AuditEntry, AuditSink, commit
from dashboard.errors import UserError
from dashboard.models import Derived, QueueSpec, TableName
from dashboard.observed.records import ObservedJob
from dashboard.queue_sql.dead_table import dead_parts, dead_table, held_by
from dashboard.queue_sql.parts import queue_parts, statement

ACTION = "retry-dead"
ALREADY_BACK = "already back in the queue"
CHANGED = "changed in the dead-letter table since observed"


def _dead_or_refuse(spec: QueueSpec) -> TableName:
    table = dead_table(spec)
    if table is None:
        raise UserError(
            f"the spec of {spec.table} moves no job to a dead-letter table "
            "(policy.dead_letter is not 'table:NAME'): nothing to retry from"
        )
    if isinstance(spec.columns.status, Derived):
        raise UserError(
            f"the state of {spec.table} is derived by its adapter: queuetop cannot "
            "set it on a job it puts back; retry it with the library's own tools"
        )
    return table


def observe_dead(
    conn: psycopg.Connection, spec: QueueSpec, ids: Iterable[str]
) -> tuple[list[ObservedJob], list[Skipped]]:
    """The given jobs as the dead-letter table holds them now (a plain read), and the others:
    back in the queue, or not found."""
    _dead_or_refuse(spec)
    wanted = list(dict.fromkeys(str(i) for i in ids))
    try:
        rows = job_rows(
            conn, statement(spec, "actions/observe_jobs", **dead_parts(spec)), {"ids": wanted}
        )
        found = {r.queuetop_given: r for r in rows}
        back = held_by(conn, spec, queue_parts(spec), [i for i in wanted if i not in found])
    except psycopg.Error as exc:
        conn.rollback()
        raise (friendly_error(exc, spec) or exc) from exc
    conn.commit()
    return (
        [found[i].observed() for i in wanted if i in found],
        [Skipped(i, ALREADY_BACK if i in back else NOT_FOUND) for i in wanted if i not in found],
    )


def _next_token(spec: QueueSpec) -> sql.Composable | None:
    """The token a job gets back with: one more (or a fresh uuid); None keeps it."""
    column = spec.columns.real("lease_token")
    kind = spec.column_types.get(column or "", "")
    if not column or kind.startswith("timestamp"):
        return None
    if kind.startswith(INTEGER_TYPES):
        return sql.SQL("t.{} + 1").format(sql.Identifier(column))
    if kind == "uuid":
        return sql.SQL("gen_random_uuid()")
    raise UserError(
        f"cannot advance lease token column {column!r} of type {kind or '?'}: "
        "queuetop advances integer and uuid tokens; fix lease_token in the spec"
    )


def retry_plan(conn: psycopg.Connection, spec: QueueSpec) -> tuple[sql.Composed, str, str]:
    """The statement, the ready value the jobs get, and what it changes, in words."""
    dead = _dead_or_refuse(spec)
    cols, ident = spec.columns, sql.Identifier
    ready = ready_value(spec)
    insertable = [
        r[0]
        for r in conn.execute(
            queries.load("actions/get_insertable_columns"),
            {"schema": spec.table.schema or "public", "table": spec.table.name},
        ).fetchall()
    ]
    columns = [c for c in spec.column_types if c in insertable]
    status_type = sql.SQL(spec.column_types.get(str(cols.status), "text"))
    cleared = {cols.real("lease_until")} | (
        {cols.real("worker"), cols.real("worker_pid")} if not spec.worker_element else set()
    )
    token = _next_token(spec)
    values = []
    for c in columns:
        if c == cols.status:
            values.append(sql.SQL("%(to_status)s::{}").format(status_type))
        elif c in cleared:
            values.append(sql.SQL("NULL"))
        elif c == cols.real("lease_token") and token is not None:
            values.append(token)
        else:
            values.append(sql.SQL("t.{}").format(ident(c)))
    stmt = statement(
        spec,
        "actions/do_retry_dead",
        **queue_parts(spec),
        dead_table=ident(*dead.parts()),
        moved_columns=sql.SQL(", ").join(sql.SQL("t.{}").format(ident(c)) for c in columns),
        queue_columns=sql.SQL(", ").join(ident(c) for c in columns),
        select_columns=sql.SQL(", ").join(values),
    )
    named = sorted(c for c in cleared if c)
    changes = (
        f"moved back from {dead} as {ready!r}"
        + (f"; {', '.join(named)} cleared" if named else "")
        + ("; lease token advanced" if token is not None else "")
    )
    return stmt, ready, changes


def retry_dead(
    conn: psycopg.Connection,
    spec: QueueSpec,
    observed: Sequence[ObservedJob],
    *,
    audit: AuditSink,
    reason: str | None = None,
    dry_run: bool = False,
) -> ActionResult:
    """Back to ready from the dead-letter table, each job only while still as observed there."""
    seen = {o.id: o for o in observed}
    id_type = spec.column_types.get(spec.columns.id, "text")
    if not seen:
        return ActionResult(ACTION, dry_run=dry_run, id_type=id_type)
    spec = resolve_writes(conn, spec, ACTION)  # a guessed ready value: the table's own
    with audited_transaction(conn, spec, audit):
        dead = _dead_or_refuse(spec)
        require_privileges(conn, dead, ("DELETE",))
        require_privileges(conn, spec.table, ("INSERT",))
        stmt, ready, _ = retry_plan(conn, spec)
        ids = list(seen)
        parts = dead_parts(spec)
        locked = {
            r.queuetop_given: r
            for r in job_rows(conn, statement(spec, "actions/lock_jobs", **parts), {"ids": ids})
        }
        back = held_by(conn, spec, queue_parts(spec), ids)
        absent = [i for i in ids if i not in locked]
        present = held_by(conn, spec, parts, absent)
        skipped = [
            Skipped(i, ALREADY_BACK if i in back else LOCKED if i in present else NOT_FOUND)
            for i in absent
        ]
        targets = [seen[i] for i in ids if i in locked]
        changed = _apply(conn, stmt, ready, targets)
        skipped += [
            Skipped(o.id, ALREADY_BACK if o.id in back else CHANGED)
            for o in targets
            if o.id not in changed
        ]
        wrote = written(spec, ready, (locked[i].status for i in ids if i in changed))
        result = changed_result(ACTION, ids, changed, skipped, dry_run, id_type, wrote)
        if dry_run:
            conn.rollback()
            return result
        audit.record(
            conn,
            ACTION,
            str(spec.table),
            reason,
            _entries(ready, dead, locked, changed, result.skipped, seen),
        )
    commit(conn, audit)
    return result


def _apply(
    conn: psycopg.Connection, stmt: sql.Composed, ready: str, targets: list[ObservedJob]
) -> dict[str, Changed]:
    if not targets:
        return {}
    params = {
        "ids": [o.id for o in targets],
        "statuses": [o.status for o in targets],
        "workers": [o.worker for o in targets],
        "tokens": [o.lease_token for o in targets],
        "to_status": ready,
    }
    return run_guarded(conn, stmt, params)


def _entries(
    ready: str,
    dead: TableName,
    locked: dict[str, JobRow],
    changed: dict[str, Changed],
    skipped: tuple[Skipped, ...],
    seen: dict[str, ObservedJob],
) -> list[AuditEntry]:
    return [
        AuditEntry(
            target=row.id,
            from_state={**locked[given].as_state(), "table": str(dead)},
            to_state=ready,
            outcome="changed",
            detail={"new_lease_token": row.new_token, "from_table": str(dead)},
        )
        for given, row in changed.items()
    ] + skipped_entries(skipped, locked, seen)
