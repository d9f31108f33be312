"""Guarded requeue and dead-letter of jobs: one short transaction each, audited.

The caller passes the state the operator observed (ObservedJob); a job changes
only if it is still in that state, and every other job comes back in
`skipped` with its reason. Rows a worker holds locked right now are skipped
(SKIP LOCKED), so an action never waits behind a worker.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg
from psycopg import errors, sql
from psycopg.rows import class_row

from dashboard.actions.guards import LOCKED, NOT_FOUND, JobRow, require_privileges, skip_reason
from dashboard.actions.results import ActionResult, Skipped
from dashboard.actions.statements import Plan, dead_letter_plan, job_parts, requeue_plan
from dashboard.actions.writes import resolve as resolve_writes
from dashboard.audit.writers import AuditEntry, AuditSink, commit, os_user
from dashboard.errors import UserError
from dashboard.models import QueueSpec
from dashboard.observed.records import ObservedJob
from dashboard.queue_sql.dead_table import ALREADY_DEAD, in_dead_table
from dashboard.queue_sql.parts import statement


class BadJobId(UserError):
    """An id the id column's type cannot take ('abc' for a bigint id)."""


_INTEGER_BOUNDS = {"smallint": 2**15, "integer": 2**31, "bigint": 2**63}


def _id_problem(kind: str, token: str) -> str | None:
    """Why `token` cannot be a value of SQL type `kind`, for the types worth checking early."""
    if kind in _INTEGER_BOUNDS:
        if not re.fullmatch(r"[+-]?[0-9]+", token):
            return "not a whole number"
        bound = _INTEGER_BOUNDS[kind]
        return None if -bound <= int(token) < bound else f"out of range for {kind}"
    if kind.startswith("numeric"):
        return None if re.fullmatch(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)", token) else "not a number"
    if kind == "uuid":
        try:
            uuid.UUID(token)
        except ValueError:
            return "not a uuid"
    return None  # text ids take anything; other types are left to the server's cast


def job_id_problem(spec: QueueSpec, ids: Sequence[str]) -> str | None:
    """One line naming the ids the id column cannot take, or None (nothing is read).

    Lets the dashboard keep the look-up open on a typo instead of failing in the database.
    """
    kind = spec.column_types.get(spec.columns.id, "")
    bad = [(token, why) for token in ids if (why := _id_problem(kind, token))]
    if not bad:
        return None
    named = ", ".join(f"{token!r} ({why})" for token, why in bad)
    return f"bad job id{'s' if len(bad) > 1 else ''} {named}: ids of {spec.table} are {kind}"


def _job_params(spec: QueueSpec, ids: list[str]) -> dict[str, object]:
    return {"ids": ids}


def job_rows(
    conn: psycopg.Connection, statement: sql.Composable, params: dict[str, object]
) -> list[JobRow]:
    with conn.cursor(row_factory=class_row(JobRow)) as cur:
        return cur.execute(statement, params).fetchall()


def friendly_error(exc: psycopg.Error, spec: QueueSpec) -> UserError | None:
    """A one-line error for the database failures an operator can do something about."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if isinstance(
        exc,
        (
            errors.InvalidTextRepresentation,
            errors.InvalidParameterValue,
            errors.NumericValueOutOfRange,
            errors.InvalidDatetimeFormat,
            errors.DatetimeFieldOverflow,
        ),
    ):
        id_type = spec.column_types.get(spec.columns.id, "its type")
        return BadJobId(f"bad job id: {first}; ids of {spec.table} are {id_type}")
    if isinstance(exc, errors.LockNotAvailable):
        return UserError(
            f"{spec.table} is locked by another session (not a worker's row lock: "
            f"those are skipped); nothing changed, try again: {first}"
        )
    if isinstance(exc, errors.ReadOnlySqlTransaction):
        return UserError(f"the server refuses writes here ({first}); connect to the primary")
    if isinstance(exc, errors.InsufficientPrivilege):
        return UserError(
            f"permission denied: {first}; grant the privilege named there to "
            "this role or use one that has it"
        )
    if isinstance(exc, errors.CheckViolation) and exc.diag.table_name == spec.table.name:
        # a CHECK refuses a value, not a key: often the state value written is one the
        # table's CHECK does not list
        return UserError(
            f"{spec.table} refused the change through its CHECK constraint "
            f"{exc.diag.constraint_name} ({first}): the value written is one it forbids; "
            "map the role to a value the constraint allows (--ROLE-values); nothing changed"
        )
    if isinstance(exc, errors.UniqueViolation) and exc.diag.table_name == spec.table.name:
        return UserError(
            f"{spec.table} refused the change through its constraint "
            f"{exc.diag.constraint_name} ({first}): another job holds the same key; "
            "nothing changed"
        )
    if isinstance(exc, errors.UniqueViolation):
        return UserError(
            f"dead-letter table already holds one of these jobs ({first}); nothing changed"
        )
    return None


def observe_jobs(
    conn: psycopg.Connection, spec: QueueSpec, ids: Iterable[str]
) -> tuple[list[ObservedJob], list[Skipped]]:
    """What the operator sees now for these ids (a plain read, no lock), and the ids not found.

    This is how the CLI gets an observed state; the TUI takes it from its snapshot.
    """
    wanted = list(dict.fromkeys(str(i) for i in ids))
    observe = statement(spec, "actions/observe_jobs", **job_parts(spec))
    try:
        rows = job_rows(conn, observe, _job_params(spec, wanted))
        found = {r.queuetop_given: r for r in rows}
        moved = in_dead_table(conn, spec, [i for i in wanted if i not in found])
    except psycopg.Error as exc:
        conn.rollback()
        raise (friendly_error(exc, spec) or exc) from exc
    conn.commit()
    return (
        [found[i].observed() for i in wanted if i in found],
        [Skipped(i, ALREADY_DEAD if i in moved else NOT_FOUND) for i in wanted if i not in found],
    )


@dataclass(frozen=True)
class Changed:
    """A row the guarded statement changed, as its RETURNING gives it."""

    queuetop_given: str
    id: str
    new_token: str | None


def run_guarded(
    conn: psycopg.Connection, statement: sql.Composable, params: dict[str, object]
) -> dict[str, Changed]:
    """Run a guarded statement; the rows it changed, by the id the operator gave."""
    with conn.cursor(row_factory=class_row(Changed)) as cur:
        return {r.queuetop_given: r for r in cur.execute(statement, params).fetchall()}


def changed_result(
    action: str,
    ids: list[str],
    changed: dict[str, Changed],
    skipped: list[Skipped],
    dry_run: bool,
    id_type: str,
    writes: dict[str, object] | None = None,
) -> ActionResult:
    """The result of an action, in the order the ids were given; `writes` holds the
    state_column, from_states and to_state fields (see ActionResult.writes)."""
    return ActionResult(
        action,
        changed=tuple(changed[i].id for i in ids if i in changed),
        skipped=tuple(skipped),
        dry_run=dry_run,
        id_type=id_type,
        detail={
            "new_lease_tokens": {changed[i].id: changed[i].new_token for i in ids if i in changed}
        },
        **(writes or {}),  # type: ignore[arg-type]
    )


def written(
    spec: QueueSpec, to_state: str, from_states: Iterable[object] = ()
) -> dict[str, object]:
    """The ActionResult fields naming what a job action writes."""
    return {
        # a table with role rules has no state column: its state is the rule a row meets
        "state_column": "state" if spec.columns.status is None else str(spec.columns.status),
        "from_states": tuple(dict.fromkeys(str(s) for s in from_states)),
        "to_state": to_state,
    }


def skipped_entries(
    skipped: Iterable[Skipped], locked: dict[str, JobRow], seen: dict[str, ObservedJob]
) -> list[AuditEntry]:
    """Audit entries of the skipped jobs: what they were when locked, what the operator saw."""
    entries = []
    for s in skipped:
        now = locked.get(s.id)
        entries.append(
            AuditEntry(
                target=s.id,
                from_state=now.as_state() if now else None,
                to_state=None,
                outcome="skipped",
                detail={
                    "skip_reason": s.reason,
                    "observed": seen[s.id].__dict__ if s.id in seen else None,
                },
            )
        )
    return entries


@contextmanager
def audited_transaction(
    conn: psycopg.Connection, spec: QueueSpec, audit: AuditSink
) -> Iterator[None]:
    """An action's transaction: rolled back (and the audit told so) on any failure, a
    database error an operator can act on turned into one line."""
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        conn.rollback()  # an action is its own transaction, never part of the caller's
    try:
        yield
    except psycopg.Error as exc:
        conn.rollback()
        audit.finish("rolled back")
        raise (friendly_error(exc, spec) or exc) from exc
    except BaseException:
        conn.rollback()
        audit.finish("rolled back")
        raise


def requeue(
    conn: psycopg.Connection,
    spec: QueueSpec,
    observed: Sequence[ObservedJob],
    *,
    audit: AuditSink,
    force: bool = False,
    reason: str | None = None,
    dry_run: bool = False,
) -> ActionResult:
    """Back to ready: worker and lease cleared, attempts kept, lease token advanced.

    Only running (past its lease unless `force`) or failed jobs still as observed change.
    """
    spec = resolve_writes(conn, spec, "requeue")  # a guessed ready value: the table's own
    return _run(conn, spec, observed, requeue_plan(spec, force), audit, reason, dry_run, force)


def dead_letter(
    conn: psycopg.Connection,
    spec: QueueSpec,
    observed: Sequence[ObservedJob],
    *,
    audit: AuditSink,
    reason: str,
    force: bool = False,
    dry_run: bool = False,
) -> ActionResult:
    """Per policy.dead_letter: a state change (reason into last_error) or a move to the
    dead-letter table, in one statement. Ready, failed, or running past its lease."""
    if not reason or not reason.strip():
        raise UserError("dead-letter needs a reason: pass --reason TEXT")
    spec = resolve_writes(conn, spec, "dead-letter")  # a guessed dead value: the table's own
    plan = dead_letter_plan(conn, spec, force, reason, f"{conn.info.user} ({os_user()})")
    return _run(conn, spec, observed, plan, audit, reason, dry_run, force)


def _run(
    conn: psycopg.Connection,
    spec: QueueSpec,
    observed: Sequence[ObservedJob],
    plan: Plan,
    audit: AuditSink,
    reason: str | None,
    dry_run: bool,
    force: bool,
) -> ActionResult:
    seen = {o.id: o for o in observed}  # one entry per id, the last observation wins
    id_type = spec.column_types.get(spec.columns.id, "text")
    if not seen:
        return ActionResult(
            plan.action, dry_run=dry_run, id_type=id_type, **written(spec, plan.to_state)
        )
    with audited_transaction(conn, spec, audit):
        for table, privileges in plan.needed:
            require_privileges(conn, table, privileges)
        ids = list(seen)
        locked = {
            r.queuetop_given: r
            for r in job_rows(
                conn,
                statement(spec, "actions/lock_jobs", **job_parts(spec)),
                _job_params(spec, ids),
            )
        }
        skipped = _unlocked(conn, spec, [i for i in ids if i not in locked])
        targets = [seen[i] for i in ids if i in locked]
        changed = _apply(conn, plan, targets)
        if plan.verify:
            _verify_roles(conn, spec, plan, list(changed))
        skipped += [
            Skipped(o.id, skip_reason(spec, o, locked[o.id], plan.from_roles, force, plan.action))
            for o in targets
            if o.id not in changed
        ]
        froms = (locked[i].status for i in ids if i in changed)
        result = changed_result(
            plan.action,
            ids,
            changed,
            skipped,
            dry_run,
            id_type,
            written(spec, plan.to_state, froms),
        )
        if dry_run:
            conn.rollback()
            return result
        audit.record(
            conn,
            plan.action,
            str(spec.table),
            reason,
            _entries(plan, locked, changed, result.skipped, seen),
        )
    commit(conn, audit)
    return result


def _apply(conn: psycopg.Connection, plan: Plan, targets: list[ObservedJob]) -> dict[str, Changed]:
    """Run the guarded statement on the rows this transaction holds locked."""
    if not targets:
        return {}
    params = {
        **plan.params,
        "ids": [o.id for o in targets],
        "statuses": [o.status for o in targets],
        "workers": [o.worker for o in targets],
        "tokens": [o.lease_token for o in targets],
    }
    return run_guarded(conn, plan.statement, params)


def _verify_roles(conn: psycopg.Connection, spec: QueueSpec, plan: Plan, ids: list[str]) -> None:
    """Each changed row read back in the same transaction: in the plan's target state, or
    a UserError (the caller rolls back, so nothing is changed)."""
    if not ids:
        return
    rows = job_rows(
        conn, statement(spec, "actions/observe_jobs", **job_parts(spec)), _job_params(spec, ids)
    )
    wrong = [r for r in rows if r.status != plan.to_state]
    if wrong:
        seen = ", ".join(f"{r.queuetop_given} ({r.status or 'no role'})" for r in wrong)
        raise UserError(
            f"{plan.action}: after writing {plan.changes}, job(s) {seen} are not in "
            f"'{plan.to_state}', so nothing was changed; pin the roles "
            "(--ROLE-when) so that one write can reach it"
        )


def _unlocked(conn: psycopg.Connection, spec: QueueSpec, ids: list[str]) -> list[Skipped]:
    """Ids the lock step did not get: locked by someone right now, moved to the dead-letter
    table, or gone."""
    if not ids:
        return []
    present = {
        r.queuetop_given
        for r in job_rows(
            conn, statement(spec, "actions/observe_jobs", **job_parts(spec)), _job_params(spec, ids)
        )
    }
    moved = in_dead_table(conn, spec, [i for i in ids if i not in present])
    return [
        Skipped(i, LOCKED if i in present else ALREADY_DEAD if i in moved else NOT_FOUND)
        for i in ids
    ]


def _entries(
    plan: Plan,
    locked: dict[str, JobRow],
    changed: dict[str, Changed],
    skipped: tuple[Skipped, ...],
    seen: dict[str, ObservedJob],
) -> list[AuditEntry]:
    return [
        AuditEntry(
            target=row.id,
            from_state=locked[given].as_state(),
            to_state=plan.to_state,
            outcome="changed",
            detail={"new_lease_token": row.new_token},
        )
        for given, row in changed.items()
    ] + skipped_entries(skipped, locked, seen)
