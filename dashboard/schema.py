"""Schema setup: the demo queue (`init-demo`) and the audit table (`init-audit`)."""

from __future__ import annotations

import psycopg

import queries

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
