"""The workers' own statements, where the server shows them: what a claim says outright.

`pg_stat_statements` (when installed and loaded) keeps every statement shape the server ran,
constants normalised to $1; `pg_stat_activity` shows each session's last statement with its
literals where the client sent them inline. In either, a claim names the queue's parts in
any language: the rows it takes (`WHERE status = 'pendente'`, `locked_at IS NULL`,
`vt <= now()`), what it writes on taking one (`SET status = 'processando'`,
`locked_at = now()`, `locked_by = $1`, `attempts = attempts + 1`); a finish names the
finished value and its time; a DELETE by key says finished rows are removed.

This reads text only: nothing is executed, and the text stays untrusted (it is matched, never
shown raw). A light reading, not a parser: what it cannot read it leaves out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import psycopg
from psycopg import errors, sql

import queries
from dashboard.models import TableName

MAX_TEXT = 20_000  # a statement longer than this is not read

# what a right-hand side is: a literal, a parameter, the time now, now plus a delay, the
# column plus one, NULL, or something else
LITERAL, PARAM, NOW, NOW_PLUS, INCREMENT, NULL, OTHER = (
    "literal",
    "param",
    "now",
    "now_plus",
    "increment",
    "null",
    "other",
)


@dataclass(frozen=True)
class Atom:
    """One condition of a WHERE, or one assignment of a SET."""

    column: str
    op: str  # =, <>, <, <=, >, >=, is null, is not null, in (for SET: =)
    kind: str  # LITERAL, PARAM, NOW, NOW_PLUS, INCREMENT, NULL, OTHER
    values: tuple[str, ...] = ()  # the literals, where kind is LITERAL


@dataclass
class Claim:
    """A statement that takes jobs: the rows it takes, and what it writes on them."""

    where: list[Atom] = field(default_factory=list)
    sets: list[Atom] = field(default_factory=list)
    locking: bool = False  # FOR UPDATE (SKIP LOCKED / NOWAIT) on the queue table
    calls: int = 0


@dataclass
class Seen:
    """What the statements touching one table say."""

    claims: list[Claim] = field(default_factory=list)
    finishes: list[list[Atom]] = field(default_factory=list)  # SETs of updates by key
    deletes_by_key: bool = False
    inserts: list[dict[str, Atom]] = field(default_factory=list)
    texts: int = 0  # statements read that name the table
    sources: set[str] = field(default_factory=set)  # pg_stat_statements, pg_stat_activity


def read_texts(conn: psycopg.Connection) -> tuple[list[tuple[str, int, str]], list[str]]:
    """(text, calls, source) of the statements the server shows, and why a source was not
    read (no extension, not loaded, no privilege): said, never fatal."""
    texts: list[tuple[str, int, str]] = []
    notes: list[str] = []
    schema = conn.execute(
        queries.load("understand/find_extension_schema"), {"name": "pg_stat_statements"}
    ).fetchone()
    if schema is None:
        notes.append("pg_stat_statements is not installed in this database")
    else:
        stmt = queries.get(
            "understand/get_statement_texts",
            pg_stat_statements=sql.Identifier(schema[0], "pg_stat_statements"),
        )
        try:
            with conn.transaction():
                rows = conn.execute(stmt).fetchall()
            texts += [(q, int(n), "pg_stat_statements") for q, n in rows if q]
        except (errors.ObjectNotInPrerequisiteState, errors.InsufficientPrivilege) as exc:
            first = (str(exc).strip().splitlines() or [""])[0]
            notes.append(f"pg_stat_statements could not be read: {first}")
        except errors.QueryCanceled:
            notes.append("pg_stat_statements could not be read within the statement timeout")
    try:
        with conn.transaction():
            rows = conn.execute(queries.load("understand/get_activity_texts")).fetchall()
        texts += [(q, int(n), "pg_stat_activity") for q, n in rows if q]
    except errors.QueryCanceled:
        notes.append("pg_stat_activity could not be read within the statement timeout")
    return texts, notes


# --- reading one statement ---------------------------------------------------------------

_IDENT = r'(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)'
_QUALIFIED = rf"{_IDENT}(?:\s*\.\s*{_IDENT})?"
_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)
_SPACE = re.compile(r"\s+")
_NOW = r"(?:now\(\)|current_timestamp|clock_timestamp\(\)|statement_timestamp\(\)|transaction_timestamp\(\)|localtimestamp)"  # noqa: E501
_LITERAL = r"'(?:[^']|'')*'"
_CAST = r"(?:\s*::\s*[\w\s\".]+?(?:\[\])?)?"


def _name(ident: str) -> str:
    ident = ident.strip()
    return ident[1:-1].replace('""', '"') if ident.startswith('"') else ident.lower()


def _names(qualified: str) -> tuple[str, ...]:
    return tuple(_name(p) for p in re.findall(_IDENT, qualified))


_WRITTEN = re.compile(rf"(?i)\b(?:update|from)\s+(?:only\s+)?({_QUALIFIED})")


def tables_written(texts: list[tuple[str, int, str]]) -> set[str]:
    """The bare names of the tables some statement updates or locks (lowercase where
    unquoted): the tables worth a closer look whatever their columns are called."""
    found: set[str] = set()
    for text, _calls, _source in texts:
        if len(text) > MAX_TEXT or not re.search(r"(?i)\b(update|for\s+update)\b", text):
            continue
        for qualified in _WRITTEN.findall(text):
            names = _names(qualified)
            if names:
                found.add(names[-1])
    return found


def _matches_table(qualified: str, table: TableName) -> bool:
    names = _names(qualified)
    if not names:
        return False
    if names[-1] != table.name:
        return False
    return len(names) == 1 or names[0] == (table.schema or "public")


def _split_top(text: str, word: str) -> list[str]:
    """Split on a separator (`,` or ` and `) outside parentheses and quotes."""
    parts, depth, i, start = [], 0, 0, 0
    low = text.lower()
    sep = word.lower()
    while i < len(text):
        ch = text[i]
        if ch == "'":
            j = i + 1
            while j < len(text):
                if text[j] == "'" and text[j + 1 : j + 2] != "'":
                    break
                j += 2 if text[j] == "'" else 1
            i = j + 1
            continue
        if ch == '"':
            i = text.find('"', i + 1) + 1 or len(text)
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and low.startswith(sep, i):
            parts.append(text[start:i])
            i += len(sep)
            start = i
            continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _unparen(text: str) -> str:
    text = text.strip()
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1].strip()
    return text


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


def _literals(text: str) -> tuple[str, ...]:
    found = re.findall(
        rf"({_LITERAL}){_CAST}|(?<![\w$.])(-?\d+(?:\.\d+)?|true|false)\b", text, re.I
    )
    out = []
    for quoted, bare in found:
        out.append(quoted[1:-1].replace("''", "'") if quoted else bare.lower())
    return tuple(out)


def _kind(rhs: str, column: str) -> tuple[str, tuple[str, ...]]:
    """What a right-hand side is (LITERAL with its values, PARAM, NOW, …)."""
    rhs = _unparen(re.sub(r"::\s*[\w\s\".]+?(\[\])?$", "", rhs.strip()).strip())
    low = rhs.lower()
    if re.fullmatch(r"\$\d+|%s|%\(\w+\)s|\?|:\w+", low):
        return PARAM, ()
    if low == "null":
        return NULL, ()
    if re.fullmatch(rf"{_LITERAL}|-?\d+(?:\.\d+)?|true|false", rhs, re.I):
        return LITERAL, _literals(rhs)
    if re.fullmatch(_NOW, low):
        return NOW, ()
    if re.match(_NOW + r"\s*[+-]", low) or re.search(r"[+-]\s*" + _NOW + "$", low):
        return NOW_PLUS, ()
    bare = rf'(?:\w+\.)?(?:"{re.escape(column)}"|{re.escape(column)})'
    if re.fullmatch(rf"(?:coalesce\(\s*)?{bare}(?:\s*,\s*\d+\s*\))?\s*\+\s*(?:1|\$\d+)", low):
        return INCREMENT, ()
    return OTHER, ()


_CONDITION = re.compile(
    rf"^(?:{_IDENT}\s*\.\s*)?(?P<col>{_IDENT})\s*(?:::\s*[\w\s\"]+?)?\s*"
    r"(?P<op>is\s+not\s+null|is\s+null|not\s+in|in|=\s*any|<>|!=|<=|>=|=|<|>)\s*(?P<rhs>.*)$",
    re.IGNORECASE | re.DOTALL,
)


def _conditions(where: str) -> list[Atom]:
    atoms = []
    for part in _split_top(where, " and "):
        part = _unparen(part)
        if re.search(r"\bor\b", part, re.I) and _split_top(part, " or ") != [part]:
            continue  # an OR of conditions is no single fact
        m = _CONDITION.match(part)
        if not m:
            continue
        column, op, rhs = (
            _name(m.group("col")),
            " ".join(m.group("op").lower().split()),
            m.group("rhs"),
        )
        if op in ("is null", "is not null"):
            atoms.append(Atom(column, op, NULL))
        elif op in ("in", "= any", "not in"):
            values = _literals(rhs)
            kind = LITERAL if values else PARAM
            atoms.append(Atom(column, "not in" if op == "not in" else "in", kind, values))
        else:
            kind, values = _kind(rhs, column)
            atoms.append(Atom(column, "<>" if op == "!=" else op, kind, values))
    return atoms


def _assignments(text: str) -> list[Atom]:
    atoms = []
    for part in _split_top(text, ","):
        m = re.match(rf"^\s*(?:{_IDENT}\s*\.\s*)?({_IDENT})\s*=\s*(.*)$", part, re.DOTALL)
        if not m:
            continue
        column = _name(m.group(1))
        kind, values = _kind(m.group(2), column)
        atoms.append(Atom(column, "=", kind, values))
    return atoms


_END = r"(?=\bwhere\b|\bfrom\b|\breturning\b|;|$)"
_UPDATE = re.compile(
    rf"\bupdate\s+(?:only\s+)?(?P<table>{_QUALIFIED})(?:\s+(?:as\s+)?{_IDENT})?\s+set\s+"
    rf"(?P<sets>.*?){_END}",
    re.IGNORECASE | re.DOTALL,
)
_SELECT_LOCKING = re.compile(
    rf"\bfrom\s+(?:only\s+)?(?P<table>{_QUALIFIED})(?:\s+(?:as\s+)?(?!where\b){_IDENT})?"
    r"\s+where\s+(?P<where>.*?)(?=\border\s+by\b|\blimit\b|\bfor\s+(?:no\s+key\s+)?update\b)"
    r"[^()]*?\bfor\s+(?:no\s+key\s+)?update\b",
    re.IGNORECASE | re.DOTALL,
)
_WHERE_AFTER = re.compile(
    r"\bwhere\s+(?P<where>.*?)(?=\breturning\b|;|$)", re.IGNORECASE | re.DOTALL
)
_DELETE = re.compile(
    rf"\bdelete\s+from\s+(?:only\s+)?(?P<table>{_QUALIFIED})", re.IGNORECASE | re.DOTALL
)
_INSERT = re.compile(
    rf"\binsert\s+into\s+(?P<table>{_QUALIFIED})\s*\((?P<cols>[^)]*)\)\s*values\s*\((?P<vals>.*?)\)",
    re.IGNORECASE | re.DOTALL,
)


def _clean(text: str) -> str:
    return _SPACE.sub(" ", _COMMENT.sub(" ", text)).strip()


def _top_where(text: str, start: int) -> str:
    """The WHERE of the statement from `start` on, at the top level (not a subselect's)."""
    depth = 0
    low = text.lower()
    i = start
    while i < len(text):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and low.startswith("where ", i) and (i == 0 or not text[i - 1].isalnum()):
            end = len(text)
            for stop in (" returning ", ";"):
                k = low.find(stop, i)
                if k >= 0:
                    end = min(end, k)
            return text[i + 6 : end]
        i += 1
    return ""


def _key_only(atoms: list[Atom], key: tuple[str, ...]) -> bool:
    """Whether the statement names its jobs by key (a value or a parameter, not a subselect)."""
    named = {a.column for a in atoms if a.op in ("=", "in") and a.kind in (LITERAL, PARAM)}
    return bool(atoms) and named >= set(key)


def read_statement(
    text: str, table: TableName, key: tuple[str, ...], seen: Seen, state_hint: str | None = None
) -> None:
    """Add what one statement says about `table` to `seen`: a claim (it locks the rows it
    takes, or takes them by a condition other than the key), a finish (by key), a delete by
    key, an insert. An UPDATE with no WHERE, or by key only with no condition, is neither."""
    if len(text) > MAX_TEXT or text.lstrip().startswith("-- purpose:"):  # queuetop's own
        return
    text = _clean(text)
    names_it = False
    locking = [m for m in _SELECT_LOCKING.finditer(text) if _matches_table(m.group("table"), table)]
    for m in _UPDATE.finditer(text):
        if not _matches_table(m.group("table"), table):
            continue
        names_it = True
        sets = _assignments(m.group("sets"))
        where_text = _top_where(text, m.end())
        where = _conditions(where_text)
        if locking:
            seen.claims.append(Claim(_conditions(locking[0].group("where")), sets, True))
        elif _key_only(where, key):
            seen.finishes.append(sets)
        else:
            inner = _subselect_where(where_text, table)
            filters = inner if inner is not None else [a for a in where if a.column not in key]
            if filters:  # a claim that takes rows by what they hold (a compare-and-set)
                seen.claims.append(Claim(filters, sets, False))
    if locking and not names_it:  # SELECT … FOR UPDATE, the UPDATE by key comes later
        names_it = True
        seen.claims.append(Claim(_conditions(locking[0].group("where")), [], True))
    for m in _DELETE.finditer(text):
        if _matches_table(m.group("table"), table):
            names_it = True
            where = _conditions(_top_where(text, m.end()))
            if _key_only(where, key):
                seen.deletes_by_key = True
    for m in _INSERT.finditer(text):
        if _matches_table(m.group("table"), table):
            names_it = True
            cols = [_name(c) for c in _split_top(m.group("cols"), ",")]
            vals = _split_top(m.group("vals"), ",")
            if len(cols) == len(vals):
                seen.inserts.append(
                    {c: Atom(c, "=", *_kind(v, c)) for c, v in zip(cols, vals, strict=True)}
                )
    if names_it:
        seen.texts += 1


_SUBSELECT = re.compile(
    rf"\(\s*select\s.+?\bfrom\s+(?P<table>{_QUALIFIED})(?:\s+(?:as\s+)?(?!where\b){_IDENT})?"
    r"\s+where\s+(?P<where>.*?)(?=\border\s+by\b|\blimit\b|\)\s*$|\)\s*(?:returning|;))",
    re.IGNORECASE | re.DOTALL,
)


def _subselect_where(where: str, table: TableName) -> list[Atom] | None:
    """`id = (SELECT id FROM t WHERE status = 'x' LIMIT 1)`: the subselect's conditions."""
    m = _SUBSELECT.search(where)
    if m is None or not _matches_table(m.group("table"), table):
        return None
    return _conditions(m.group("where"))


def what_they_say(
    texts: list[tuple[str, int, str]], table: TableName, key: tuple[str, ...]
) -> Seen:
    seen = Seen()
    needle = table.name.lower()
    for text, calls, source in texts:
        if needle not in text.lower():
            continue
        before = seen.texts
        claims = len(seen.claims)
        read_statement(text, table, key, seen)
        for claim in seen.claims[claims:]:
            claim.calls = calls
        if seen.texts > before:
            seen.sources.add(source)
    return seen
