"""A fixed for-update pile-up, as the monitor reads one (for SVG snapshots): worker-1 holds
job 11406 in its held claim transaction; worker-2 was queued on job 11405, which its
holder finished, so it holds that row and is first in line for 11406; worker-3 and
worker-4 are queued behind worker-2. Every session has its ordinary table locks too."""

from __future__ import annotations

from dataclasses import replace

from ui_snapshots import T0, fixed_snapshot

from dashboard.models import (
    IdleTransaction,
    LockInfo,
    RowLockHolder,
    SessionInfo,
    Snapshot,
    WaitingSession,
)

CLAIM = (
    "WITH next AS (SELECT t.id AS id FROM queuetop_demo.jobs AS t WHERE t.status = $1 "
    "ORDER BY t.id LIMIT $2 FOR UPDATE) UPDATE queuetop_demo.jobs AS t SET status = $3 "
    "FROM next WHERE t.id = next.id RETURNING t.id AS id, t.lease_token AS token"
)
TABLES = ("queuetop_demo.jobs", "queuetop_demo.jobs_pkey", "queuetop_demo.jobs_ready_idx")


def _lock(pid: int, locktype: str, mode: str, granted: bool = True, **kw) -> LockInfo:
    return LockInfo(
        pid=pid,
        backend_start=T0,
        application_name=f"queuetop-worker-{pid - 4100}",
        locktype=locktype,
        mode=mode,
        granted=granted,
        relation=kw.pop("relation", None),
        on_queue_table=kw.pop("on_queue_table", False),
        wait_s=kw.pop("wait_s", None),
        state="idle in transaction" if pid == 4101 else "active",
        query=CLAIM,
        **kw,
    )


def _ordinary(pid: int, xid: str | None) -> list[LockInfo]:
    out = [
        _lock(pid, "relation", "RowShareLock", relation=r, on_queue_table=r == TABLES[0])
        for r in TABLES
    ]
    if xid:
        out.append(_lock(pid, "relation", "RowExclusiveLock", relation=TABLES[0]))
        out.append(_lock(pid, "transactionid", "ExclusiveLock", xid=xid))
    return out


def pile_up_snapshot() -> Snapshot:
    queue = {"relation": TABLES[0], "on_queue_table": True, "page": 130}
    locks = [
        _lock(4102, "transactionid", "ShareLock", False, xid="9001", wait_s=6.2, job_id=None),
        _lock(
            4103,
            "tuple",
            "AccessExclusiveLock",
            False,
            wait_s=5.1,
            tuple_index=7,
            job_id=11406,
            **queue,
        ),
        _lock(
            4104,
            "tuple",
            "AccessExclusiveLock",
            False,
            wait_s=2.4,
            tuple_index=7,
            job_id=11406,
            **queue,
        ),
        _lock(4102, "tuple", "AccessExclusiveLock", tuple_index=7, job_id=11406, **queue),
    ]
    locks += _ordinary(4101, "9001") + _ordinary(4102, "9002")
    locks += _ordinary(4103, None) + _ordinary(4104, None)
    waiting = (
        WaitingSession(
            4102,
            T0,
            "queuetop-worker-2",
            (4101,),
            6.2,
            "Lock:transactionid",
            CLAIM,
            (4101, 4102),
            11406,
            True,
            (4101,),
        ),
        WaitingSession(
            4103,
            T0,
            "queuetop-worker-3",
            (4102,),
            5.1,
            "Lock:tuple",
            CLAIM,
            (4101, 4102, 4103),
            11406,
            False,
            (4101,),
        ),
        WaitingSession(
            4104,
            T0,
            "queuetop-worker-4",
            (4102,),
            2.4,
            "Lock:tuple",
            CLAIM,
            (4101, 4102, 4104),
            11406,
            False,
            (4101,),
        ),
    )
    base = fixed_snapshot(rows=0)
    return replace(
        base,
        locks=tuple(locks),
        waiting=waiting,
        blockers=(
            SessionInfo(4101, T0, "queuetop-worker-1", "idle in transaction", 7.9, CLAIM),
            SessionInfo(4102, T0, "queuetop-worker-2", "active", 7.0, CLAIM),
        ),
        row_lock_holders=(
            RowLockHolder(4101, "running", 1, "queuetop-worker-1", (11406,)),
            RowLockHolder(4102, "done", 1, "queuetop-worker-2", (11405,)),
        ),
        held_jobs={4101: (11406,), 4102: (11405,)},
        locked={"ready": 0, "running": 1},
        idle_in_transaction=(
            IdleTransaction(
                4101, T0, "queuetop-worker-1", "demo", 7.9, 6.3, 6, 3, CLAIM, T0, (11406,), 1
            ),
        ),
        stale_leases=(),
    )
