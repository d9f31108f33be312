"""Doctor's latency check: the timestamps whose window no index can serve, and the index
that would (asked of the planner with sequential scans priced out, never of the rows)."""

from __future__ import annotations

import psycopg
from psycopg import sql

from dashboard.doctor.findings import Finding
from dashboard.doctor.indexes import _free_name
from dashboard.models import Derived, QueueSpec, TableName
from dashboard.monitor import latency
from dashboard.queue_sql.parts import queue_parts, table_query

WHAT = {
    "started": ("started", "wait times (start minus due time)"),
    "finished": ("finished", "run times and the finished and failed jobs"),
}


def _column(spec: QueueSpec, side: str) -> tuple[TableName, str | Derived | None]:
    """The table and the timestamp a side's range is on."""
    if side == "finished" and spec.history is not None:
        return spec.history.table, spec.history.finished_at
    value = spec.columns.started_at if side == "started" else spec.columns.finished_at
    return spec.table, value


def create_index(conn: psycopg.Connection, table: TableName, column: str) -> str:
    """CREATE INDEX CONCURRENTLY … (column) WHERE column IS NOT NULL, as text: the rows not
    started (or not finished) yet stay out of it."""
    name = _free_name(conn, table.schema, f"{table.name}_{column}_idx")
    stmt = sql.SQL(
        "CREATE INDEX CONCURRENTLY {name} ON {table} ({column}) WHERE {column} IS NOT NULL;"
    )
    return stmt.format(
        name=sql.Identifier(name),
        table=sql.Identifier(*table.parts()),
        column=sql.Identifier(column),
    ).as_string(conn)


def latency_findings(conn: psycopg.Connection, spec: QueueSpec) -> tuple[list[Finding], list[str]]:
    """One finding per timestamp of the latency window that no index serves (a note where
    no index can: an adapter's derived time, a queue that is a query over several tables)."""
    found = latency.sides(spec)
    if not found.any:
        return [], []
    unserved = latency.unserved_sides(conn, spec, queue_parts(spec), found)
    findings, notes = [], []
    for side in unserved:
        table, column = _column(spec, side)
        verb, serves = WHAT[side]
        if not isinstance(column, str) or (table == spec.table and table_query(spec)):
            notes.append(
                f"latency: the jobs {verb} lately are found by "
                f"{latency.timestamp_of(spec, side)}, which no index of {spec.table} can "
                "serve: that section reads the table whole, paced by the monitor's budget"
            )
            continue
        findings.append(
            Finding(
                "latency_index",
                f"no index finds the jobs {verb} lately (by {column})",
                f"The latency section reads the jobs {verb} in its window for {serves}; with "
                f"no index on {column} it reads all of {table} each time, so the monitor reads "
                "it less often (it says so: paced).\nAn index on "
                f"{column} (without the rows that have none) reads the window's rows alone.",
                create_index(conn, table, column),
            )
        )
    return findings, notes
