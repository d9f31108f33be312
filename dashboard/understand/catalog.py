"""The catalog and the statistics of tables, read in a few statements for any number of them.

Nothing here reads a table's rows: pg_class, pg_attribute, pg_constraint, pg_index and
pg_stats only, so that a database of ten thousand tables is read in a fraction of a second.
"""

from __future__ import annotations

import re

import psycopg
from psycopg import errors
from psycopg.rows import dict_row

import queries
from dashboard.models import TableName
from dashboard.understand.facts import ColumnFacts, TableFacts

BATCH = 2000  # tables per statement of the constraints and statistics


def read_tables(conn: psycopg.Connection, oids: list[int] | None = None) -> list[TableFacts]:
    """Every user table the role may read (or those of `oids`), with its columns."""
    tables: dict[int, TableFacts] = {}
    with conn.cursor(row_factory=dict_row) as cur:
        for row in cur.execute(queries.load("understand/list_columns"), {"oids": oids}):
            facts = tables.get(row["oid"])
            if facts is None:
                facts = tables[row["oid"]] = TableFacts(
                    TableName(row["name"], row["schema"]), row["oid"], row["rows_estimate"]
                )
            facts.columns[row["column_name"]] = ColumnFacts(
                name=row["column_name"],
                type=row["type"],
                category=row["category"],
                not_null=row["not_null"],
                enum_labels=list(row["enum_labels"] or []),
            )
    return list(tables.values())


def _split_key(text: str) -> tuple[str, ...]:
    """quote_ident'ed names joined by commas -> names."""
    out, buf, quoted, i = [], [], False, 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            if quoted and text[i + 1 : i + 2] == '"':
                buf.append('"')
                i += 2
                continue
            quoted = not quoted
        elif ch == "," and not quoted:
            out.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
        i += 1
    out.append("".join(buf))
    return tuple(out)


def add_constraints(conn: psycopg.Connection, tables: list[TableFacts]) -> None:
    """Keys, defaults, CHECKs, indexes and foreign keys of `tables`, in batches. Printing a
    default or a CHECK takes a table's AccessShareLock: a batch that waits past lock_timeout
    is read again table by table, and a table locked exclusively keeps what its columns say
    (its note says why)."""
    todo = [t for t in tables if not t.constraints_read]
    for start in range(0, len(todo), BATCH):
        chunk = todo[start : start + BATCH]
        try:
            _read_constraints(conn, chunk)
        except (errors.LockNotAvailable, errors.QueryCanceled):
            for one in chunk:
                try:
                    _read_constraints(conn, [one])
                except (errors.LockNotAvailable, errors.QueryCanceled) as exc:
                    why = (
                        "locked by another session"
                        if isinstance(exc, errors.LockNotAvailable)
                        else "the statement timed out"
                    )
                    one.notes.append(f"its keys, defaults and CHECKs could not be read ({why})")


def _read_constraints(conn: psycopg.Connection, chunk: list[TableFacts]) -> None:
    by_oid = {t.oid: t for t in chunk}
    with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(queries.load("understand/get_constraints"), {"oids": list(by_oid)})
        for row in rows.fetchall():
            t = by_oid[row["oid"]]
            t.primary_key = tuple(row["primary_key"] or ())
            t.unique_keys = [_split_key(k) for k in row["unique_keys"] or ()]
            t.checks = list(row["checks"] or ())
            t.partial_predicates = list(row["partial_predicates"] or ())
            t.index_leads = list(row["index_leads"] or ())
            t.foreign_keys = dict(fk.split("=", 1) for fk in row["foreign_keys"] or ())
            for name, expr in zip(
                row["default_columns"] or (), row["default_exprs"] or (), strict=True
            ):
                if name in t.columns:
                    t.columns[name].default = expr
            t.constraints_read = True


def add_statistics(conn: psycopg.Connection, tables: list[TableFacts]) -> None:
    """pg_stats of `tables`' columns (where the server has analysed them), in batches.

    A table's own statistics win over those with its inheritance children
    (`inherited`); a partitioned table has only the latter."""
    todo = [t for t in tables if not t.statistics_read]
    by_name = {(t.table.schema or "public", t.table.name): t for t in todo}
    with conn.cursor(row_factory=dict_row) as cur:
        for start in range(0, len(todo), BATCH):
            chunk = todo[start : start + BATCH]
            params = {
                "names": sorted({t.table.name for t in chunk}),
                "schemas": sorted({t.table.schema or "public" for t in chunk}),
            }
            own: set[tuple[int, str]] = set()
            for row in cur.execute(queries.load("understand/get_statistics"), params):
                t = by_name.get((row["schema_name"], row["table_name"]))
                col = t.columns.get(row["column_name"]) if t else None
                if t is None or col is None or (t.oid, col.name) in own:
                    continue  # another table of the same names, or its own stats already
                if not row["inherited"]:
                    own.add((t.oid, col.name))
                col.null_frac = row["null_frac"]
                col.n_distinct = row["n_distinct"]
                values, freqs = row["common_values"] or [], row["common_freqs"] or []
                col.common = dict(zip(values, freqs, strict=False))
                col.histogram = list(row["histogram"] or [])
            oids = {t.oid: t for t in chunk}
            for row in cur.execute(queries.load("understand/get_live_rows"), {"oids": list(oids)}):
                t = oids[row["oid"]]
                t.live_rows = row["live_rows"] or t.live_rows
    for t in todo:
        t.statistics_read = True


# --- what CHECK constraints and partial index predicates say of a column's values -------

_LITERAL = r"'((?:[^']|'')*)'(?:::[\w\s\".]+?)?"
_NUMBER = r"(-?\d+(?:\.\d+)?)"
_COLUMN = r'(?:\(|\b)("(?:[^"]|"")+"|[a-z_][a-z0-9_$]*)\s*'
_IN_ARRAY = re.compile(
    _COLUMN + r"(?:::[\w\s\".]+?)?\)?\s*=\s*ANY\s*\(\s*\(?ARRAY\[(.*?)\]", re.IGNORECASE
)
_IN_LIST = re.compile(_COLUMN + r"(?:::[\w\s\".]+?)?\s+IN\s*\((.*?)\)", re.IGNORECASE)
_EQUALS = re.compile(
    _COLUMN + r"(?:::[\w\s\".]+?)?\)?\s*=\s*(?:" + _LITERAL + "|" + _NUMBER + r"|(true|false))",
    re.IGNORECASE,
)
_BETWEEN = re.compile(
    _COLUMN + r"\s*>=\s*" + _NUMBER + r"\).*?\(\s*\1\s*<=\s*" + _NUMBER, re.IGNORECASE
)
_ITEM = re.compile(_LITERAL + "|" + _NUMBER + r"|\b(true|false)\b", re.IGNORECASE)


def _column_name(text: str) -> str:
    return text[1:-1].replace('""', '"') if text.startswith('"') else text


def _items(text: str) -> list[str]:
    out = []
    for m in _ITEM.finditer(text):
        if m.group(1) is not None:
            out.append(m.group(1).replace("''", "'"))
        else:
            out.append(m.group(2) or m.group(3).lower())
    return out


def check_values(checks: list[str]) -> dict[str, list[str]]:
    """Column -> the values a CHECK allows, in the order written (`status IN ('a','b')`,
    `status = ANY (ARRAY['a'::text, …])`, `status >= 0 AND status <= 4`)."""
    out: dict[str, list[str]] = {}
    for check in checks:
        for pattern in (_IN_ARRAY, _IN_LIST):
            for m in pattern.finditer(check):
                values = _items(m.group(2))
                if values:
                    out.setdefault(_column_name(m.group(1)), values)
        for m in _BETWEEN.finditer(check):
            low, high = int(float(m.group(2))), int(float(m.group(3)))
            if 0 <= high - low <= 20:
                out.setdefault(_column_name(m.group(1)), [str(v) for v in range(low, high + 1)])
    return out


def predicate_values(predicates: list[str]) -> list[tuple[str, list[str]]]:
    """(column, values) each partial index selects by equality or a list of values."""
    out = []
    for pred in predicates:
        for pattern in (_IN_ARRAY, _IN_LIST):
            for m in pattern.finditer(pred):
                out.append((_column_name(m.group(1)), _items(m.group(2))))
        for m in _EQUALS.finditer(pred):
            value = m.group(2)
            value = value.replace("''", "'") if value is not None else m.group(3) or m.group(4)
            out.append((_column_name(m.group(1)), [value.lower() if m.group(4) else value]))
    return out


def default_value(default: str | None) -> str | None:
    """The constant a column's default names (`'pendente'::text`, `0`, `false`), else None."""
    if default is None:
        return None
    m = re.fullmatch(r"\s*\(?" + _LITERAL + r"\)?\s*", default) or re.fullmatch(
        r"\s*\(?" + _NUMBER + r"\)?(?:::[\w\s]+)?\s*", default
    )
    if m:
        return m.group(1).replace("''", "'") if "'" in default else m.group(1)
    low = default.strip().lower()
    return low if low in ("true", "false") else None
