"""Schema setup: the demo queue (`init-demo`) and the audit table (`init-audit`)."""

from __future__ import annotations

import re

import psycopg
from psycopg import errors

import queries
from dashboard import config, db
from dashboard.errors import UserError

DEMO_STATEMENTS = (
    "setup/create_demo_schema",
    "setup/create_demo_jobs",
    "setup/create_demo_ready_index",
    "setup/create_demo_running_index",
    "setup/create_demo_dead_table",
)
AUDIT_STATEMENTS = ("setup/create_audit_schema", "setup/create_audit_table")


def init_audit(conn: psycopg.Connection) -> None:
    """Create queuetop.audit_log if absent, in one transaction."""
    with conn.transaction():
        for name in AUDIT_STATEMENTS:
            conn.execute(queries.load(name))


def init_demo(conn: psycopg.Connection, reset: bool = False) -> int:
    """Create the demo queue, its dead-letter table and the audit table; return its job count.

    One transaction: a failure leaves nothing half-made.
    """
    with conn.transaction():
        if reset:
            conn.execute(queries.load("setup/drop_demo_schema"))
        for name in DEMO_STATEMENTS + AUDIT_STATEMENTS:
            conn.execute(queries.load(name))
        return conn.execute(queries.load("setup/count_demo_jobs")).fetchone()[0]


def ensure_demo(dsn: str) -> None:
    """Create the demo schema unless the demo queue and its dead-letter table exist.

    Checked first with a read, so that a role without CREATE on the database can run the
    demo and the load generator on a demo queue someone else created; where it must be
    created and cannot be, the error names the grant (or the one-time init-demo).
    """
    spec = config.load_preset(config.DEFAULT_PRESET)
    dead = spec.policy.dead_letter.table if spec.policy.dead_letter else None
    with db.connect_monitor(dsn) as conn:
        present = config.resolve_table(conn, spec.table) is not None and (
            dead is None or config.resolve_table(conn, dead) is not None
        )
        database, role = conn.info.dbname, conn.info.user
    if present:
        return
    try:
        with db.connect_admin(dsn) as conn:
            init_demo(conn)
    except errors.InsufficientPrivilege as exc:
        first = (str(exc).strip().splitlines() or ["permission denied"])[0]
        raise UserError(
            f"the demo queue {spec.table} does not exist and role {role} may not create it "
            f"({first}); GRANT CREATE ON DATABASE {_name(database)} TO {_name(role)}, or run "
            "'queuetop init-demo' once as a role that may (e.g. the database owner)"
        ) from None


def _name(identifier: str) -> str:
    """An identifier as one would type it in a GRANT: quoted only where it must be."""
    if re.fullmatch(r"[a-z_][a-z0-9_$]*", identifier):
        return identifier
    return '"' + identifier.replace('"', '""') + '"'
