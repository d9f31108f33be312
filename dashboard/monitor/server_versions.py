"""Which sections this server can serve: a statement newer than the server is not run.

A statement that needs a catalog column or function newer than PostgreSQL 15 says so
(`-- needs: PostgreSQL 16`, see queries/__init__.py); on an older server its section is
left empty with one line naming the version, and every other section reads as usual.
"""

from __future__ import annotations

import queries
from dashboard.models import ServerInfo

# the statements each catalog section runs
SECTION_STATEMENTS = {
    "locks": ("monitor/get_locks", "monitor/get_row_lock_jobs"),
    "waits": ("monitor/get_lock_waits", "monitor/get_sessions"),
    "idle": ("monitor/get_idle_transactions",),
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
