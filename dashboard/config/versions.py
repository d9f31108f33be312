"""The library schema under an adapter: read its own version marker, map it or refuse.

An adapter's preset file says which schema versions it knows (`[versions]`): the
library's marker as the library keeps it (pg-boss's `version` table, graphile-worker's
migrations, River's river_migration, Oban's and Que's table comments, chancy's
schema_version; else the columns and functions present, which the adapter's marker
statement turns into a label), and for each the release it stands for and, where that
version's SQL differs, the folder of its own SQL under the adapter's
(`queries/presets/pg-boss/v10/`). Anything else is refused in one line naming what was
found and what is supported, before any statement could fail on a missing column.

A schema can also change under a running dashboard (a library upgrade mid-watch):
`SchemaWatch` re-reads the marker now and then and explains a statement that fails on
a missing table, column or function, so the user gets one line, not a raw SQL error.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from functools import cache
from importlib import resources
from typing import Any

import psycopg
from psycopg import errors, sql

import queries
from dashboard.errors import UserError
from dashboard.models import LibraryVersion, QueueSpec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MARKER = "get_schema_version"  # queries/presets/<adapter>/get_schema_version.sql
RECHECK_S = 10.0  # how often a running dashboard re-reads the marker
# What a schema changed under a running statement raises.
SCHEMA_ERRORS = (
    errors.UndefinedColumn,
    errors.UndefinedTable,
    errors.UndefinedFunction,
    errors.UndefinedObject,
    errors.InvalidTextRepresentation,  # an enum value the library dropped
)


class SchemaChanged(UserError):
    """The library's schema under the queue is no longer the one the spec was mapped to."""


def base_adapter(adapter: str | None) -> str | None:
    return adapter.split("/")[0] if adapter else None


@cache
def version_map(adapter: str) -> dict[str, Any] | None:
    """The `[versions]` table of the adapter's preset: library, known markers."""
    path = resources.files("dashboard").joinpath("presets", f"{adapter}.toml")
    if not path.is_file():
        return None
    versions = tomllib.loads(path.read_text("utf-8")).get("versions")
    return versions if isinstance(versions, dict) else None


def supported_text(spec: QueueSpec, about: dict | None = None) -> str:
    """'pg-boss 10 (schema 24), 11 (schema 26), 12.38 (schema 46)', or '' without a map."""
    found = version_map(base_adapter(spec.adapter) or "")
    if not found:
        return ""
    what = found.get("marker_name", "schema")
    known = found.get("known", {})
    listed = ", ".join(f"{v['release']} ({what} {marker})" for marker, v in known.items())
    return f"{found.get('library', spec.adapter)} {listed}"


def read_marker(conn: psycopg.Connection, spec: QueueSpec, oid: int | None) -> str | None:
    """The marker as the library keeps it, or None where it keeps none we can read."""
    adapter = base_adapter(spec.adapter)
    path = f"presets/{adapter}/{MARKER}"
    if not queries.exists(path):
        return None
    stmt = queries.get(path, schema=sql.Identifier(spec.table.schema or "public"))
    try:
        with conn.transaction():
            row = conn.execute(stmt, {"table_oid": oid}).fetchone()
    except SCHEMA_ERRORS:  # the library's marker table itself is missing
        return None
    return None if row is None or row[0] is None else str(row[0]).strip()


def _refusal(spec: QueueSpec, found: str | None, vmap: dict[str, Any]) -> str:
    library = vmap.get("library", spec.adapter)
    what = vmap.get("marker_name", "schema version")
    seen = f"{what} {found}" if found else f"no {what} queuetop can read"
    return (
        f"{library} at {spec.table}: found {seen}; preset {base_adapter(spec.adapter)} "
        f"supports {supported_text(spec).removeprefix(str(library) + ' ')}. "
        f"Use a supported {library} release, or copy the preset and adapt its SQL"
    )


def check(conn: psycopg.Connection, spec: QueueSpec, oid: int | None) -> QueueSpec:
    """The spec mapped to the library version found (its version's SQL folder), or a
    refusal naming the version found and the versions supported."""
    adapter = base_adapter(spec.adapter)
    vmap = version_map(adapter) if adapter and spec.versioned else None
    if not vmap:  # a spec of the user's own that borrows an adapter's SQL is not checked
        return spec
    found = read_marker(conn, spec, oid)
    known = vmap.get("known", {}).get(found) if found else None
    if known is None:
        raise UserError(_refusal(spec, found, vmap))
    folder = known.get("sql")
    library = vmap.get("library", adapter)
    version = LibraryVersion(library, found, f"{library} {known['release']}", folder)
    mapped = f"{adapter}/{folder}" if folder else adapter
    return replace(spec, adapter=mapped, library_version=version)


class SchemaWatch:
    """The marker of a running dashboard's library, re-read every RECHECK_S seconds."""

    def __init__(self, spec: QueueSpec):
        self.spec = spec
        self.oid: int | None = None
        self.checked_at: float | None = None

    def check(self, conn: psycopg.Connection, now: float) -> None:
        version = self.spec.library_version
        if version is None or (self.checked_at is not None and now - self.checked_at < RECHECK_S):
            return
        self.checked_at = now
        if self.oid is None:
            row = conn.execute(
                queries.load("config/find_table"),
                {"schema": self.spec.table.schema, "name": self.spec.table.name},
            ).fetchone()
            self.oid = row[2] if row else None
        found = read_marker(conn, self.spec, self.oid)
        if found != version.marker:
            raise self._changed(found)

    def explain(self, conn: psycopg.Connection, exc: psycopg.Error) -> UserError:
        """What a statement failing on a missing table, column or function means."""
        version = self.spec.library_version
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        if version is not None:
            found = read_marker(conn, self.spec, self.oid)
            if found != version.marker:
                return self._changed(found)
        return SchemaChanged(
            f"the schema of {self.spec.table} changed under queuetop ({first}); "
            "restart queuetop to read it again, or fix the queue spec"
        )

    def _changed(self, found: str | None) -> SchemaChanged:
        version = self.spec.library_version
        vmap = version_map(base_adapter(self.spec.adapter) or "") or {}
        what = vmap.get("marker_name", "schema version")
        now = f"{what} {found}" if found else f"no {what}"
        mapped = vmap.get("known", {}).get(found) if found else None
        then = f"{what} {version.marker} ({version.release})"
        advice = (
            f"restart queuetop to map {vmap.get('library')} {mapped['release']}"
            if mapped
            else f"queuetop supports {supported_text(self.spec)}"
        )
        return SchemaChanged(
            f"{version.library} schema changed under queuetop: {now} at {self.spec.table}, "
            f"was {then} when it started; {advice}"
        )
