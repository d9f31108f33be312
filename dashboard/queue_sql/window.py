"""A time window over a queue's timestamps, written so that an index on the column serves it.

`t.finished_at >= <since>` on the column itself, never on an expression over it: a
`timestamp without time zone` column is compared with the bound turned into its own zone
(the spec's time_zone, else the session's), not read into a timestamptz first, so a plain
index on it still serves the range. A timestamp an adapter derives (`{ derived = … }`) is
compared as its expression, unless the adapter's SQL says how its columns serve the range
(`queries/presets/<adapter>/<name>_since.sql`, `{since}` standing for the bound: Oban's
finish time is whichever of three indexed columns is set).
"""

from __future__ import annotations

from psycopg import sql

import queries
from dashboard.models import Derived, QueueSpec
from dashboard.queue_sql.parts import NAIVE_TIMESTAMP

# The start of the window: the server's now() less the window (a parameter, in seconds).
SINCE = sql.SQL("(now() - make_interval(secs => %(window_s)s::float8))")
NOTHING = sql.SQL("false")


def _bound(kind: str, zone: str | None) -> sql.Composable:
    """SINCE as a value of the column's own type: a naive timestamp in the spec's zone."""
    if not kind.startswith(NAIVE_TIMESTAMP):
        return SINCE
    if zone:
        return sql.SQL("({} AT TIME ZONE {})").format(SINCE, sql.Literal(zone))
    return sql.SQL("({})::timestamp").format(SINCE)


def since(
    spec: QueueSpec, key: str, parts: dict[str, sql.Composable], alias: str = "t"
) -> sql.Composable:
    """`<column of key> >= <start of the window>` over the queue row (`false` without one)."""
    value = getattr(spec.columns, key)
    if value is None:
        return NOTHING
    if isinstance(value, Derived):
        path = queries.adapter_path(spec.adapter, f"{value.name}_since")
        if queries.exists(path):
            return queries.expression(path).format(since=SINCE)
        return sql.SQL("{} >= {}").format(parts[key], SINCE)
    kind = spec.column_types.get(value, "")
    column = sql.SQL("{}.{}").format(sql.Identifier(alias), sql.Identifier(value))
    return sql.SQL("{} >= {}").format(column, _bound(kind, spec.time_zone))


def history_column(spec: QueueSpec, column: str | None, cast: str) -> sql.Composable:
    """A column of the history row `h` (a naive timestamp read in the spec's zone), or a
    typed NULL where the history table keeps no such column."""
    if column is None:
        return sql.SQL("NULL::{}").format(sql.SQL(cast))  # cast: a type name of ours
    expr = sql.SQL("h.{}").format(sql.Identifier(column))
    kind = spec.history_types.get(column, "")
    if cast != "timestamptz" or not kind.startswith(NAIVE_TIMESTAMP):
        return expr
    if spec.time_zone:
        return sql.SQL("({} AT TIME ZONE {})").format(expr, sql.Literal(spec.time_zone))
    return sql.SQL("({})::timestamptz").format(expr)


def history_since(spec: QueueSpec, column: str | None) -> sql.Composable:
    """`h.<column> >= <start of the window>` over the history row (`false` without one)."""
    if column is None:
        return NOTHING
    kind = spec.history_types.get(column, "")
    return sql.SQL("h.{} >= {}").format(sql.Identifier(column), _bound(kind, spec.time_zone))
