"""Understanding a queue table nobody described: its key, its states, its claim columns.

    u = understand.table(conn, oid)                  # one table (`--table`)
    found = understand.tables(conn)                  # every queue-like table (discovery)
    spec = understand.to_spec(u, base, given)        # the flags' spec, filled in

It weighs, in this order and with ordinary reads only (the monitor's connection and
timeouts): the catalog (keys, types, CHECKs, enum labels, partial indexes, defaults), the
statistics PostgreSQL keeps, a bounded sample of rows, the workers' own statements
(pg_stat_statements, pg_stat_activity), and words in several languages. Every inference
carries its evidence and a confidence; what is only guessed is said (`doubts`).
"""

from __future__ import annotations

import psycopg

from dashboard.understand import catalog, sample, statements
from dashboard.understand.columns import TIME_CONCEPTS, assign, column_tally
from dashboard.understand.facts import TableFacts
from dashboard.understand.infer import Understanding, choose_state, infer
from dashboard.understand.prefilter import worth_reading, worth_sampling
from dashboard.understand.spec import Given, to_spec

Texts = list[tuple[str, int, str]]


def _features(facts: TableFacts, columns: dict[str, str], state: str | None) -> list[str]:
    """The columns whose shape the sample reads: times, the claim's, booleans, counts."""
    chosen: list[str] = []
    for concept in (*TIME_CONCEPTS, "worker", "last_error", "attempts", "lease_token"):
        if concept in columns:
            chosen.append(columns[concept])
    for name, col in facts.columns.items():
        if name == state or name in chosen:
            continue
        if col.is_time or col.is_bool:
            chosen.append(name)
    return chosen


def read_one(
    conn: psycopg.Connection, facts: TableFacts, texts: Texts, given: Given | None = None
) -> Understanding:
    """The understanding of one table whose catalog facts are read."""
    given = given or Given()
    catalog.add_constraints(conn, [facts])
    catalog.add_statistics(conn, [facts])
    key = given.key or facts.primary_key or ()
    seen = statements.what_they_say(texts, facts.table, key)
    if given.rules:
        state, why = None, []
    elif given.state:
        state, why = given.state, ["given with --status-column"]
    else:
        state, why = choose_state(facts, seen)
    columns = assign(column_tally(facts, seen, state, key)).columns
    columns.update(given.columns)
    rows = sample.read(conn, facts, state, _features(facts, columns, state))
    u = infer(facts, seen, rows, state, why, key=given.key or None, given_columns=given.columns)
    if seen.sources:
        u.evidence.append("statements read from " + ", ".join(sorted(seen.sources)))
    return u


def table(conn: psycopg.Connection, oid: int, given: Given | None = None) -> Understanding:
    """One table, by oid (`--table` resolves the name first)."""
    (facts,) = catalog.read_tables(conn, [oid]) or [None]
    if facts is None:
        raise LookupError(oid)
    texts, notes = statements.read_texts(conn)
    u = read_one(conn, facts, texts, given)
    u.notes += notes
    return u


def tables(conn: psycopg.Connection, every: list[TableFacts]) -> list[Understanding]:
    """Those of `every` (catalog.read_tables) that may be queues, understood; the others
    are not read beyond the columns already read."""
    texts, _ = statements.read_texts(conn)
    written = statements.tables_written(texts)
    candidates = [f for f in every if worth_reading(f) or f.table.name in written]
    catalog.add_constraints(conn, candidates)
    catalog.add_statistics(conn, candidates)
    out = []
    for facts in candidates:
        seen = statements.what_they_say(texts, facts.table, facts.primary_key)
        state, _ = choose_state(facts, seen)
        columns = assign(column_tally(facts, seen, state, facts.primary_key)).columns
        if not worth_sampling(columns, state, seen):
            continue  # no claim column, no claim seen: not a queue (an orders table)
        u = read_one(conn, facts, texts)
        if u.queue is not None:
            out.append(u)
    return out


read_tables = catalog.read_tables

__all__ = ["Given", "TableFacts", "Understanding", "read_tables", "table", "tables", "to_spec"]
