"""Every SQL statement queuetop runs, one `.sql` file each, loaded by name.

A statement names the identifiers it needs as `{placeholders}` (filled with
`psycopg.sql.Identifier` or a typed NULL by the caller) and its values as
`%(name)s` parameters, never as text pasted into the SQL.

An adapter for a queue library keeps its own SQL under `presets/<adapter>/`:
expressions that derive a column (`presets/graphile-worker/state.sql`) and
statements that replace a generic one of the same name
(`presets/procrastinate/actions/do_requeue.sql` for `actions/do_requeue`).

psycopg reads the whole composed text of a statement executed with
parameters for `%` placeholders, identifiers included: a table `"jobs%"`
or a column `"id%(x)s"` would break it, or be taken for a parameter.
`get` therefore writes every `%` of a composed name as `%%`, which psycopg
(and loadgen/prepared.py) reads back as one `%`, whenever the statement
takes parameters; a statement without any is executed without parameters
and keeps its names as they are.

A statement that reads a catalog column or function newer than PostgreSQL 15 (the
oldest server the tests run) says so in a header line, `-- needs: PostgreSQL 16`;
`needs(name)` reads it, and its caller degrades what the statement serves with one
line naming that version on an older server (the tests prepare every statement on
each server of the matrix, so an undeclared one fails there).
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

from psycopg import sql

# psycopg's placeholders: %s, %b, %t, %(name)s ...; %% is a literal percent sign
_PLACEHOLDER = re.compile(r"%%|%(?:\([^)]*\))?[sbt]")
# a double-quoted name inside an SQL fragment (a type name read from the catalog)
_QUOTED_NAME = re.compile(r'"(?:[^"]|"")*"')


def _file(name: str):
    return resources.files(__name__).joinpath(f"{name}.sql")


@cache
def load(name: str) -> str:
    """The text of `queries/<name>.sql`, e.g. load("monitor/get_sessions_at_once")."""
    return _file(name).read_text(encoding="utf-8")


OLDEST_SERVER = 15  # the oldest major version the test matrix runs
_NEEDS = re.compile(r"^--\s*needs:\s*PostgreSQL\s+(\d+)", re.MULTILINE | re.IGNORECASE)


@cache
def needs(name: str) -> int:
    """The oldest major server version statement `name` runs on (its `-- needs:` line)."""
    found = _NEEDS.search(load(name))
    return int(found.group(1)) if found else OLDEST_SERVER


@cache
def exists(name: str) -> bool:
    return _file(name).is_file()


def adapter_path(adapter: str, name: str) -> str:
    """`presets/<adapter>/<name>`: an adapter mapped to one version of its library
    ("pg-boss/v10") reads that version's file where it has one, else the adapter's own."""
    folders = adapter.split("/")
    for depth in range(len(folders), 0, -1):
        path = "presets/" + "/".join(folders[:depth]) + f"/{name}"
        if exists(path):
            return path
    return f"presets/{adapter}/{name}"


def resolve(name: str, adapter: str | None = None) -> str:
    """The adapter's own version of statement `name` where it has one, else the generic."""
    if adapter and exists(adapter_path(adapter, name)):
        return adapter_path(adapter, name)
    return name


def get(name: str, **parts: sql.Composable) -> sql.Composed:
    """The statement `name` with its `{placeholders}` filled by composables.

    If the statement takes `%(name)s` parameters (in its file or in a fragment passed
    in `parts`), it must be executed with them, and every `%` in a name is escaped.
    """
    template = load(name)
    takes_params = _has_placeholders(template) or any(_takes_params(p) for p in parts.values())
    if takes_params:
        parts = {key: _escaped(part) for key, part in parts.items()}
    return _Statement(sql.SQL(template).format(**parts), escaped=takes_params)


class _Statement(sql.Composed):
    """What `get` returns: a statement composed into another one (EXPLAIN {statement})
    is escaped once, not twice."""

    def __init__(self, composed: sql.Composed, escaped: bool):
        super().__init__(list(composed))
        self.escaped = escaped


def _has_placeholders(text: str) -> bool:
    return any(m.group() != "%%" for m in _PLACEHOLDER.finditer(text))


def _takes_params(part: sql.Composable) -> bool:
    if isinstance(part, sql.Composed):
        return any(_takes_params(p) for p in part)
    if isinstance(part, sql.Placeholder):
        return True
    return isinstance(part, sql.SQL) and _has_placeholders(part.as_string(None))


class _PercentEscaped(sql.Composable):
    """A quoted name or literal whose every `%` reads as `%` in a statement with parameters."""

    def __init__(self, wrapped: sql.Composable):
        super().__init__(wrapped)

    def as_bytes(self, context=None) -> bytes:  # noqa: ANN001 (psycopg's AdaptContext)
        return self._obj.as_bytes(context).replace(b"%", b"%%")


def _escaped(part: sql.Composable) -> sql.Composable:
    """`part` with `%` doubled in its names and literals; its own placeholders untouched."""
    if isinstance(part, _Statement) and part.escaped:
        return part
    if isinstance(part, sql.Composed):
        return sql.Composed([_escaped(p) for p in part])
    if isinstance(part, sql.Placeholder):
        return part
    if isinstance(part, sql.SQL):  # our own fragment; a catalog type name in it may be quoted
        text = part.as_string(None)
        return sql.SQL(_QUOTED_NAME.sub(lambda m: m.group().replace("%", "%%"), text))
    return _PercentEscaped(part)  # Identifier, Literal


def expression(name: str) -> sql.Composable:
    """An expression file (its `-- purpose` line dropped), parenthesized for composing."""
    lines = [line for line in load(name).splitlines() if not line.lstrip().startswith("--")]
    return sql.SQL("(" + "\n".join(lines).strip() + ")")
