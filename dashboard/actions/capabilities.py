"""Which actions this connection may take, and why not: for a UI to disable them up front."""

from __future__ import annotations

from pathlib import Path

import psycopg

from dashboard.actions import writes
from dashboard.actions.grants import grants_sentence, missing_grants
from dashboard.actions.statements import dead_status
from dashboard.errors import UserError
from dashboard.models import QueueSpec

ACTIONS = ("requeue", "dead-letter", "retry-dead", "cancel", "terminate")


def capabilities(
    conn: psycopg.Connection,
    spec: QueueSpec,
    *,
    read_only: bool = False,
    audit_file: str | Path | None = None,
) -> dict[str, str | None]:
    """action -> None if allowed, else one line saying why not and what to do (see
    `checked`)."""
    return checked(conn, spec, read_only=read_only, audit_file=audit_file)[1]


def checked(
    conn: psycopg.Connection,
    spec: QueueSpec,
    *,
    read_only: bool = False,
    audit_file: str | Path | None = None,
) -> tuple[QueueSpec, dict[str, str | None]]:
    """The spec with the state values its actions write named (writes.py: a guessed one
    only when the table holds it), and action -> None if allowed, else one line saying
    why not and what to do.

    The actions check again when they run; this is only so that a UI can say why
    a binding is disabled before the operator presses it, with every missing grant
    at once. Signals to backends of one's own role need no grant; cancel/terminate
    report pg_signal_backend as missing when other roles' sessions are out of reach,
    and the action itself says the exact refusal.
    """
    if read_only:
        return spec, dict.fromkeys(ACTIONS, "read-only mode: actions are disabled")
    spec, refused = writes.resolve_all(conn, spec)
    reasons: dict[str, str | None] = {}
    for action in ACTIONS:
        if action == "retry-dead" and not _dead_letter_table(spec):
            # no dead-letter table: no job is ever offered for a retry from one (the action
            # itself refuses), so the header does not call it off
            reasons[action] = None
            continue
        if action in refused:  # a guessed state value the table does not confirm
            reasons[action] = refused[action]
            continue
        if action == "dead-letter" and not _dead_letter_table(spec):
            try:
                dead_status(spec)
            except UserError as exc:
                reasons[action] = str(exc)
                continue
        grants = missing_grants(conn, spec, action, audit_file)
        reasons[action] = grants_sentence(conn.info.user, action, grants) if grants else None
    conn.rollback()
    return spec, reasons


def _dead_letter_table(spec: QueueSpec) -> bool:
    policy = spec.policy.dead_letter
    return bool(policy and policy.kind == "table" and policy.table)
