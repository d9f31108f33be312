"""Fixed snapshots for the UI tests and the benchmark: no database, fixed timestamps."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta, timezone

from dashboard.audit.trail import AuditPage, AuditRecord
from dashboard.config import load_preset
from dashboard.loadgen import LoadSettings, LoadSnapshot, WorkerStats
from dashboard.loadgen.stats import COUNTERS, Latency
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
LONG_QUERY = (
    "UPDATE queuetop_demo.jobs SET status = 'running', worker = $1, lease_token = "
    "lease_token + 1, leased_until = now() + interval '30 seconds' WHERE id = (SELECT id "
    "FROM queuetop_demo.jobs WHERE status = 'ready' ORDER BY priority DESC, id "
    "FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING id, payload"
)


def demo_spec():
    return load_preset("demo")


def queue_lock(
    pid: int, app: str, mode: str = "RowExclusiveLock", state: str = "idle in transaction"
) -> LockInfo:
    """A lock a session holds on the queue table: what makes it one of the queue's."""
    return LockInfo(
        pid=pid,
        backend_start=T0,
        application_name=app,
        locktype="relation",
        mode=mode,
        granted=True,
        relation="queuetop_demo.jobs",
        on_queue_table=True,
        wait_s=None,
        state=state,
        query=LONG_QUERY,
    )


def with_idle(snap: Snapshot, idle: Sequence[IdleTransaction]) -> Snapshot:
    """`snap` with these idle transactions first, each holding a lock on the queue table."""
    return replace(
        snap,
        idle_in_transaction=(*idle, *snap.idle_in_transaction),
        locks=(*snap.locks, *(queue_lock(i.pid, i.application_name) for i in idle)),
    )


def fixed_snapshot(step: int = 0, rows: int = 3) -> Snapshot:
    """A busy queue at T0 + step*2s: `rows` entries in each table, a few changing per step."""
    at = T0 + timedelta(seconds=2 * step)
    locks = tuple(
        LockInfo(
            pid=4100 + i,
            backend_start=T0,
            application_name=f"worker-{i % 7}",
            locktype="tuple" if i % 2 else "relation",
            mode="RowExclusiveLock" if i % 2 == 0 else "AccessExclusiveLock",
            granted=i % 5 != 4,
            relation="queuetop_demo.jobs" if i % 3 else "public.orders",
            on_queue_table=bool(i % 3),
            wait_s=None if i % 5 != 4 else 3.0 + step,
            state="active",
            query=LONG_QUERY,
            **({"page": i, "tuple_index": 3, "job_id": str(2000 + i)} if i % 2 else {}),
        )
        for i in range(rows)
    )
    waiting = [
        WaitingSession(
            pid=5001,
            backend_start=T0,
            application_name="worker-3",
            blocked_by=(4200,),
            wait_s=12.5 + step,
            wait_event="Lock:tuple",
            query=LONG_QUERY,
            chain=(4200, 5001),
            job_id="1202",
        ),
        WaitingSession(
            pid=5002,
            backend_start=T0,
            application_name="worker-4",
            blocked_by=(5001,),
            wait_s=8.0 + step,
            wait_event="Lock:transactionid",
            query="SELECT 1 FROM queuetop_demo.jobs WHERE id = 7 FOR UPDATE",
            chain=(4200, 5001, 5002),
        ),
    ]
    waiting += [
        WaitingSession(
            pid=6000 + i,
            backend_start=T0,
            application_name="worker-9",
            blocked_by=(4300,),
            wait_s=float(i),
            wait_event="Lock:tuple",
            query=LONG_QUERY,
            chain=(4300, 6000 + i),
        )
        for i in range(max(rows - 2, 0))
    ]
    blockers = (
        SessionInfo(4200, T0, "psql", "idle in transaction", 95.0, "SELECT * FROM jobs FOR UPDATE"),
        SessionInfo(4300, T0, "report-job", "active", 40.0, "LOCK TABLE queuetop_demo.jobs"),
    )
    idle = tuple(
        IdleTransaction(
            pid=4200 + i,
            backend_start=T0,
            application_name="psql" if i == 0 else f"app-{i}",
            user="ops",
            xact_age_s=95.0 + step * 2 - i,
            idle_s=60.0 + step * 2 - i,
            locks_held=3 + i % 4,
            xmin_age=1200 + i if i % 3 else None,
            query=LONG_QUERY,
        )
        for i in range(rows)
    )
    stale = tuple(
        StaleLease(
            id=1000 + i,
            status="running",
            worker=f"worker-{i % 7}",
            lease_token=i % 4 + 1,
            attempts=i % 3 + 1,
            started_at=T0 - timedelta(minutes=5 + i % 50),
            lease_until=T0 - timedelta(minutes=4),
            overdue_s=240.0 + 2 * step + rows - i,
            worker_alive=(None, True, False)[i % 3],
        )
        for i in range(rows)
        if (i + step) % 11 != 0 or rows < 10
    )
    # the sessions around the queue hold locks on its table: the report job's LOCK TABLE
    # and each idle transaction's row lock (the tabs show the queue's sessions by default)
    locks += (queue_lock(4300, "report-job", "AccessExclusiveLock", "active"),)
    locks += tuple(queue_lock(i.pid, i.application_name) for i in idle)
    return Snapshot(
        taken_at=at,
        queue="queuetop_demo.jobs",
        server=SERVER,
        counts={
            "ready": 1240 - 30 * step,
            "running": 8,
            "done": 52310 + 45 * step,
            "failed": 12,
            "dead": 3,
        },
        estimated=("done",),
        by_status={
            "ready": 1240 - 30 * step,
            "running": 8,
            "done": 52310 + 45 * step,
            "failed": 12,
            "dead": 3,
        },
        locked={"ready": 2, "running": 8},
        row_lock_holders=(
            RowLockHolder(4200, "ready", 2, "psql"),
            RowLockHolder(4101, "running", 8, "worker-1"),
        ),
        oldest_ready_age_s=42.0 + step,
        locks=locks,
        waiting=tuple(waiting),
        idle_in_transaction=idle,
        stale_leases=stale,
        blockers=blockers,
        warnings=(),
        elapsed_ms=12.0,
    )


def fixed_history(points: int = 12) -> list[Snapshot]:
    return [fixed_snapshot(step) for step in range(points)]


def with_warning(snap: Snapshot) -> Snapshot:
    return replace(snap, warnings=("status value 'paused' is not mapped to any role",))


def fixed_load_snapshot(double_claims: int = 0) -> LoadSnapshot:
    """What a running demo's load generator reports: one worker stalled, one stopping, one
    on its second session (it reconnected after a lost one)."""
    counters = dict.fromkeys(COUNTERS, 0)
    workers = tuple(
        WorkerStats(
            k=k,
            name=f"queuetop-worker-{k}",
            pid=7100 + k,
            backend_pid=4100 + k,
            alive=k != 5,
            stalled=k == 4,
            counters={
                **counters,
                "claimed": 400 + 313 * k,
                "claims": 400 + 313 * k,
                "completed": 395 + 313 * k,
                "failed": k % 3,
                "lock_waits": 2 * k,
            },
            session=f"queuetop-worker-{k}" + (".2" if k == 3 else ""),
        )
        for k in range(2, 6)
    )
    totals = {
        **counters,
        "claimed": 1690,
        "completed": 1662,
        "failed": 9,
        "dead": 1,
        "lock_waits": 28,
        "lock_errors": 3,
        "empty_claims": 41,
    }
    return LoadSnapshot(
        running=True,
        strategy="for-update",
        hold_tx=True,
        batch=1,
        work_ms=80.0,
        target_workers=4,
        live_workers=3,
        producer_paused=False,
        rate=40.0,
        elapsed_s=42.0,
        totals=totals,
        crashed=1,
        double_claims=double_claims,
        enqueued=1990,
        rescued=0,
        claims_per_s=38.4,
        completions_per_s=37.9,
        lock_waits_per_s=3.5,
        lock_errors_per_s=0.5,
        latency=Latency(0.9, 31.5, 460.0),
        recent_latency=Latency(1.24, 12.8, 1421.3),
        workers=workers,
    )


def lost_database_load_snapshot() -> LoadSnapshot:
    """The same generator while the server is down: every connection lost, retrying."""
    snap = fixed_load_snapshot()
    workers = tuple(replace(w, connected=not w.alive) for w in snap.workers)
    return replace(
        snap,
        live_workers=0,
        claims_per_s=0.0,
        completions_per_s=0.0,
        workers=workers,
        reconnecting=("producer", *(w.name for w in workers if w.alive)),
        connection_error='connection failed: connection to server at "127.0.0.1", '
        "port 5432 failed: Connection refused",
    )


class FixedLoadGen:
    """Stands in for a LoadGenerator in screenshots: fixed stats, knobs recorded."""

    def __init__(self, snap: LoadSnapshot | None = None) -> None:
        self.snap = snap or fixed_load_snapshot()
        self.calls: list[tuple] = []
        self.settings = LoadSettings(strategy=self.snap.strategy, hold_tx=self.snap.hold_tx)

    def stats(self) -> LoadSnapshot:
        return self.snap

    def start(self) -> None:
        self.calls.append(("start",))

    def stop(self) -> None:
        self.calls.append(("stop",))

    def set_strategy(self, strategy: str) -> None:
        self.set_knobs(strategy=strategy)

    def set_hold_tx(self, on: bool) -> None:
        self.set_knobs(hold_tx=on)

    def set_random_crashes(self, on: bool) -> None:
        self.calls.append(("set_random_crashes", on))
        self.settings = replace(self.settings, crash_rate=0.001 if on else 0.0)

    def set_knobs(self, **knobs) -> None:
        for name, value in knobs.items():
            self.calls.append((f"set_{name}", value))
        self.settings = replace(self.settings, **knobs)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args: self.calls.append((name, *args))


def fixed_audit_page() -> AuditPage:
    """What queuetop.audit_log holds after a night's recovery: changes, skips, a session
    terminated, the load generator's rescues; newest first, fixed timestamps."""

    def job(status: str, worker: str | None, token: int) -> dict:
        return {
            "status": status,
            "worker": worker,
            "lease_token": str(token),
            "attempts": 1,
            "lease_until": (T0 - timedelta(minutes=4)).isoformat(),
        }

    rows = [
        (
            "requeue",
            "1001",
            "changed",
            "worker-1 died at 3am",
            job("running", "worker-1", 2),
            "ready",
            "ops",
            "alice",
            None,
        ),
        (
            "requeue",
            "1002",
            "skipped",
            "worker-1 died at 3am",
            job("done", None, 2),
            None,
            "ops",
            "alice",
            {"skip_reason": "completed meanwhile"},
        ),
        (
            "dead-letter",
            "1017",
            "changed",
            "poison message: payload is not JSON",
            job("failed", None, 3),
            "table:queuetop_demo.jobs_dead",
            "ops",
            "alice",
            None,
        ),
        (
            "terminate",
            "4200",
            "changed",
            "idle in transaction for 2h, holding the xmin",
            {"pid": 4200, "state": "idle in transaction"},
            "terminated",
            "ops",
            "alice",
            None,
        ),
        (
            "cancel",
            "5001",
            "skipped",
            None,
            {"pid": 5001, "state": "active"},
            None,
            "ops",
            "bob",
            {"skip_reason": "pid reused: backend start differs"},
        ),
        (
            "rescue",
            "998",
            "changed",
            "lease expired",
            job("running", "queuetop-worker-3", 1),
            "ready",
            "postgres",
            "root",
            {"actor": "queuetop load --rescue"},
        ),
        (
            "requeue",
            "990",
            "skipped",
            None,
            job("running", "worker-2", 5),
            None,
            "ops",
            "bob",
            {"skip_reason": "lease renewed"},
        ),
    ]
    records = tuple(
        AuditRecord(
            at=T0 - timedelta(minutes=7 * i),
            action=action,
            target=target,
            outcome=outcome,
            reason=reason,
            from_state=before,
            to_state=after,
            db_user=db_user,
            os_user=os_user,
            queue_table="queuetop_demo.jobs" if action not in ("terminate", "cancel") else None,
            detail=detail,
            record_id=f"audit_id {len(rows) - i}",
        )
        for i, (
            action,
            target,
            outcome,
            reason,
            before,
            after,
            db_user,
            os_user,
            detail,
        ) in enumerate(rows)
    )
    return AuditPage("queuetop.audit_log", records)


def fixed_jobs(n: int = 250) -> list:
    """Failed jobs as a night of outages leaves them, plus two in the dead-letter table: long
    errors, one with control characters, ages fixed."""
    from dashboard.browse import DEAD_TABLE, QUEUE, BrowsedJob

    errors = (
        'psycopg.OperationalError: connection to server at "10.0.3.7", port 5432 '
        "failed: timeout expired",
        "KeyError: 'customer_id'",
        "smtp 451 4.7.0 try again later\n\x1b[31mretrying\x1b[0m",
        "ValueError: payload is not JSON: b'\\x00\\x01garbage'",
    )
    jobs = [
        BrowsedJob(
            sort_key=5000 - i,
            id=str(5000 - i),
            status="failed",
            attempts=i % 5 + 1,
            worker=f"worker-{i % 7}",
            age_s=95.0 + 37 * i,
            last_error=errors[i % len(errors)],
            group=("mail", "sms", "billing")[i % 3],
            lease_token=str(i % 4 + 1),
            lease_until=None,
            expired=None,
            requeue_refusal=None,
            dead_letter_refusal=None,
            dead_reason=None,
            source=QUEUE,
        )
        for i in range(n)
    ]
    dead = [
        BrowsedJob(
            sort_key=4990 - i,
            id=str(4990 - i),
            status="running",
            attempts=3,
            worker="worker-2",
            age_s=7200.0,
            last_error=None,
            group="mail",
            lease_token="3",
            lease_until=T0,
            expired=None,
            requeue_refusal=None,
            dead_letter_refusal=None,
            dead_reason="poison message: payload is not JSON",
            source=DEAD_TABLE,
        )
        for i in range(2)
    ]
    return jobs + dead


class FixedBrowserSource:
    """Pages of fixed jobs, keyset-paged in Python as the database pages them."""

    def __init__(self, jobs: list | None = None) -> None:
        self.jobs = fixed_jobs() if jobs is None else jobs
        self.reads: list = []

    def page(self, query, start=None):
        from dashboard.browse import DEAD_TABLE, QUEUE, Page

        self.reads.append((query, start))
        rows = [j for j in self.jobs if (query.role == "dead") == (j.source == DEAD_TABLE)]
        rows.sort(key=lambda j: j.sort_key, reverse=query.newest_first)
        if query.text:
            rows = [j for j in rows if query.text.lower() in (j.last_error or "").lower()]
        if query.group is not None:
            rows = [j for j in rows if j.group == query.group]
        if start is not None:
            rows = [
                j
                for j in rows
                if (
                    j.sort_key < start.sort_key
                    if query.newest_first
                    else j.sort_key > start.sort_key
                )
            ]
        sources = (DEAD_TABLE,) if query.role == "dead" else (QUEUE,)
        return Page(query, tuple(rows[: query.limit]), start, len(rows) > query.limit, sources, 1)

    def row(self, job):
        from dashboard.browse import JobRow, RowField

        payload = '{"to": "ops@example.com", "body": "' + "x" * 1990
        return JobRow(
            job.id,
            job.source,
            (
                RowField("id", job.id, len(job.id), "number"),
                RowField("status", job.status, len(job.status), "string"),
                RowField("payload", payload[:2000], 48_213, "string"),
                RowField("last_error", job.last_error, len(job.last_error or ""), "string"),
                RowField("worker", None, None, "null"),
            ),
        )
