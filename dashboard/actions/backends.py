"""Guarded cancel and terminate of a backend, audited.

A pid alone is not a session: PostgreSQL reuses pids. An action names the
pid *and* the backend start it observed (and, when known, the state and the
transaction start), and the signal is sent by a statement whose WHERE checks
all of them, so a reused pid or a session that moved on is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg import errors
from psycopg.rows import class_row

import queries
from dashboard.actions.results import ActionResult, Skipped
from dashboard.audit.writers import AuditEntry, AuditSink, commit
from dashboard.errors import UserError
from dashboard.observed.records import ObservedSession

SIGNALS = {
    "cancel": ("actions/cancel_backend", "cancelled"),
    "terminate": ("actions/terminate_backend", "terminated"),
}


@dataclass(frozen=True)
class SessionRow:
    pid: int
    backend_start: datetime | None
    backend_type: str
    state: str | None
    xact_start: datetime | None
    user: str
    application_name: str
    query: str
    own: bool

    def as_state(self) -> dict[str, object]:
        return {
            "pid": self.pid,
            "backend_start": self.backend_start,
            "backend_type": self.backend_type,
            "state": self.state,
            "xact_start": self.xact_start,
            "user": self.user,
            "application_name": self.application_name,
            "query": self.query,
        }


def _look(conn: psycopg.Connection, pid: int) -> SessionRow | None:
    with conn.cursor(row_factory=class_row(SessionRow)) as cur:
        return cur.execute(queries.load("actions/get_session"), {"pid": pid}).fetchone()


def observe_session(conn: psycopg.Connection, pid: int) -> ObservedSession | None:
    """The session behind `pid` now, as the CLI's observed state; None if there is none."""
    row = _look(conn, pid)
    conn.commit()
    if row is None or row.backend_start is None:
        return None
    return ObservedSession(
        pid=row.pid, backend_start=row.backend_start, state=row.state, xact_start=row.xact_start
    )


def _same_state(seen: str | None, now: str | None) -> bool:
    return (
        seen is None
        or now == seen
        or (seen == "idle in transaction" and now == "idle in transaction (aborted)")
    )


def session_skip_reason(seen: ObservedSession, now: SessionRow | None) -> str | None:
    """Why this session must not be signalled, or None if it is still the one observed."""
    if now is None:
        return "session gone"
    if now.own:
        return "own session"
    if now.backend_type != "client backend":  # autovacuum, walsender, checkpointer...
        return f"not a client session: {now.backend_type or 'unknown'}"
    if now.backend_start is None:
        return "cannot see this session's details (GRANT pg_monitor or pg_read_all_stats)"
    if now.backend_start != seen.backend_start:
        return "pid reused: backend start differs"
    if not _same_state(seen.state, now.state):
        return f"session moved on: now {now.state or 'unknown'}"
    if seen.xact_start is not None and now.xact_start != seen.xact_start:
        return "session moved on: another transaction"
    return None


def cancel(
    conn: psycopg.Connection,
    observed: ObservedSession,
    *,
    audit: AuditSink,
    reason: str | None = None,
    dry_run: bool = False,
) -> ActionResult:
    """Cancel the backend's current query (pg_cancel_backend), if it is still as observed."""
    return _signal(conn, "cancel", observed, audit, reason, dry_run)


def terminate(
    conn: psycopg.Connection,
    observed: ObservedSession,
    *,
    audit: AuditSink,
    reason: str | None = None,
    dry_run: bool = False,
) -> ActionResult:
    """End the backend (pg_terminate_backend): its open transaction rolls back."""
    return _signal(conn, "terminate", observed, audit, reason, dry_run)


def _signal(
    conn: psycopg.Connection,
    action: str,
    seen: ObservedSession,
    audit: AuditSink,
    reason: str | None,
    dry_run: bool,
) -> ActionResult:
    statement, verb = SIGNALS[action]
    target = str(seen.pid)
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        conn.rollback()
    try:
        now = _look(conn, seen.pid)
        why = session_skip_reason(seen, now)
        if why or dry_run:
            result = ActionResult(
                action,
                changed=() if why else (target,),
                skipped=(Skipped(target, why),) if why else (),
                dry_run=dry_run,
            )
            if why and not dry_run:
                audit.record(
                    conn,
                    action,
                    None,
                    reason,
                    [
                        AuditEntry(
                            target,
                            now.as_state() if now else None,
                            None,
                            "skipped",
                            {"skip_reason": why, "observed": seen.__dict__},
                        )
                    ],
                )
                commit(conn, audit)
            else:
                conn.rollback()
            return result
        # The record goes first: a signal cannot be rolled back, the record can.
        audit.record(
            conn, action, None, reason, [AuditEntry(target, now.as_state(), verb, "changed", None)]
        )
        conn.execute(queries.load("actions/clear_stats_snapshot"))
        row = conn.execute(
            queries.load(statement),
            {
                "pid": seen.pid,
                "backend_start": seen.backend_start,
                "state": seen.state,
                "xact_start": seen.xact_start,
            },
        ).fetchone()
        if not (row and row[0]):
            conn.rollback()
            audit.finish("rolled back")
            return ActionResult(action, skipped=(Skipped(target, "session moved on"),))
    except errors.InsufficientPrivilege as exc:
        conn.rollback()
        audit.finish("rolled back")
        first = (str(exc).strip().splitlines() or ["permission denied"])[0]
        raise UserError(
            f"role {conn.info.user} may not {action} backend {seen.pid} ({first}); "
            f"GRANT pg_signal_backend TO {conn.info.user} (sessions of a superuser can only be "
            "signalled by a superuser)"
        ) from exc
    except BaseException:
        conn.rollback()
        audit.finish("rolled back")
        raise
    # The signal is sent; only the table sink's row waits for this commit.
    commit(conn, audit)
    return ActionResult(action, changed=(target,))
