"""The library schemas the adapters know, found in a catalog: the adapters run backwards.

A library preset (one with a `[versions]` table) names its queue table; wherever a table
of that name is (in the preset's schema, or in any schema for an unqualified name), the
library's own version marker says whether it is that library's and which release. A
preset keeping one table per queue names them by a pattern (`pgmq.q_*`): each table it
matches is a queue of its own, watched with `--table`.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import psycopg

from dashboard import config
from dashboard.config import versions
from dashboard.discover.found import FoundQueue
from dashboard.models import QueueSpec
from dashboard.understand import TableFacts


def library_presets() -> list[tuple[str, QueueSpec]]:
    return [
        (name, spec)
        for name in config.preset_names()
        if (spec := config.load_preset(name)).versioned and versions.version_map(name)
    ]


def own_presets() -> list[tuple[str, QueueSpec]]:
    """Presets of tables of our own (the demo queue) under a schema-qualified name: found
    where that exact table is, with every column the preset names."""
    return [
        (name, spec)
        for name in config.preset_names()
        if not (spec := config.load_preset(name)).versioned and spec.table.schema
    ]


def find_own(tables: list[TableFacts]) -> list[FoundQueue]:
    found = []
    for name, spec in own_presets():
        for info in tables:
            if info.table != spec.table:
                continue
            named = [c for c in vars(spec.columns).values() if isinstance(c, str)]
            if all(c in info.columns for c in named):
                why = (f"the table of preset {name}, with every column it names",)
                found.append(
                    FoundQueue(info.table, "high", name, why=why, flags=("--preset", name))
                )
    return found


def _matches(spec: QueueSpec, info: TableFacts) -> bool:
    wanted = spec.table
    if wanted.is_pattern:  # one table per queue (pgmq.q_*): each is a queue of its own
        return wanted.match(info.table) is not None
    if info.table.name != wanted.name:
        return False
    return wanted.schema is None or info.table.schema == wanted.schema


def find_libraries(conn: psycopg.Connection, tables: list[TableFacts]) -> list[FoundQueue]:
    found = find_own(tables)
    for name, spec in library_presets():
        vmap = versions.version_map(name) or {}
        for info in tables:
            if not _matches(spec, info):
                continue
            here = replace(spec, table=info.table)
            marker = versions.read_marker(conn, here, info.oid)
            known = vmap.get("known", {}).get(marker) if marker else None
            flags = ["--preset", name]
            if spec.table.is_pattern or (
                spec.table.schema is None and info.table.schema != "public"
            ):
                flags += ["--table", str(info.table)]
            what = vmap.get("marker_name", "schema")
            if known:
                why = (f"{vmap.get('library', name)} {what} {marker}",)
                confidence = "high"
            elif marker:
                why = (f"{what} {marker}, which preset {name} does not support",)
                confidence = "medium"
            else:
                why = (f"named as {name}'s table, but without its {what} marker",)
                confidence = "low"
            found.append(
                FoundQueue(
                    table=info.table,
                    confidence=confidence,
                    adapter=name,
                    version=known["release"] if known else None,
                    marker=marker,
                    why=why,
                    flags=tuple(flags),
                )
            )
    return found


def _prefix(name: str) -> str:
    for tail in ("_jobs", "_job", "s"):
        if name.endswith(tail):
            return name[: -len(tail)]
    return name


@cache
def _side_tables(adapter: str | None) -> frozenset[tuple[str | None, str]]:
    """The workers and history tables a preset names ((schema or None, name)): a library's
    own tables whatever their names (django-q2's django_q_task beside django_q_ormq)."""
    if adapter not in config.preset_names():
        return frozenset()
    spec = config.load_preset(adapter)
    return frozenset(
        (side.table.schema, side.table.name)
        for side in (spec.workers, spec.history)
        if side is not None
    )


def owned_by(found: list[FoundQueue], info: TableFacts) -> bool:
    """A table of a library found (its workers, logs, archive): not a queue of its own.
    A library in a schema of its own owns that schema; in public, its name prefix; and
    wherever it is, the workers and history tables its preset names."""
    for queue in found:
        if queue.table == info.table:
            return True
        if queue.confidence == "low":
            continue
        for side_schema, side_name in _side_tables(queue.adapter):
            if info.table.name == side_name and info.table.schema == (
                side_schema or queue.table.schema
            ):
                return True
        schema = queue.table.schema
        if schema != "public":
            if info.table.schema == schema:
                return True
            continue
        prefix = _prefix(queue.table.name)
        name = info.table.name
        if info.table.schema == "public" and (name == prefix or name.startswith(prefix + "_")):
            return True
    return False
