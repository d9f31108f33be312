"""What the monitoring role cannot see, said out loud.

Without pg_read_all_stats (which pg_monitor includes) PostgreSQL does not refuse
pg_stat_activity: it blanks the state, wait event, transaction start and query of
other roles' sessions. Their lock waits and idle transactions then vanish from
the snapshot without an error, so a quiet dashboard could be a blind one.
"""

from __future__ import annotations

import psycopg

import queries


def partial_sections(conn: psycopg.Connection) -> tuple[str, ...]:
    """One warning line while sessions are hidden from this role, naming the grant that
    shows them; nothing for a role that sees every session."""
    role, sees_all, some_hidden = conn.execute(
        queries.load("monitor/get_session_visibility")
    ).fetchone()
    if sees_all or not some_hidden:
        return ()
    return (
        f"role {role} cannot see other roles' sessions: waiting sessions and idle in "
        "transaction leave theirs out, locks and blockers show no state or query for them; "
        f"GRANT pg_monitor TO {role} (or pg_read_all_stats)",
    )
