"""Finished states (done, failed, dead): counted exactly while the table is small or on
demand, estimated from the catalog above the limit, or read from a history table.

The estimate: the live rows the server counts (pg_stat n_live_tup, else reltuples)
minus the exact count of the active rows, split among the other values as the
planner's statistics split them, the way the planner estimates `state = value`:
a most-common value's frequency, else the remainder spread over the values the
statistics did not list (so a rare state does not read 0 while the statistics
say something is left).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

import queries
from dashboard.models import FINISHED_ROLES, NO_STATE, QueueSpec, TableName
from dashboard.monitor.budget import Section
from dashboard.monitor.statement_bytes import StatementBytes
from dashboard.queue_sql.parts import statement


@dataclass
class FinishedRead:
    """One read of the finished section: values exactly ('exact', {value: rows}) or the
    statistics to estimate them ('stats', Statistics), or None where the one pass counted
    them; and the rows of the dead-letter table, when dead jobs are moved to one."""

    values: tuple[str, Any] | None = None
    dead_rows: int | None = None
    dead_estimated: bool = False


@dataclass(frozen=True)
class Statistics:
    rows: float | None  # live rows, or None when the catalog knows nothing
    null_frac: float
    n_distinct: float
    common: dict[str, float]  # most common values -> frequency


def read_statistics(conn: psycopg.Connection, table: TableName, column: str) -> Statistics:
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(
            queries.load("monitor/get_count_statistics"),
            {"schema": table.schema, "table": table.name, "column": column},
        ).fetchone()
    if row is None:
        return Statistics(None, 0.0, 0.0, {})
    live, reltuples = row["live_rows"], row["reltuples"]
    rows = live if live and live > 0 else (reltuples if reltuples and reltuples > 0 else None)
    common = dict(zip(row["common_values"] or [], row["common_freqs"] or [], strict=False))
    return Statistics(rows, row["null_frac"] or 0.0, row["n_distinct"] or 0.0, common)


def table_rows(stats: Statistics) -> float:
    return stats.rows or 0.0


def estimate(stats: Statistics, values: list[str], exact: dict[str, int]) -> dict[str, int]:
    """Rows per value of `values` (the ones not counted exactly), from the statistics."""
    if stats.rows is None or not values:
        return {}
    rest = max(stats.rows - sum(exact.values()), 0.0)
    listed = sum(stats.common.values())
    distinct = stats.n_distinct if stats.n_distinct >= 0 else -stats.n_distinct * stats.rows
    unlisted = max(distinct - len(stats.common), 1.0)
    other = max(1.0 - stats.null_frac - listed, 0.0) / unlisted
    if stats.common:  # the planner never puts an unlisted value above the least common one
        other = min(other, min(stats.common.values()))
    weights = {v: stats.common.get(v, other) for v in values}
    # values the statistics list but the spec does not know share the rows too
    strangers = {v: f for v, f in stats.common.items() if v not in weights and v not in exact}
    total = sum(weights.values()) + sum(strangers.values())
    if total <= 0:
        return dict.fromkeys(values, 0)
    shares = {**weights, **strangers}
    return {v: round(rest * f / total) for v, f in shares.items()}


def count_exactly(
    conn: psycopg.Connection, spec: QueueSpec, parts: dict[str, sql.Composable]
) -> dict[str, int]:
    """Every value of the queue table, one full read (a count, locking nothing)."""
    rows = conn.execute(statement(spec, "monitor/count_every_value", **parts)).fetchall()
    return {NO_STATE if status is None else status: n for status, n in rows}


def count_history(
    conn: psycopg.Connection, spec: QueueSpec, parts: dict[str, sql.Composable]
) -> dict[str, int]:
    """Finished values from the history table where the library logs deleted jobs (an
    adapter's version may count a value the library keeps in the queue table there too)."""
    assert spec.history is not None
    stmt = statement(spec, "monitor/count_history", **parts)
    values = spec.values_of(FINISHED_ROLES)
    rows = conn.execute(stmt, {"values": values}).fetchall()
    counts = dict.fromkeys(values, 0)
    counts.update({status: n for status, n in rows})
    return counts


def count_dead_table(
    conn: psycopg.Connection,
    table: TableName,
    limit: int,
    exact: bool,
    statements: StatementBytes | None = None,
) -> tuple[int, bool]:
    """Rows of the dead-letter table: counted while small (or on demand), else the catalog's
    live rows; (rows, estimated). One statement, composed once (`statements`): it runs on
    every poll."""

    def compose() -> sql.Composable:
        return queries.get("monitor/count_dead_table", dead_table=sql.Identifier(*table.parts()))

    stmt = compose() if statements is None else statements.get(conn, ("dead", table), compose)
    row = conn.execute(
        stmt, {"schema": table.schema, "table": table.name, "limit": limit, "exact": exact}
    ).fetchone()
    if row is None:  # pragma: no cover - the count names the table: it fails first
        return 0, False
    return row[0], row[1]


def with_finished(
    spec: QueueSpec, read: FinishedRead | None, by_status: dict[str, int], counted: set[str]
) -> tuple[dict[str, int], list[str]]:
    """The active counts plus the finished ones, and the roles that are estimates.
    Only values with rows appear in by_status."""
    if read is None or read.values is None:
        return by_status, []  # the one pass counted every value exactly
    kind, found = read.values
    values = spec.values_of(FINISHED_ROLES)
    if kind == "stats":
        exact = {} if spec.history else by_status
        guessed = [v for v in values if spec.history or v not in counted]
        found = estimate(found, guessed, exact)
    for value, n in found.items():
        if spec.history and value in values:
            by_status[value] = n  # finished jobs live in the history table
        elif value not in counted:  # a fresher exact count wins
            by_status[value] = n
    by_status = {v: n for v, n in by_status.items() if n}
    if kind == "exact":
        return by_status, []
    return by_status, [r for r in FINISHED_ROLES if any(v in found for v in spec.values(r))]


def read_times(spec: QueueSpec, main: Section, fin: Section) -> dict[str, datetime]:
    """When each role's count was really read: by the count (every value it counts
    exactly), else by the finished section, whose paced read is carried between reads
    (a rate of change must divide by the time between two real reads)."""
    counted = main.data.counted if main.data is not None else set()
    out: dict[str, datetime] = {}
    for role in spec.roles:
        values = spec.values(role)
        if not values:
            continue
        history = spec.history is not None and role in FINISHED_ROLES
        by_count = not history and all(v in counted for v in values)
        section = main if by_count or fin.read_wall is None else fin
        if section.read_wall is not None:
            out[role] = section.read_wall
    return out
