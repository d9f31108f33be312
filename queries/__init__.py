"""Every SQL statement queuetop runs, one `.sql` file each, loaded by name.

A statement names the identifiers it needs as `{placeholders}` (filled with
`psycopg.sql.Identifier` or a typed NULL by the caller) and its values as
`%(name)s` parameters, never as text pasted into the SQL.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from psycopg import sql


@cache
def load(name: str) -> str:
    """The text of `queries/<name>.sql`, e.g. load("monitor/get_lock_waits")."""
    return resources.files(__name__).joinpath(f"{name}.sql").read_text(encoding="utf-8")


def get(name: str, **parts: sql.Composable) -> sql.Composed:
    """The statement `name` with its `{placeholders}` filled by composables."""
    return sql.SQL(load(name)).format(**parts)
