"""A bounded read of a table's rows: for each state value, which columns are set.

One ordinary statement (no lock beyond AccessShareLock, the monitor's timeouts): at most
SAMPLE_LIMIT rows, the whole table while it is small, else the pages TABLESAMPLE SYSTEM
picks at random (so a table of fifty million rows costs what one of ten thousand does).
The rows are grouped by their state value and the shape of a few telling columns: a time
null, past or future; a count zero or positive; a boolean; anything else null or set.
"""

from __future__ import annotations

import psycopg
from psycopg import errors, sql

import queries
from dashboard.understand.facts import Combination, Sample, TableFacts

SAMPLE_LIMIT = 20_000
SAMPLED_ROWS = 5_000  # what TABLESAMPLE aims at on a large table
MAX_FEATURES = 14


def _shape(facts: TableFacts, column: str) -> sql.Composable:
    col = facts.columns[column]
    ref = sql.SQL("s.{}").format(sql.Identifier(column))
    if col.is_time:
        return sql.SQL(
            "CASE WHEN {c} IS NULL THEN 'null' WHEN {c} > now() THEN 'future' ELSE 'past' END"
        ).format(c=ref)
    if col.is_bool:
        return sql.SQL(
            "CASE WHEN {c} IS NULL THEN 'null' WHEN {c} THEN 'true' ELSE 'false' END"
        ).format(c=ref)
    if col.is_integer or col.type == "numeric":
        return sql.SQL(
            "CASE WHEN {c} IS NULL THEN 'null' WHEN {c} > 0 THEN 'positive' ELSE 'zero' END"
        ).format(c=ref)
    return sql.SQL("CASE WHEN {c} IS NULL OR {c}::text = '' THEN 'null' ELSE 'set' END").format(
        c=ref
    )


def statement(
    facts: TableFacts, state: str | None, features: list[str]
) -> tuple[sql.Composed, dict[str, object]]:
    rows = facts.rows
    sampled = rows is not None and rows > SAMPLE_LIMIT
    source: sql.Composable = sql.SQL("{} AS t").format(sql.Identifier(*facts.table.parts()))
    params: dict[str, object] = {"limit": SAMPLE_LIMIT}
    if sampled:
        source = sql.SQL("{} TABLESAMPLE SYSTEM ({})").format(source, sql.Placeholder("percent"))
        params["percent"] = min(100.0, max(0.01, 100.0 * SAMPLED_ROWS / float(rows)))
    value = sql.SQL("s.{}::text").format(sql.Identifier(state)) if state else sql.SQL("NULL")
    columns = [value] + [_shape(facts, c) for c in features]
    stmt = queries.get(  # names holding `%` are escaped there (the statement takes parameters)
        "understand/get_sample",
        columns=sql.SQL(", ").join(columns),
        source=source,
        ordinals=sql.SQL(", ").join(sql.Literal(i + 1) for i in range(len(columns))),
    )
    return stmt, params


def read(
    conn: psycopg.Connection, facts: TableFacts, state: str | None, features: list[str]
) -> Sample:
    """The sample, or an empty one saying why (a timeout on a slow table, a lock)."""
    features = features[:MAX_FEATURES]
    stmt, params = statement(facts, state, features)
    try:
        with conn.transaction():
            rows = conn.execute(stmt, params).fetchall()
    except (errors.QueryCanceled, errors.LockNotAvailable, errors.InsufficientPrivilege) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return Sample(
            state_column=state,
            error=f"the sample of {facts.table} failed: {first}",
            locked=isinstance(exc, errors.LockNotAvailable),
        )
    sample = Sample(state_column=state)
    for row in rows:
        value, shapes, n = row[0], row[1:-1], int(row[-1])
        sample.combinations.append(Combination(value, tuple(zip(features, shapes, strict=True)), n))
        sample.rows += n
    sampled = "percent" in params
    sample.complete = not sampled and sample.rows < SAMPLE_LIMIT
    return sample
