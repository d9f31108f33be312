"""Where a job went when it is not in the queue table: the dead-letter table.

A job moved there by a dead-letter is not "not found": an action on it says
`already dead-lettered`, and the look-up offers to retry it from there.
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
from psycopg import errors, sql

from dashboard.models import QueueSpec, TableName
from dashboard.queue_sql.parts import queue_parts, statement

ALREADY_DEAD = "already dead-lettered"


def dead_table(spec: QueueSpec) -> TableName | None:
    """The dead-letter table, where the spec's policy moves dead jobs to one."""
    dead = spec.policy.dead_letter
    return dead.table if dead and dead.kind == "table" and dead.table else None


def dead_parts(spec: QueueSpec) -> dict[str, sql.Composable]:
    """The queue's parts over the dead-letter table (it has every column of the queue): no
    lease runs out there and no library refusal applies."""
    table = dead_table(spec)
    assert table is not None
    return {
        **queue_parts(spec),
        "table": sql.Identifier(*table.parts()),
        "is_stale": sql.SQL("NULL::boolean"),
        "expires_at": sql.SQL("NULL::timestamptz"),
        "requeue_refusal": sql.SQL("NULL::text"),
        "dead_letter_refusal": sql.SQL("NULL::text"),
    }


def held_by(
    conn: psycopg.Connection, spec: QueueSpec, parts: dict[str, sql.Composable], ids: Sequence[str]
) -> set[str]:
    """Which of `ids` the table of `parts` holds (a plain read by id)."""
    if not ids:
        return set()
    rows = conn.execute(
        statement(spec, "actions/find_in_table", **parts), {"ids": list(ids)}
    ).fetchall()
    return {r[0] for r in rows}


def in_dead_table(conn: psycopg.Connection, spec: QueueSpec, ids: Sequence[str]) -> set[str]:
    """Which of `ids` (not in the queue) were moved to the dead-letter table; none when this
    role may not read it (the reason then stays `not found`)."""
    if dead_table(spec) is None or not ids:
        return set()
    try:
        with conn.transaction():  # a savepoint inside an action's transaction
            return held_by(conn, spec, dead_parts(spec), ids)
    except (errors.InsufficientPrivilege, errors.UndefinedTable):
        return set()
