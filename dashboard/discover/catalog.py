"""The catalog as discovery reads it: every user table's columns, in one statement."""

from __future__ import annotations

from dataclasses import dataclass, field

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

import queries
from dashboard.models import TableName


@dataclass
class TableInfo:
    table: TableName
    oid: int
    rows_estimate: float
    types: dict[str, str] = field(default_factory=dict)  # column -> SQL type
    enum_labels: dict[str, list[str]] = field(default_factory=dict)
    common_values: dict[str, list[str]] = field(default_factory=dict)


def read_tables(conn: psycopg.Connection) -> list[TableInfo]:
    """Every ordinary or partitioned table the role may read (partitions folded into
    their parent), with its columns; from pg_catalog and pg_stats only."""
    tables: dict[int, TableInfo] = {}
    with conn.cursor(row_factory=dict_row) as cur:
        for row in cur.execute(queries.load("discover/list_columns")):
            info = tables.get(row["oid"])
            if info is None:
                info = tables[row["oid"]] = TableInfo(
                    TableName(row["name"], row["schema"]), row["oid"], row["rows_estimate"]
                )
            column = row["column_name"]
            info.types[column] = row["type"]
            if row["enum_labels"]:
                info.enum_labels[column] = list(row["enum_labels"])
            if row["common_values"]:
                info.common_values[column] = list(row["common_values"])
    return list(tables.values())


def state_values(conn: psycopg.Connection, info: TableInfo, column: str) -> list[str]:
    """The values a state column holds: its enum's labels, the planner's common values, or
    else the distinct values of at most 10,000 rows (a bounded ordinary read)."""
    if column in info.enum_labels:
        return info.enum_labels[column]
    if column in info.common_values:
        return info.common_values[column]
    stmt = queries.get(
        "discover/get_state_values",
        table=sql.Identifier(*info.table.parts()),
        column=sql.Identifier(column),
    )
    try:
        with conn.transaction():
            return [v for (v,) in conn.execute(stmt).fetchall()]
    except psycopg.errors.QueryCanceled:  # a slow table: no values, so a low score at most
        return []
