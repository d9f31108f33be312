"""What the monitoring role may not read besides the queue table, each with its GRANT.

A managed service's watching role has pg_monitor and SELECT on the queue; a dead-letter
table, a workers table or a history table it was not granted must cost only what it
serves (the dead-letter rows, the stale leases, the finished counts), never the snapshot.
Checked once per connection, before the poll reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg import sql

import queries
from dashboard.models import QueueSpec, TableName


@dataclass(frozen=True)
class Unreadable:
    """The auxiliary tables this role cannot read, and the lines saying what it costs."""

    dead_table: bool = False
    workers: bool = False
    history: bool = False
    notes: tuple[str, ...] = ()


def missing_grants(conn: psycopg.Connection, table: TableName) -> str | None:
    """The GRANTs that let this role read `table`, as one would paste them; None when it
    can (or when the table is missing: validation reports that)."""
    row = conn.execute(
        queries.load("monitor/get_table_readable"), {"schema": table.schema, "table": table.name}
    ).fetchone()
    if row is None or all(row):
        return None
    role = str(TableName(conn.info.user))  # quoted only where it must be
    schema_usage, table_select = row
    grants = [] if schema_usage else [f"GRANT USAGE ON SCHEMA {TableName(table.schema)} TO {role}"]
    if not table_select:
        grants.append(f"GRANT SELECT ON {table} TO {role}")
    return "; ".join(grants)


def check(conn: psycopg.Connection, spec: QueueSpec) -> Unreadable:
    """Which of the spec's dead-letter, workers and history tables this role cannot read,
    each with the line naming what it costs and the GRANT that fixes it."""
    dead = spec.policy.dead_letter
    tables = {
        "dead_table": (
            dead.table if dead and dead.kind == "table" else None,
            "the dead-letter table",
        ),
        "workers": (spec.workers.table if spec.workers else None, "the workers table"),
        "history": (spec.history.table if spec.history else None, "the history table"),
    }
    costs = {
        "dead_table": "dead-letter rows not counted",
        "workers": "stale leases unknown",
        "history": "finished jobs not counted",
    }
    notes, found = [], {}
    for key, (table, what) in tables.items():
        grants = missing_grants(conn, table) if table is not None else None
        found[key] = grants is not None
        if grants is not None:
            notes.append(
                f"{costs[key]}: role {conn.info.user} may not read {what} {table}; {grants}"
            )
    return Unreadable(**found, notes=tuple(notes))


def without_workers(parts: dict[str, sql.Composable]) -> dict[str, sql.Composable]:
    """The queue statements' parts with liveness unknown: nothing read from the workers
    table, no job called stale (rather than every job, as a missing heartbeat would)."""
    return parts | {
        "worker_seen": sql.SQL("NULL::timestamptz"),
        "worker_alive": sql.SQL("NULL::boolean"),
        "expires_at": sql.SQL("NULL::timestamptz"),
        "is_stale": sql.SQL("NULL::boolean"),
    }
