"""Every grant an action lacks, named at once.

Checked one by one, a least-privilege role learns its missing grants one
refusal at a time (the audit table, then UPDATE on the queue, then INSERT on
the dead-letter table). These functions collect all of them first, so that
one refusal names the whole GRANT block.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
from psycopg.rows import dict_row

import queries
from dashboard.audit.writers import (
    AUDIT_SCHEMA,
    AUDIT_TABLE,
    ENABLE_HINT,
    FileAudit,
    table_privileges,
)
from dashboard.errors import UserError
from dashboard.models import QueueSpec, TableName

AUDIT_NOTE = "or pass --audit-file PATH instead of the audit table grants"


def table_grants(conn: psycopg.Connection, table: TableName, needed: tuple[str, ...]) -> list[str]:
    """The GRANT statements `needed` privileges on `table` lack (schema USAGE included)."""
    privs = table_privileges(conn, table.schema, table.name)
    if privs is None:
        raise UserError(f"table {table} not found; check the queue spec")
    role, grants = privs["role"], []
    if not privs["can_use_schema"]:
        grants.append(f"GRANT USAGE ON SCHEMA {table.schema or 'public'} TO {role}")
    missing = [p for p in needed if not privs[f"can_{p.lower()}"]]
    if missing:
        grants.append(f"GRANT {', '.join(missing)} ON {table} TO {role}")
    return grants


def audit_grants(conn: psycopg.Connection, audit_file: str | Path | None) -> list[str]:
    """What the audit trail lacks: nothing with a writable --audit-file or audit table."""
    if audit_file:
        try:
            FileAudit(audit_file)  # opens it for appending, as the action will
        except UserError as exc:
            return [str(exc)]
        return []
    privs = table_privileges(conn, AUDIT_SCHEMA, AUDIT_TABLE)
    if privs is None:
        return [
            f"no audit trail: the table {AUDIT_SCHEMA}.{AUDIT_TABLE} does not exist; {ENABLE_HINT}"
        ]
    return table_grants(conn, TableName(AUDIT_TABLE, AUDIT_SCHEMA), ("INSERT",))


def job_tables(spec: QueueSpec, action: str) -> list[tuple[TableName, tuple[str, ...]]]:
    """The tables a job action writes, with the privileges it needs on each."""
    dead = spec.policy.dead_letter
    moved = bool(dead and dead.kind == "table" and dead.table)
    if action == "dead-letter" and moved:
        # the move reads back the rows it inserted (RETURNING): SELECT too
        return [(spec.table, ("UPDATE", "DELETE")), (dead.table, ("INSERT", "SELECT"))]
    if action == "retry-dead":  # out of the dead-letter table, back into the queue
        return (
            [(dead.table, ("SELECT", "DELETE")), (spec.table, ("INSERT", "SELECT"))]
            if moved
            else []
        )
    return [(spec.table, ("UPDATE",))]


def signal_grants(conn: psycopg.Connection, pid: int | None = None) -> list[str]:
    """pg_signal_backend, unless this role may signal every session, or the session `pid`
    is its own role's (which needs no grant)."""
    can_signal, role = conn.execute(queries.load("actions/check_signal_rights")).fetchone()
    if can_signal:
        return []
    if pid is not None:
        with conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(queries.load("actions/get_session"), {"pid": pid}).fetchone()
        if row is None or row["user"] in ("", role):  # gone (skipped later), or its own role's
            return []
    return [f"GRANT pg_signal_backend TO {role} (to signal other roles' sessions)"]


def missing_grants(
    conn: psycopg.Connection,
    spec: QueueSpec | None,
    action: str,
    audit_file: str | Path | None,
    pid: int | None = None,
) -> list[str]:
    """Every grant `action` lacks on this connection, the audit trail's included."""
    grants = audit_grants(conn, audit_file)
    if action in ("cancel", "terminate"):
        grants += signal_grants(conn, pid)
    elif spec is not None:
        for table, privileges in job_tables(spec, action):
            grants += table_grants(conn, table, privileges)
    return list(dict.fromkeys(grants))  # one USAGE per schema


def grants_sentence(role: str, action: str, needs: list[str]) -> str:
    """One line: what is missing for `action`, the grants as statements to run."""
    grants = [n for n in needs if n.startswith("GRANT")]
    said = [n for n in needs if not n.startswith("GRANT")]  # e.g. no audit table at all
    if grants:
        text = f"role {role} lacks what {action} needs: {'; '.join(grants)}"
        audit = (f"SCHEMA {AUDIT_SCHEMA} TO", f" {AUDIT_SCHEMA}.{AUDIT_TABLE} TO")
        if any(a in g for g in grants for a in audit):
            text += f" ({AUDIT_NOTE})"
        said.append(text)
    return "; ".join(said)


def require_grants(
    conn: psycopg.Connection,
    spec: QueueSpec | None,
    action: str,
    audit_file: str | Path | None,
    pid: int | None = None,
) -> None:
    """Refuse before anything happens, naming every missing grant at once."""
    grants = missing_grants(conn, spec, action, audit_file, pid)
    conn.rollback()
    if grants:
        raise UserError(grants_sentence(conn.info.user, action, grants))
