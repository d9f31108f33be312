"""The sessions around the queue: live locks, lock waits with their blockers, and
transactions left idle. Catalog views only; the queue table is never read here."""

from __future__ import annotations

from typing import Any, TypeVar

import psycopg
from psycopg.rows import class_row

import queries
from dashboard.models import IdleTransaction, LockInfo, SessionInfo, WaitingSession

T = TypeVar("T")
ROW_LIMIT = 1000  # per table of the snapshot; the UI shows the worst first


def rows(
    conn: psycopg.Connection, row_type: type[T], query: Any, params: dict[str, Any]
) -> list[T]:
    with conn.cursor(row_factory=class_row(row_type)) as cur:
        return cur.execute(query, params).fetchall()


def wait_chain(pid: int, blocked_by: dict[int, tuple[int, ...]]) -> tuple[int, ...]:
    """Root blocker first, `pid` last, following the first blocker of each waiter."""
    chain = [pid]
    while blocked_by.get(chain[-1]) and len(chain) < 50:
        nxt = blocked_by[chain[-1]][0]
        if nxt in chain:  # a deadlock about to be broken by the server
            break
        chain.append(nxt)
    return tuple(reversed(chain))


def read_locks(conn: psycopg.Connection, schema: str | None, table: str) -> list[LockInfo]:
    return rows(
        conn,
        LockInfo,
        queries.load("monitor/get_locks"),
        {"schema": schema, "table": table, "limit": ROW_LIMIT},
    )


def read_waits(
    conn: psycopg.Connection,
) -> tuple[tuple[WaitingSession, ...], tuple[SessionInfo, ...]]:
    """Sessions waiting on a lock (pg_blocking_pids only for them), and their blockers."""
    raw = conn.execute(queries.load("monitor/get_lock_waits")).fetchall()
    blocked_by = {r[0]: tuple(r[3] or ()) for r in raw}
    waiting = tuple(
        WaitingSession(
            pid=r[0],
            backend_start=r[1],
            application_name=r[2],
            blocked_by=tuple(r[3] or ()),
            wait_s=r[4] or 0.0,
            wait_event=r[5],
            query=r[6],
            chain=wait_chain(r[0], blocked_by),
        )
        for r in raw[:ROW_LIMIT]
    )
    pids = sorted({p for w in waiting for p in w.blocked_by})
    blockers = (
        rows(conn, SessionInfo, queries.load("monitor/get_sessions"), {"pids": pids})
        if pids
        else []
    )
    return waiting, tuple(blockers)


def read_idle(conn: psycopg.Connection) -> tuple[IdleTransaction, ...]:
    idle = rows(conn, IdleTransaction, queries.load("monitor/get_idle_transactions"), {})
    return tuple(idle[:ROW_LIMIT])


def table_blockers(
    conn: psycopg.Connection, schema: str | None, table: str, *, held_only: bool = False
) -> str:
    """'pid 123 (psql, holds AccessExclusiveLock)': who keeps an ordinary read out.
    With `held_only`, '' when nobody holds such a lock now."""
    found = conn.execute(
        queries.load("monitor/get_table_blockers"), {"schema": schema, "table": table}
    ).fetchall()
    if held_only and not any(granted for *_, granted in found):
        return ""
    if not found:
        return "another session"
    return ", ".join(
        f"pid {pid} ({app or 'no name'}, {'holds' if granted else 'waits for'} {mode})"
        for pid, app, mode, granted in found[:3]
    )
