"""Which actions this connection may take, and why not: for a UI to disable them up front."""

from __future__ import annotations

from pathlib import Path

import psycopg

import queries
from dashboard.actions.audit import choose_sink
from dashboard.actions.guards import missing_privileges
from dashboard.actions.statements import dead_status
from dashboard.errors import UserError
from dashboard.models import QueueSpec

ACTIONS = ("requeue", "dead-letter", "retry-dead", "cancel", "terminate")


def capabilities(conn: psycopg.Connection, spec: QueueSpec, *, read_only: bool = False,
                 audit_file: str | Path | None = None) -> dict[str, str | None]:
    """action -> None if allowed, else one line saying why not and what to do.

    The actions check again when they run; this is only so that a UI can say why
    a binding is disabled before the operator presses it. Signals to backends of
    one's own role need no grant, so cancel/terminate are reported as allowed
    then, with the exact refusal left to the action itself.
    """
    if read_only:
        return dict.fromkeys(ACTIONS, "read-only mode: actions are disabled")
    try:
        choose_sink(conn, audit_file)
    except UserError as exc:
        return dict.fromkeys(ACTIONS, str(exc))
    policy = spec.policy.dead_letter
    reasons: dict[str, str | None] = {
        "requeue": missing_privileges(conn, spec.table, ("UPDATE",)),
    }
    if policy and policy.kind == "table" and policy.table:
        reasons["dead-letter"] = (missing_privileges(conn, spec.table, ("UPDATE", "DELETE"))
                                  or missing_privileges(conn, policy.table, ("INSERT",)))
        reasons["retry-dead"] = (missing_privileges(conn, policy.table, ("DELETE",))
                                 or missing_privileges(conn, spec.table, ("INSERT",)))
    else:
        try:
            dead_status(spec)
            reasons["dead-letter"] = missing_privileges(conn, spec.table, ("UPDATE",))
        except UserError as exc:
            reasons["dead-letter"] = str(exc)
        # no dead-letter table: no job is ever offered for a retry from one (the action
        # itself refuses), so the header does not call it off
        reasons["retry-dead"] = None
    can_signal, role = conn.execute(queries.load("actions/check_signal_rights")).fetchone()
    signal = None if can_signal else (
        f"role {role} may signal only its own sessions; GRANT pg_signal_backend TO {role}")
    reasons.update(cancel=signal, terminate=signal)
    conn.rollback()
    return reasons
