"""Fixed snapshots for the UI tests and the benchmark: no database, fixed timestamps."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

from dashboard.config import load_preset
from dashboard.models import (
    IdleTransaction,
    LockInfo,
    RowLockHolder,
    ServerInfo,
    SessionInfo,
    Snapshot,
    StaleLease,
    WaitingSession,
)

T0 = datetime(2026, 1, 15, 9, 30, 0, tzinfo=timezone.utc)
SERVER = ServerInfo("17.2", "shop", "ops", "db.internal:5432")
LONG_QUERY = ("UPDATE queuetop_demo.jobs SET status = 'running', worker = $1, lease_token = "
              "lease_token + 1, leased_until = now() + interval '30 seconds' WHERE id = (SELECT id "
              "FROM queuetop_demo.jobs WHERE status = 'ready' ORDER BY priority DESC, id "
              "FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING id, payload")


def demo_spec():
    return load_preset("demo")


def fixed_snapshot(step: int = 0, rows: int = 3) -> Snapshot:
    """A busy queue at T0 + step*2s: `rows` entries in each table, a few changing per step."""
    at = T0 + timedelta(seconds=2 * step)
    locks = tuple(
        LockInfo(pid=4100 + i, backend_start=T0, application_name=f"worker-{i % 7}",
                 locktype="tuple" if i % 2 else "relation", mode="RowExclusiveLock"
                 if i % 2 == 0 else "AccessExclusiveLock", granted=i % 5 != 4,
                 relation="queuetop_demo.jobs" if i % 3 else "public.orders",
                 on_queue_table=bool(i % 3), wait_s=None if i % 5 != 4 else 3.0 + step,
                 state="active", query=LONG_QUERY)
        for i in range(rows)
    )
    waiting = [WaitingSession(pid=5001, backend_start=T0, application_name="worker-3",
                              blocked_by=(4200,), wait_s=12.5 + step, wait_event="Lock:tuple",
                              query=LONG_QUERY, chain=(4200, 5001)),
               WaitingSession(pid=5002, backend_start=T0, application_name="worker-4",
                              blocked_by=(5001,), wait_s=8.0 + step,
                              wait_event="Lock:transactionid",
                              query="SELECT 1 FROM queuetop_demo.jobs WHERE id = 7 FOR UPDATE",
                              chain=(4200, 5001, 5002))]
    waiting += [WaitingSession(pid=6000 + i, backend_start=T0, application_name="worker-9",
                               blocked_by=(4300,), wait_s=float(i), wait_event="Lock:tuple",
                               query=LONG_QUERY, chain=(4300, 6000 + i))
                for i in range(max(rows - 2, 0))]
    blockers = (
        SessionInfo(4200, T0, "psql", "idle in transaction", 95.0, "SELECT * FROM jobs FOR UPDATE"),
        SessionInfo(4300, T0, "report-job", "active", 40.0, "LOCK TABLE queuetop_demo.jobs"),
    )
    idle = tuple(
        IdleTransaction(pid=4200 + i, backend_start=T0, application_name="psql" if i == 0
                        else f"app-{i}", user="ops", xact_age_s=95.0 + step * 2 - i,
                        idle_s=60.0 + step * 2 - i, locks_held=3 + i % 4,
                        xmin_age=1200 + i if i % 3 else None, query=LONG_QUERY)
        for i in range(rows)
    )
    stale = tuple(
        StaleLease(id=1000 + i, status="running", worker=f"worker-{i % 7}", lease_token=i % 4 + 1,
                   attempts=i % 3 + 1, started_at=T0 - timedelta(minutes=5 + i % 50),
                   lease_until=T0 - timedelta(minutes=4), overdue_s=240.0 + 2 * step + rows - i,
                   worker_alive=(None, True, False)[i % 3])
        for i in range(rows) if (i + step) % 11 != 0 or rows < 10
    )
    return Snapshot(
        taken_at=at, queue="queuetop_demo.jobs", server=SERVER,
        counts={"ready": 1240 - 30 * step, "running": 8, "done": 52310 + 45 * step, "failed": 12,
                "dead": 3},
        estimated=("done",), by_status={"ready": 1240 - 30 * step, "running": 8,
                                        "done": 52310 + 45 * step, "failed": 12, "dead": 3},
        locked={"ready": 2, "running": 8},
        row_lock_holders=(RowLockHolder(4200, "ready", 2, "psql"),
                          RowLockHolder(4101, "running", 8, "worker-1")),
        oldest_ready_age_s=42.0 + step, locks=locks, waiting=tuple(waiting),
        idle_in_transaction=idle, stale_leases=stale, blockers=blockers,
        warnings=(), elapsed_ms=12.0,
    )


def fixed_history(points: int = 12) -> list[Snapshot]:
    return [fixed_snapshot(step) for step in range(points)]


def with_warning(snap: Snapshot) -> Snapshot:
    return replace(snap, warnings=("status value 'paused' is not mapped to any role",))
