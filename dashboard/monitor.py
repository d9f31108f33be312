"""collect(conn, spec) -> Snapshot: one poll, by ordinary reads only.

Every statement comes from queries/monitor/. The connection is expected to
come from db.connect_monitor (autocommit, read-only, with timeouts); nothing
here takes a row lock or anything stronger than AccessShareLock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, TypeVar

import psycopg
from psycopg import errors, sql
from psycopg.rows import class_row

import queries
from dashboard.config import state_warnings
from dashboard.db import describe_address
from dashboard.errors import UserError
from dashboard.models import (
    ACTIVE_ROLES,
    ROLES,
    IdleTransaction,
    LockInfo,
    QueueSpec,
    RowLockHolder,
    ServerInfo,
    SessionInfo,
    Snapshot,
    StaleLease,
    WaitingSession,
)
from dashboard.visibility import partial_sections

T = TypeVar("T")
ROW_LIMIT = 1000  # per table of the snapshot; the UI shows the worst first
# What an optional column reads as when the spec has no such column: a typed NULL.
_ABSENT_COLUMN = {
    "created_at": sql.SQL("NULL::timestamptz"),
    "started_at": sql.SQL("NULL::timestamptz"),
    "worker": sql.SQL("NULL::text"),
    "attempts": sql.SQL("NULL::int"),
    "lease_until": sql.SQL("NULL::timestamptz"),
    "lease_token": sql.SQL("NULL::bigint"),
    "last_error": sql.SQL("NULL::text"),
}


def queue_parts(spec: QueueSpec) -> dict[str, sql.Composable]:
    """The `{placeholders}` of a queue statement: identifiers, or typed NULLs for absent columns."""
    cols = spec.columns
    parts: dict[str, sql.Composable] = {
        "table": sql.Identifier(*spec.table.parts()),
        "id": sql.Identifier(cols.id),
        "status": sql.Identifier(cols.status),
        "status_type": sql.SQL(spec.column_types.get(cols.status, "text")),
    }
    for name, absent in _ABSENT_COLUMN.items():
        column = getattr(cols, name)
        parts[name] = sql.SQL("t.{}").format(sql.Identifier(column)) if column else absent
    return parts


def table_params(spec: QueueSpec) -> dict[str, Any]:
    return {"schema": spec.table.schema, "table": spec.table.name}


def _rows(conn: psycopg.Connection, row_type: type[T], query: sql.Composable | str,
          params: dict[str, Any]) -> list[T]:
    with conn.cursor(row_factory=class_row(row_type)) as cur:
        return cur.execute(query, params).fetchall()


def _counts(conn: psycopg.Connection, spec: QueueSpec, parts: dict[str, sql.Composable],
            notes: list[str]) -> tuple[dict[str, int], tuple[str, ...]]:
    """Raw status -> rows: exact where cheap; above the limit, finished states are estimated."""
    row = conn.execute(queries.load("monitor/get_table_estimate"), table_params(spec)).fetchone()
    reltuples = row[0] if row else -1
    active = spec.values_of(ACTIVE_ROLES)
    if reltuples < spec.policy.exact_count_limit:
        try:
            rows = conn.execute(queries.get("monitor/count_by_status", **parts)).fetchall()
            return {status: n for status, n in rows}, ()
        except errors.QueryCanceled:
            notes.append("exact count timed out; finished states are planner estimates")
    by_status = {
        status: n
        for status, n in conn.execute(
            queries.load("monitor/estimate_by_status"),
            {**table_params(spec), "column": spec.columns.status},
        ).fetchall()
        if status not in active
    }
    exact = conn.execute(
        queries.get("monitor/count_active_by_status", **parts), {"values": active}
    ).fetchall()
    by_status.update({status: n for status, n in exact})
    estimated = tuple(r for r in ROLES if r not in ("ready", "running") and spec.values(r))
    return by_status, estimated


def _optional(name: str, fn: Callable[[], list[T]], notes: list[str]) -> list[T]:
    """A section the role may lack the privilege for: switched off with a note, like pg_activity."""
    try:
        return fn()
    except errors.InsufficientPrivilege as exc:
        notes.append(f"{name} unavailable: {str(exc).splitlines()[0]}")
        return []


def wait_chain(pid: int, blocked_by: dict[int, tuple[int, ...]]) -> tuple[int, ...]:
    """Root blocker first, `pid` last, following the first blocker of each waiter."""
    chain = [pid]
    while blocked_by.get(chain[-1]) and len(chain) < 50:
        nxt = blocked_by[chain[-1]][0]
        if nxt in chain:  # a deadlock about to be broken by the server
            break
        chain.append(nxt)
    return tuple(reversed(chain))


def collect(conn: psycopg.Connection, spec: QueueSpec) -> Snapshot:
    """One snapshot of the queue and of the sessions around it."""
    started = time.perf_counter()
    parts = queue_parts(spec)
    notes: list[str] = []
    try:
        server_row = conn.execute(queries.load("monitor/get_server_info")).fetchone()
        by_status, estimated = _counts(conn, spec, parts, notes)
    except errors.InsufficientPrivilege as exc:
        raise UserError(
            f"no read access to {spec.table}: {str(exc).splitlines()[0]}; "
            f"GRANT SELECT ON {spec.table} TO {conn.info.user}"
        ) from exc
    server = ServerInfo(server_row[0], server_row[1], server_row[2], describe_address(conn))

    counts = {role: sum(by_status.get(v, 0) for v in spec.values(role)) for role in ROLES}
    active = spec.values_of(ACTIVE_ROLES)

    holders: list[RowLockHolder] = []
    locked = {"ready": 0, "running": 0}
    for status, pid, app, n in conn.execute(
        queries.get("monitor/count_row_locks", **parts), {"values": active}
    ).fetchall():
        role = spec.role_of(status) or "ready"
        locked[role] = locked.get(role, 0) + n
        holders.append(RowLockHolder(pid=pid, role=role, rows=n, application_name=app))

    oldest = None
    if spec.columns.created_at:
        oldest = conn.execute(
            queries.get("monitor/get_oldest_ready_age", **parts),
            {"values": list(spec.values("ready"))},
        ).fetchone()[0]

    lock_params = {**table_params(spec), "limit": ROW_LIMIT}
    locks = _optional("locks", lambda: _rows(
        conn, LockInfo, queries.load("monitor/get_locks"), lock_params), notes)
    raw_waits = _optional("lock waits", lambda: conn.execute(
        queries.load("monitor/get_lock_waits")).fetchall(), notes)
    blocked_by = {r[0]: tuple(r[3] or ()) for r in raw_waits}
    waiting = tuple(
        WaitingSession(pid=r[0], backend_start=r[1], application_name=r[2],
                       blocked_by=tuple(r[3] or ()), wait_s=r[4] or 0.0, wait_event=r[5],
                       query=r[6], chain=wait_chain(r[0], blocked_by))
        for r in raw_waits[:ROW_LIMIT]
    )
    blocker_pids = sorted({p for w in waiting for p in w.blocked_by})
    blockers = _rows(conn, SessionInfo, queries.load("monitor/get_sessions"),
                     {"pids": blocker_pids}) if blocker_pids else []
    idle = _rows(conn, IdleTransaction, queries.load("monitor/get_idle_transactions"), {})

    stale: list[StaleLease] = []
    if spec.columns.lease_until or spec.columns.started_at:
        stale = _rows(conn, StaleLease, queries.get("monitor/get_stale_leases", **parts), {
            "values": list(spec.values("running")),
            "stale_after_s": spec.policy.stale_after_s,
            "worker_session": spec.policy.worker_session,
            "limit": ROW_LIMIT,
        })
    else:
        notes.append("stale leases unknown: the spec names no lease_until or started_at column")

    notes.extend(partial_sections(conn))
    return Snapshot(
        taken_at=datetime.now(timezone.utc),
        queue=str(spec.table),
        server=server,
        counts=counts,
        estimated=estimated,
        by_status=by_status,
        locked=locked,
        row_lock_holders=tuple(holders),
        oldest_ready_age_s=oldest,
        locks=tuple(locks),
        waiting=waiting,
        idle_in_transaction=tuple(idle[:ROW_LIMIT]),
        stale_leases=tuple(stale),
        blockers=tuple(blockers),
        warnings=tuple(notes) + state_warnings(spec, by_status),
        elapsed_ms=(time.perf_counter() - started) * 1000,
    )
