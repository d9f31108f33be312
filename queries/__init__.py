"""Every SQL statement queuetop runs, one `.sql` file each, loaded by name.

A statement names the identifiers it needs as `{placeholders}` (filled with
`psycopg.sql.Identifier` or a typed NULL by the caller) and its values as
`%(name)s` parameters, never as text pasted into the SQL.

An adapter for a queue library keeps its own SQL under `presets/<adapter>/`:
expressions that derive a column (`presets/graphile-worker/state.sql`) and
statements that replace a generic one of the same name
(`presets/procrastinate/actions/do_requeue.sql` for `actions/do_requeue`).
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from psycopg import sql


def _file(name: str):
    return resources.files(__name__).joinpath(f"{name}.sql")


@cache
def load(name: str) -> str:
    """The text of `queries/<name>.sql`, e.g. load("monitor/get_lock_waits")."""
    return _file(name).read_text(encoding="utf-8")


@cache
def exists(name: str) -> bool:
    return _file(name).is_file()


def resolve(name: str, adapter: str | None = None) -> str:
    """The adapter's own version of statement `name` where it has one, else the generic."""
    if adapter and exists(f"presets/{adapter}/{name}"):
        return f"presets/{adapter}/{name}"
    return name


def get(name: str, **parts: sql.Composable) -> sql.Composed:
    """The statement `name` with its `{placeholders}` filled by composables."""
    return sql.SQL(load(name)).format(**parts)


def expression(name: str) -> sql.Composable:
    """An expression file (its `-- purpose` line dropped), parenthesized for composing."""
    lines = [line for line in load(name).splitlines() if not line.lstrip().startswith("--")]
    return sql.SQL("(" + "\n".join(lines).strip() + ")")
