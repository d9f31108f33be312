"""Discovery: which queues a database holds, read from its catalog (ordinary reads only).

    found = discover.find_queues(conn)         # libraries first, then hand-rolled tables
    spec = discover.spec_for(found[0])          # the spec `watch` would build from its command

Library schemas are recognised by the adapters' own version markers (config.versions);
hand-rolled queues by their columns and state values (handrolled.score). Nothing is
written and no row is locked: the catalog, pg_stats, and at most a bounded read of a
state column whose values the planner has no statistics of.
"""

from __future__ import annotations

import psycopg

from dashboard import config
from dashboard.discover.catalog import read_tables
from dashboard.discover.found import FoundQueue, ordered
from dashboard.discover.handrolled import score
from dashboard.discover.libraries import find_libraries, owned_by
from dashboard.models import QueueSpec

# queuetop's own tables (the audit trail) are no queue.
OWN_SCHEMAS = ("queuetop",)


def find_queues(conn: psycopg.Connection) -> list[FoundQueue]:
    tables = read_tables(conn)
    found = find_libraries(conn, tables)
    for info in tables:
        if info.table.schema in OWN_SCHEMAS or owned_by(found, info):
            continue
        queue = score(conn, info)
        if queue is not None:
            found.append(queue)
    return ordered(found)


def watchable(found: list[FoundQueue]) -> list[FoundQueue]:
    """The queues `watch` and `snapshot` take on their own: high or medium confidence."""
    return [f for f in found if f.confidence in ("high", "medium")]


def spec_for(found: FoundQueue, stale_after: str | None = None) -> QueueSpec:
    """The spec its command builds (validate it against the catalog before use)."""
    if found.adapter:
        table = str(found.table) if "--table" in found.flags else None
        return config.build_spec(preset=found.adapter, table=table, stale_after=stale_after)
    columns = {k: v for k, v in found.columns.items() if k != "status"}
    return config.build_spec(
        table=str(found.table),
        status_column=found.columns.get("status"),
        columns=columns,
        stale_after=stale_after,
    )


__all__ = ["FoundQueue", "find_queues", "spec_for", "watchable"]
