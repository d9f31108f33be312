"""The sessions around the queue, in one statement per poll: locks, waits with their
blockers, transactions left idle, and the queue rows held now with their holders.

pg_locks is no MVCC view: each read of it is another moment. One statement reads it
once (and pg_stat_activity once) and derives everything from that reading, so the
blocker tree, the job a waiter is queued on and who holds that job are of one moment.

A row lock is not in pg_locks: it is written into the row (xmax). The statement reads
the xmax of the rows that matter (the rows sessions are queued on, rows a session still
in the same transaction was seen queued on earlier, and the active rows through their
indexes while some transaction holds a lock on the table) and decodes it: a running
transaction (pg_locks' transactionid locks map it to its session), or a multixact whose
running members hold the row, each with its mode. A plain read cannot see the tuple's
infomask (pageinspect can; the monitor does not use it), so an xmax that is no running
transaction is read as a multixact only where one by that number exists; a stale plain
xid that happens to equal a live multixact's number would be misread, which needs the
multixact counter to have reached the transaction ids' range.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql

import queries
from dashboard.models import IdleTransaction, LockInfo, QueueSpec, SessionInfo, WaitingSession
from dashboard.queue_sql.parts import statement, value_rows

ROW_LIMIT = 1000  # per table of the snapshot; the UI shows the worst first
IDLE_STATES = ("idle in transaction", "idle in transaction (aborted)")
NO_MULTIXACT = sql.SQL("NULL::xid")


@dataclass(frozen=True)
class HeldGroup:
    """Queue rows one session holds, of one state value and group, in one mode."""

    pid: int
    mode: str | None  # a multixact member's; None for a plain xmax
    status: str | None
    group: str | None
    rows: int
    ids: tuple[Any, ...]  # the first few, in id order


@dataclass(frozen=True)
class QueuedRow:
    """The queue row a session is queued on (its tuple lock), and who holds it now."""

    pid: int
    granted: bool  # first in line
    job_id: Any
    status: str | None
    holders: tuple[tuple[int, str | None], ...]


@dataclass
class SessionsRead:
    """One moment of the sessions: what the statement returned, typed."""

    locks: list[LockInfo] = field(default_factory=list)
    waiting: list[WaitingSession] = field(default_factory=list)
    blockers: list[SessionInfo] = field(default_factory=list)
    idle: list[IdleTransaction] = field(default_factory=list)
    held: list[HeldGroup] = field(default_factory=list)
    locked: dict[tuple[str | None, str | None], int] = field(default_factory=dict)
    queued: dict[int, QueuedRow] = field(default_factory=dict)
    xacts: dict[str, int] = field(default_factory=dict)  # running xid -> its session
    xact_start: dict[int, datetime | None] = field(default_factory=dict)  # pid -> its xact
    deadlocks: int | None = None
    hidden_note: str | None = None
    rows_read: bool = False  # whether queue rows were decoded (holders known)


def wait_chain(pid: int, blocked_by: dict[int, tuple[int, ...]]) -> tuple[int, ...]:
    """Root blocker first, `pid` last, following the first blocker of each waiter."""
    chain = [pid]
    while blocked_by.get(chain[-1]) and len(chain) < 50:
        nxt = blocked_by[chain[-1]][0]
        if nxt in chain:  # a deadlock about to be broken by the server
            break
        chain.append(nxt)
    return tuple(reversed(chain))


def compose(
    spec: QueueSpec,
    parts: dict[str, sql.Composable],
    values: tuple[str, ...] | None,
    *,
    multixacts: bool = True,
) -> sql.Composed:
    """The statement: `values` are the active state values to read through their indexes
    (empty in scan mode); None reads no queue row at all (the table is locked).

    The spec's constants (the table's name, its state values) are quoted in as literals,
    not passed as parameters: then the server plans the prepared statement once (its
    generic plan, which can use a partial index on `status = 'ready'`) instead of on
    every poll, and planning it costs more than running it. Only the ids seen queued
    before, which change from poll to poll, are a parameter."""
    if values is None:
        rows: sql.Composable = queries.expression("monitor/queue_rows_none")
    else:
        branches = [
            statement(spec, "monitor/queue_rows_queued", **parts),
            statement(spec, "monitor/queue_rows_by_id", **parts),
        ] + [
            statement(
                spec,
                "monitor/queue_rows_of_value",
                **parts,
                value_rows=value_rows(spec, parts, v, sql.Literal(v)),
            )
            for v in values
        ]
        rows = sql.SQL("\nUNION\n").join(sql.SQL("({})").format(b) for b in branches)
    multi = (
        queries.expression("monitor/multixact_of_xmax").format(xmax=sql.SQL("xm.xmax"))
        if multixacts
        else NO_MULTIXACT
    )
    return queries.get(
        "monitor/get_sessions_at_once",
        queue_rows=rows,
        multixact=multi,
        schema_name=sql.Literal(spec.table.schema),
        table_name=sql.Literal(spec.table.name),
        row_limit=sql.Literal(ROW_LIMIT),
    )


def params(values: tuple[str, ...] | None, seen_ids: list[Any]) -> dict[str, Any] | None:
    """The statement's one parameter, where it reads queue rows at all."""
    return None if values is None else {"seen_ids": [str(i) for i in seen_ids]}


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _lock(k: dict, s: dict | None) -> LockInfo:
    return LockInfo(
        pid=k["pid"],
        backend_start=_time(s["backend_start"]) if s else None,
        application_name=s["application_name"] if s else "",
        locktype=k["locktype"],
        mode=k["mode"],
        granted=k["granted"],
        relation=k["relation"],
        on_queue_table=k["on_queue_table"],
        wait_s=k["wait_s"],
        state=s["state"] if s else None,
        query=s["query"] if s else "",
        page=k["page"],
        tuple_index=k["tuple_index"],
        advisory_key=k["advisory_key"],
        xid=k["xid"],
    )


def parse(row: tuple, rows_read: bool) -> SessionsRead:
    """The statement's one row (JSON sections) as typed records."""
    locks, sessions, waits, held, locked, queued, xacts, deadlocks, role, sees_all, hidden = row
    by_pid = {s["pid"]: s for s in sessions}
    read = SessionsRead(deadlocks=deadlocks, rows_read=rows_read)
    read.xact_start = {pid: _time(s["xact_start"]) for pid, s in by_pid.items()}
    read.locks = [_lock(k, by_pid.get(k["pid"])) for k in locks]
    read.xacts = {xid: pid for xid, pid in xacts}
    read.held = [
        HeldGroup(g["pid"], g["mode"], g["status"], g["grp"], g["n"], tuple(g["ids"] or ()))
        for g in held
    ]
    read.locked = {(r["status"], r["grp"]): r["n"] for r in locked}
    for q in queued:
        holders = tuple((p, m) for p, m in q["holders"] or ())
        read.queued[q["pid"]] = QueuedRow(q["pid"], q["granted"], q["id"], q["status"], holders)
    blocked_by = {w["pid"]: tuple(w["blocked_by"] or ()) for w in waits}
    for w in sorted(waits, key=lambda w: -(w["wait_s"] or 0.0))[:ROW_LIMIT]:
        s = by_pid.get(w["pid"], {})
        row = read.queued.get(w["pid"])
        read.waiting.append(
            WaitingSession(
                pid=w["pid"],
                backend_start=_time(s.get("backend_start")),
                application_name=s.get("application_name", ""),
                blocked_by=blocked_by[w["pid"]],
                wait_s=w["wait_s"] or 0.0,
                wait_event=s.get("wait_event", ""),
                query=s.get("query", ""),
                chain=wait_chain(w["pid"], blocked_by),
                job_id=row.job_id if row else None,
                first_in_line=bool(row and row.granted),
                row_holders=tuple(sorted({p for p, _ in row.holders})) if row else (),
            )
        )
    blockers = sorted({p for pids in blocked_by.values() for p in pids})
    read.blockers = [
        SessionInfo(
            pid=p,
            backend_start=_time(by_pid[p]["backend_start"]),
            application_name=by_pid[p]["application_name"],
            state=by_pid[p]["state"] or "",
            xact_age_s=by_pid[p]["xact_age_s"],
            query=by_pid[p]["query"],
        )
        for p in blockers
        if p in by_pid
    ]
    idle = sorted(
        (s for s in sessions if s["state"] in IDLE_STATES),
        key=lambda s: (-(s["xact_age_s"] or 0.0), s["pid"]),
    )
    read.idle = [
        IdleTransaction(
            pid=s["pid"],
            backend_start=_time(s["backend_start"]),
            application_name=s["application_name"],
            user=s["usename"],
            xact_age_s=s["xact_age_s"],
            idle_s=s["idle_s"] or 0.0,
            locks_held=s["locks_held"],
            xmin_age=s["xmin_age"],
            query=s["query"],
            xact_start=_time(s["xact_start"]),
        )
        for s in idle[:ROW_LIMIT]
    ]
    if not sees_all and hidden:
        read.hidden_note = (  # pg_locks shows every session's locks; pg_stat_activity not
            f"role {role} cannot see other roles' sessions: idle in transaction leaves "
            "theirs out, and their waits, locks and blockers show no state, start or query; "
            f"GRANT pg_monitor TO {role} (or pg_read_all_stats)"
        )
    return read


def read_sessions(
    conn: psycopg.Connection,
    spec: QueueSpec,
    stmt: sql.Composed | bytes,
    values: tuple[str, ...] | None,
    seen_ids: list[Any],
) -> SessionsRead:
    row = conn.execute(stmt, params(values, seen_ids)).fetchone()
    return parse(row, rows_read=values is not None)


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
