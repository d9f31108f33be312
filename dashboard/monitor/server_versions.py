"""Which sections this server can serve: a statement newer than the server is not run.

A statement that needs a catalog column or function newer than PostgreSQL 15 says so
(`-- needs: PostgreSQL 16`, see queries/__init__.py); on an older server its section is
left empty with one line naming the version, and every other section reads as usual.
"""

from __future__ import annotations

import queries
from dashboard.models import ServerInfo

# the statements each catalog section runs
# (locks, waits and idle sessions are read by one statement, in one moment: the locks
# section's, whose state the other two take)
SECTION_STATEMENTS = {
    "locks": (
        "monitor/get_sessions_at_once",
        "monitor/queue_rows_queued",
        "monitor/queue_rows_by_id",
        "monitor/queue_rows_of_value",
    ),
}


def unavailable(section: str, server: ServerInfo) -> str | None:
    """The line saying why `section` cannot be read on `server`, or None where it can."""
    newer = [
        (queries.needs(name), name)
        for name in SECTION_STATEMENTS.get(section, ())
        if server.major and queries.needs(name) > server.major
    ]
    if not newer:
        return None
    version, name = max(newer)
    return (
        f"{section} unavailable: {name} needs PostgreSQL {version} "
        f"(this server is {server.version})"
    )
