"""Stale leases: running jobs past their lease, with whether their worker lives."""

from __future__ import annotations

import psycopg
from psycopg import sql
from psycopg.rows import class_row

from dashboard.models import QueueSpec, StaleLease
from dashboard.monitor.statement_bytes import StatementBytes
from dashboard.queue_sql.parts import state_in, statement

ROW_LIMIT = 1000


def read_stale(
    conn: psycopg.Connection,
    spec: QueueSpec,
    parts: dict[str, sql.Composable],
    statements: StatementBytes,
    ids: list[str] | None = None,
) -> list[StaleLease]:
    """Most overdue first. Through the running values' index, or (after a one-pass count)
    by the ids that count found stale, through the primary key."""
    running, params = state_in(spec, ("running",), parts)
    if ids is not None:
        params["ids"] = ids

    def build() -> sql.Composed:
        where = running
        if ids is not None:
            where = sql.SQL("{} AND {} = ANY (%(ids)s::text[]::{}[])").format(
                running, parts["job_id"], parts["id_type"]
            )
        return statement(spec, "monitor/get_stale_leases", **{**parts, "rows": where})

    # the same statement on every poll (the ids are a parameter): composed once
    stmt = statements.get(conn, ("stale", ids is not None), build)
    with conn.cursor(row_factory=class_row(StaleLease)) as cur:
        return cur.execute(stmt, {**params, "limit": ROW_LIMIT}).fetchall()
