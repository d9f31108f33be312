"""Discovery: which queues a database holds, read from its catalog (ordinary reads only).

    found = discover.find_queues(conn)         # libraries first, then any other queue
    spec = discover.spec_for(found[0])          # the spec `watch` would build from its command

Library schemas are recognised by the adapters' own version markers (config.versions);
every other table by the understanding `--table` uses (dashboard.understand): its catalog,
statistics, a bounded sample and the workers' statements. Nothing is written and no row is
locked.
"""

from __future__ import annotations

import psycopg

from dashboard import config, understand
from dashboard.config.pins import pinned
from dashboard.discover.found import FoundQueue, ordered
from dashboard.discover.libraries import find_libraries, owned_by
from dashboard.models import QueueSpec

# queuetop's own tables (the audit trail) are no queue.
OWN_SCHEMAS = ("queuetop",)


def _understood(u: understand.Understanding) -> FoundQueue:
    """A table understood, as discovery lists it: its command is `--table` alone, which
    understands it the same way; the pins and the evidence come along."""
    base = config.build_spec(table=str(u.table))
    spec = pinned(understand.to_spec(u, base, understand.Given()))
    return FoundQueue(
        table=u.table,
        confidence=u.queue or "low",
        why=tuple(summary(spec, u.states)),
        flags=("--table", str(u.table)),
        understood=spec.understood,
    )


def summary(spec: QueueSpec, inferred: dict[str, tuple[str, ...]]) -> list[str]:
    """A few lines saying how the table maps: key, states (those the rows or the catalog
    hold, not the common words that stand in for a role no row holds yet), claim columns."""
    lines = [f"key {', '.join(spec.columns.key)}"]
    if spec.rules:
        lines.append(
            "roles by conditions: " + "; ".join(f"{r.role}: {r.label}" for r in spec.rules)
        )
    else:
        mapped = " · ".join(
            f"{role} {', '.join(inferred[role])}" for role in spec.roles if inferred.get(role)
        )
        lines.append(f"state column {spec.columns.status}: {mapped}")
    cols = spec.columns
    claim = [
        f"{what} {col}"
        for what, col in (
            ("claim time", cols.real("started_at")),
            ("worker", cols.real("worker")),
            ("lease", cols.real("lease_until")),
            ("heartbeat", cols.real("heartbeat")),
        )
        if col
    ]
    if claim:
        lines.append("claim: " + ", ".join(claim))
    return lines


def find_queues(conn: psycopg.Connection) -> list[FoundQueue]:
    tables = understand.read_tables(conn)
    found = find_libraries(conn, tables)
    # a table only named as a library's (`jobs`), without its marker, is understood as any
    # other; the library's guess stays where understanding sees no queue there
    claimed = {f.table for f in found if f.confidence != "low"}
    guessed = {f.table: f for f in found if f.confidence == "low" and f.table not in claimed}
    sure = [f for f in found if f.confidence != "low"]
    others = [t for t in tables if t.table.schema not in OWN_SCHEMAS and not owned_by(sure, t)]
    understood = [_understood(u) for u in understand.tables(conn, others)]
    seen = {f.table for f in understood}
    found = sure + [f for table, f in guessed.items() if table not in seen] + understood
    return ordered(found)


def watchable(found: list[FoundQueue]) -> list[FoundQueue]:
    """The queues `watch` and `snapshot` take on their own: high or medium confidence."""
    return [f for f in found if f.confidence in ("high", "medium")]


def spec_for(found: FoundQueue, stale_after: str | None = None) -> QueueSpec:
    """The spec its command builds (validate it against the catalog before use: a table
    nobody described is understood there, as `--table` is)."""
    if found.adapter:
        table = str(found.table) if "--table" in found.flags else None
        return config.build_spec(preset=found.adapter, table=table, stale_after=stale_after)
    return config.build_spec(table=str(found.table), stale_after=stale_after)


__all__ = ["FoundQueue", "find_queues", "spec_for", "watchable"]
