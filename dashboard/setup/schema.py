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
    "setup/create_demo_started_index",
    "setup/create_demo_finished_index",
    "setup/create_demo_dead_table",
)
AUDIT_STATEMENTS = ("setup/create_audit_schema", "setup/create_audit_table")
# Columns later releases added to the demo tables: (table, column, the statement adding it).
DEMO_UPGRADES = (
    ("queuetop_demo.jobs", "worker_pid", "setup/add_demo_worker_pid"),
    ("queuetop_demo.jobs_dead", "worker_pid", "setup/add_demo_dead_worker_pid"),
)


def init_audit(conn: psycopg.Connection) -> None:
    """Create queuetop.audit_log if absent, in one transaction."""
    with conn.transaction():
        for name in AUDIT_STATEMENTS:
            conn.execute(queries.load(name))


def init_demo(conn: psycopg.Connection, reset: bool = False) -> int:
    """Create the demo queue, its dead-letter table and the audit table; return its job count.

    One transaction: a failure leaves nothing half-made.
    """
    try:
        with conn.transaction():
            if reset:
                conn.execute(queries.load("setup/drop_demo_schema"))
            for name in DEMO_STATEMENTS + AUDIT_STATEMENTS:
                conn.execute(queries.load(name))
            for name in missing_upgrades(conn):  # a demo queue an older queuetop made
                conn.execute(queries.load(name))
            return conn.execute(queries.load("setup/count_demo_jobs")).fetchone()[0]
    except errors.LockNotAvailable:
        raise UserError(
            "the demo queue predates its worker_pid column and is in use, so it could not "
            "be added; stop what runs on it (the demo, queuetop load) and run "
            "'queuetop init-demo' again, or 'queuetop init-demo --reset' (a new empty queue)"
        ) from None


def missing_upgrades(conn: psycopg.Connection) -> list[str]:
    """The statements adding the columns an older demo table lacks (none for a new one):
    its ALTER takes a lock the workers would wait behind, so only when it is missing."""
    needed = []
    for table, column, statement in DEMO_UPGRADES:
        found = config.resolve_table(conn, config.parse_table_name(table))
        if found is None:
            continue
        columns = {
            r[0] for r in conn.execute(queries.load("config/get_columns"), {"oid": found[1]})
        }
        if column not in columns:
            needed.append(statement)
    return needed


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
        current = present and not missing_upgrades(conn)
        database, role = conn.info.dbname, conn.info.user
    if current:
        return
    try:
        with db.connect_admin(dsn) as conn:
            init_demo(conn)
    except errors.InsufficientPrivilege as exc:
        first = (str(exc).strip().splitlines() or ["permission denied"])[0]
        if present:
            raise UserError(
                f"the demo queue {spec.table} predates its worker_pid column (the liveness of "
                f"its workers) and role {role} may not add it ({first}); run 'queuetop "
                "init-demo' once as its owner, or 'queuetop init-demo --reset'"
            ) from None
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
