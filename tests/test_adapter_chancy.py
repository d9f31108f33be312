"""`--preset chancy` against chancy itself: its schema from its own migrations, jobs pushed
with its API, its real Worker in subprocesses (jobs in its default process pool).

Two workers run at once, each with its default uuid worker id: a live one on queue
`default` with a job that runs for an hour, and a victim on queue `victim`, whose whole
process group (the worker and its pool's children) is SIGKILLed mid-job. The live worker's
next heartbeat deletes the victim's row from chancy_workers once it expired (3 s here
instead of 90 s), which is how queuetop tells the orphan from the live job. After
`queuetop requeue --preset chancy`, a fresh worker completes the orphan exactly once.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import psycopg
import pytest
from helpers import wait_until
from library_support import kill_group, spawn, stop_group

from dashboard import actions, config, db, monitor
from dashboard.actions import ObservedJob
from dashboard.cli import main

if sys.version_info < (3, 11):
    pytest.skip("chancy needs Python >= 3.11", allow_module_level=True)
from chancy import Chancy, Queue, QueuedJob, Reference  # noqa: E402
from chancy_app import RUNS, failing, long_job, quick  # noqa: E402

TESTS = Path(__file__).resolve().parent
HOUR = 3600
# Where queuetop must place each of chancy's states (pending and retrying jobs due later
# are scheduled); the preset says the same, this is the test's own statement of it.
ROLE_OF = {
    "pending": "ready",
    "retrying": "ready",
    "running": "running",
    "succeeded": "done",
    "failed": "dead",
}
ACTIVE = ("ready", "scheduled", "running")


class Workers:
    """chancy's real Worker (tests/chancy_app.py) in subprocesses, each in its own group."""

    def __init__(self, dsn: str, folder: Path):
        self.dsn, self.folder = dsn, folder
        self.started: list[subprocess.Popen] = []

    def start(self, role: str, name: str) -> subprocess.Popen:
        proc = spawn(
            [sys.executable, str(TESTS / "chancy_app.py"), role],
            env={"CHANCY_DSN": self.dsn, "PYTHONPATH": str(TESTS)},
            cwd=self.folder,
            log=self.folder / f"{name}.log",
        )
        self.started.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.started:
            stop_group(proc)


@pytest.fixture
def workers(dsn, tmp_path):
    started = Workers(dsn, tmp_path)
    try:
        yield started
    finally:
        started.stop()


async def prepare(dsn: str) -> dict[str, Reference]:
    """chancy's migrations (with its default plugins' tables), two queues, the jobs."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(RUNS)
    later = datetime.now(timezone.utc) + timedelta(seconds=HOUR)
    jobs = {
        "quick1": quick.job,
        "quick2": quick.job,
        "live_long": long_job.job.with_kwargs(seconds=HOUR),
        "failed": failing.job,  # max_attempts 1: failed for good at once
        "scheduled": quick.job.with_scheduled_at(later),
        "orphan": long_job.job.with_kwargs(seconds=HOUR).with_queue("victim"),
    }
    async with Chancy(dsn) as app:
        await app.migrate()
        for name, role, concurrency in (("default", "live", 4), ("victim", "victim", 2)):
            await app.declare(
                Queue(name, concurrency=concurrency, polling_interval=1, tags={f"role={role}"}),
                upsert=True,
            )
        return {name: await app.push(job) for name, job in jobs.items()}


async def push_victim_quick(dsn: str) -> Reference:
    async with Chancy(dsn) as app:
        return await app.push(quick.job.with_queue("victim"))


async def get_jobs(dsn: str, refs: dict[str, Reference]) -> dict[str, QueuedJob]:
    async with Chancy(dsn) as app:
        found = {str(j.id): j for j in await app.get_jobs(list(refs.values()))}
    return {name: found[str(ref.identifier)] for name, ref in refs.items()}


def chancy_view(jobs: dict[str, QueuedJob]) -> tuple[dict[str, int], dict[str, dict]]:
    """chancy's own jobs (get_jobs) per role and per queue."""
    now = datetime.now(timezone.utc)
    roles: dict[str, int] = {}
    queues: dict[str, dict[str, int]] = {}
    for job in jobs.values():
        role = ROLE_OF[job.state.value]
        if role == "ready" and job.scheduled_at > now:
            role = "scheduled"
        roles[role] = roles.get(role, 0) + 1
        per_queue = queues.setdefault(job.queue, dict.fromkeys(ACTIVE, 0))
        if role in ACTIVE:
            per_queue[role] += 1
    return roles, queues


def states(dsn: str, refs: dict[str, Reference]) -> dict[str, str]:
    return {name: job.state.value for name, job in asyncio.run(get_jobs(dsn, refs)).items()}


def runs(conn: psycopg.Connection, ref: Reference, event: str) -> list[tuple]:
    return conn.execute(
        "SELECT claim_id FROM job_runs WHERE job_id = %s AND event = %s ORDER BY at",
        (ref.identifier, event),
    ).fetchall()


def queuetop(capsys, *argv: str) -> tuple[int, dict]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


def heartbeat_after_claim(conn: psycopg.Connection, ref: Reference) -> bool:
    row = conn.execute(
        "SELECT w.last_seen > j.started_at FROM chancy_jobs AS j JOIN "
        "chancy_workers AS w ON w.worker_id = j.taken_by WHERE j.id = %s",
        (ref.identifier,),
    ).fetchone()
    return bool(row and row[0])


def test_killed_chancy_worker_requeued_and_completed_once(workers, dsn, connect, capsys):
    refs = asyncio.run(prepare(dsn))
    assert main(["init-audit", "--dsn", dsn]) == 0
    capsys.readouterr()
    conn = connect(autocommit=True)

    workers.start("live", "worker-live")
    settled = {
        "quick1": "succeeded",
        "quick2": "succeeded",
        "live_long": "running",
        "failed": "failed",
    }
    wait_until(
        lambda: states(dsn, {k: refs[k] for k in settled}) == settled, timeout=60, interval=0.3
    )
    victim = workers.start("victim", "worker-victim")
    wait_until(lambda: runs(conn, refs["orphan"], "start"), timeout=60, interval=0.2)
    wait_until(lambda: heartbeat_after_claim(conn, refs["orphan"]), timeout=30, interval=0.2)
    kill_group(victim)  # the worker and its pool's children, mid-job
    refs["victim_quick"] = asyncio.run(push_victim_quick(dsn))
    orphan = str(refs["orphan"].identifier)

    def orphan_stale() -> dict | None:
        # the workers' own 3 s heartbeat timeout, given as the user would (chancy_app.py)
        code, snap = queuetop(
            capsys, "snapshot", "--preset", "chancy", "--stale-after", "3s", "--json", "--dsn", dsn
        )
        stale = {lease["id"] for lease in snap["stale_leases"]}
        return snap if code == 0 and orphan in stale else None

    snap = wait_until(orphan_stale, timeout=60, interval=0.5)
    assert (snap["threshold"]["seconds"], snap["threshold"]["source"]) == (3.0, "--stale-after")
    [lease] = snap["stale_leases"]  # the live worker's long job is not an orphan
    assert (lease["id"], lease["worker_alive"], lease["group"]) == (orphan, False, "victim")
    jobs = asyncio.run(get_jobs(dsn, refs))
    assert lease["lease_token"] == str(jobs["orphan"].claim_id)

    # queuetop's counts per role and per queue are chancy's own
    roles, queues = chancy_view(jobs)
    assert snap["estimated"] == []
    assert {r: n for r, n in snap["counts"].items() if n} == roles
    assert (roles["ready"], roles["scheduled"], roles["running"]) == (1, 1, 2)
    assert {g["name"]: {r: g[r] for r in ACTIVE} for g in snap["groups"]} == queues
    assert {g["name"]: g["stale_leases"] for g in snap["groups"]} == {"default": 0, "victim": 1}

    # the dashboard's way (the lease as the snapshot shows it) passes the guard too
    spec = config.validate(conn, config.build_spec(preset="chancy", stale_after="3s"))
    with db.connect_monitor(dsn) as mon, db.connect_action(dsn) as act:
        seen = monitor.collect(mon, spec).stale_leases
        dry = actions.requeue(
            act,
            spec,
            [ObservedJob.from_stale(x) for x in seen],
            audit=actions.choose_sink(act, None),
            dry_run=True,
        )
    assert dry.changed == (orphan,)

    code, result = queuetop(
        capsys,
        "requeue",
        "--preset",
        "chancy",
        "--stale-after",
        "3s",
        "--dsn",
        dsn,
        "--json",
        "--reason",
        "worker-victim was SIGKILLed",
        orphan,
    )
    assert (code, result["changed"]) == (0, [orphan])
    requeued = asyncio.run(get_jobs(dsn, {"orphan": refs["orphan"]}))["orphan"]
    assert (requeued.state.value, requeued.claim_id, requeued.attempts, requeued.max_attempts) == (
        "pending",
        None,
        0,
        2,
    )
    audited = conn.execute(
        "SELECT target, from_state->>'lease_token', outcome FROM "
        "queuetop.audit_log WHERE action = 'requeue'"
    ).fetchall()
    assert audited == [(orphan, str(jobs["orphan"].claim_id), "changed")]

    workers.start("victim", "worker-fresh")
    wait_until(
        lambda: (
            states(dsn, {k: refs[k] for k in ("orphan", "victim_quick")})
            == {"orphan": "succeeded", "victim_quick": "succeeded"}
        ),
        timeout=60,
        interval=0.3,
    )
    done = asyncio.run(get_jobs(dsn, {"orphan": refs["orphan"]}))["orphan"]
    first_claim = jobs["orphan"].claim_id
    assert [c for (c,) in runs(conn, refs["orphan"], "start")] == [first_claim, done.claim_id]
    assert [c for (c,) in runs(conn, refs["orphan"], "done")] == [done.claim_id]  # once
    assert done.claim_id != first_claim and done.attempts == 1

    # dead-letter in chancy's terms: failed, as cancel_job does, the reason in its errors
    live = str(refs["live_long"].identifier)
    code, result = queuetop(
        capsys,
        "dead-letter",
        "--preset",
        "chancy",
        "--dsn",
        dsn,
        "--json",
        "--reason",
        "not wanted any more",
        str(refs["scheduled"].identifier),
        live,
    )
    assert code == 1 and result["changed"] == [str(refs["scheduled"].identifier)]
    assert result["skipped"] == [{"id": live, "reason": "lease not expired (use --force)"}]
    after = asyncio.run(get_jobs(dsn, {k: refs[k] for k in ("scheduled", "live_long")}))
    assert after["scheduled"].state == QueuedJob.State.FAILED
    assert after["scheduled"].errors[-1]["traceback"] == "not wanted any more"
    assert after["live_long"].state == QueuedJob.State.RUNNING
