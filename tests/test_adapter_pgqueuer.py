"""The pgqueuer adapter (`--preset pgqueuer`) against pgqueuer itself: its schema, its API
to enqueue and count, its real worker loop (pgqueuer.run), one worker SIGKILLed mid-job.

The workers here use a 2 s heartbeat timeout, so they beat every second
(tests/library_apps/pgqueuer_app.py); the preset assumes pgqueuer's default (30 s), so
where a test wants queuetop to see the crash within seconds it tells the spec a 4 s
timeout, as a user running such workers would in their own TOML (twice the workers' own:
a margin for a busy machine, where a live worker's beat may come late).
"""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import psycopg
import pytest
from helpers import wait_until
from library_apps import pgqueuer_app
from library_support import kill_group, rows, side_effects, spawn
from pgqueuer import Queries

from dashboard import config, db, monitor
from dashboard.cli import main
from dashboard.models import QueueSpec, Snapshot
from dashboard.setup import schema

APP = Path(__file__).parent / "library_apps" / "pgqueuer_app.py"
LONG = b"120"  # seconds: a long job outlives the test, it ends only by a kill
STALE_S = 4.0  # the spec's heartbeat timeout here, and the threshold given to `pgq stale`
TERMINAL = {"successful": "done", "exception": "dead", "canceled": "dead", "deleted": "dead"}


def library(dsn: str, use):
    """Run `use(queries)` with pgqueuer's Queries on this test's database."""

    async def run():
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            return await use(Queries.from_psycopg_connection(conn))

    return asyncio.run(run())


@pytest.fixture
def pgq_dsn(dsn: str) -> str:
    """A database with pgqueuer's schema (as `pgq install` makes it), the side table the
    entrypoints write to, and queuetop's audit table."""

    async def install(queries: Queries) -> None:
        await queries.install()

    library(dsn, install)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(pgqueuer_app.SIDE_TABLE)
        schema.init_audit(conn)
    return dsn


@pytest.fixture
def workers(tmp_path: Path) -> Iterator:
    """Start pgqueuer's worker loop on some entrypoints; all are killed at the end."""
    started = []

    def start(dsn: str, entrypoints: str, name: str, heartbeat_timeout: float = 2.0):
        proc = spawn(
            [sys.executable, str(APP)],
            log=tmp_path / f"{name}.log",
            env={
                "PGQ_DSN": dsn,
                "PGQ_ENTRYPOINTS": entrypoints,
                "PGQ_HEARTBEAT_TIMEOUT": str(heartbeat_timeout),
            },
        )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        kill_group(proc)


def job_log(dsn: str, job_id: int) -> list[str]:
    return [
        s
        for (s,) in rows(
            dsn, "SELECT status::text FROM pgqueuer_log WHERE job_id = %s ORDER BY id", job_id
        )
    ]


def snapshot(dsn: str, spec: QueueSpec | None = None) -> Snapshot:
    with db.connect_monitor(dsn) as conn:
        return monitor.collect(conn, config.validate(conn, spec or config.load_preset("pgqueuer")))


def library_roles(dsn: str) -> tuple[Counter, dict[str, Counter]]:
    """Jobs per queuetop role (and the active ones per entrypoint) from pgqueuer's own API:
    the live rows (browse_queue; queued is scheduled while execute_after is ahead) and the
    finished ones from its log statistics."""

    async def read(queries: Queries):
        return await queries.browse_queue(limit=1000), await queries.log_statistics(limit=None)

    jobs, stats = library(dsn, read)
    now = datetime.now(timezone.utc)
    names = {"queued": "ready", "picked": "running", "failed": "dead"}  # held for a person
    roles: Counter = Counter()
    groups: dict[str, Counter] = {}
    for job in jobs:
        role = names[job.status]
        if role == "ready" and job.execute_after > now:
            role = "scheduled"
        roles[role] += 1
        if role != "dead":
            groups.setdefault(job.entrypoint, Counter())[role] += 1
    for stat in stats:
        if stat.status in TERMINAL:
            roles[TERMINAL[stat.status]] += stat.count
    return roles, groups


def test_killed_worker_job_is_orphaned_then_requeued_and_run_exactly_once(pgq_dsn, workers, capsys):
    async def enqueue(queries: Queries) -> dict[str, int]:
        await queries.enqueue(["quick"] * 3 + ["boom", "hold"], [None] * 5, [0] * 5)
        await queries.enqueue("quick", None, execute_after=timedelta(hours=1))
        (waiting,) = await queries.enqueue("other", None)
        (cancelled,) = await queries.enqueue("other", None)
        await queries.mark_job_as_cancelled([cancelled])
        (orphan,) = await queries.enqueue("long", LONG)
        (live,) = await queries.enqueue("live", LONG)
        return {"orphan": orphan, "live": live, "waiting": waiting}

    ids = library(pgq_dsn, enqueue)
    orphan, live = ids["orphan"], ids["live"]
    doomed = workers(pgq_dsn, "quick,long,boom,hold", "doomed")
    workers(pgq_dsn, "live", "alive")
    wait_until(
        lambda: side_effects(pgq_dsn, orphan)["started"] and side_effects(pgq_dsn, live)["started"],
        timeout=60,
    )
    finished = {"done": 3, "dead": 3}  # dead: boom's exception, the cancelled, the held
    wait_until(lambda: {r: library_roles(pgq_dsn)[0][r] for r in finished} == finished, timeout=30)
    (doomed_qm,) = rows(
        pgq_dsn, "SELECT queue_manager_id::text FROM pgqueuer WHERE id = %s", orphan
    )[0]
    kill_group(doomed)

    # queuetop, told a heartbeat timeout for these workers (--stale-after), sees the orphan
    # once it is silent
    spec = config.build_spec(preset="pgqueuer", stale_after=f"{STALE_S}s")
    assert (spec.threshold.signal, spec.threshold.seconds) == ("heartbeat", STALE_S)
    snap = wait_until(lambda: (s := snapshot(pgq_dsn, spec)).stale_leases and s, timeout=30)
    assert snap.threshold.source == "--stale-after"
    assert [(s.id, s.worker, s.worker_alive, s.group) for s in snap.stale_leases] == [
        (orphan, doomed_qm, False, "long")
    ]  # the live worker's long job is not there
    stale = library(pgq_dsn, lambda q: q.stale_jobs(threshold=timedelta(seconds=STALE_S)))
    assert [job.id for job in stale] == [orphan]  # pgqueuer's own answer (`pgq stale`)
    roles, groups = library_roles(pgq_dsn)
    assert snap.counts == {role: roles[role] for role in snap.roles}
    assert snap.counts == {
        "ready": 1,
        "scheduled": 1,
        "running": 2,
        "done": 3,
        "dead": 3,
    }
    assert {g.name: (g.ready, g.scheduled, g.running, g.stale_leases) for g in snap.groups} == {
        name: (c["ready"], c["scheduled"], c["running"], int(name == "long"))
        for name, c in groups.items()
    }
    sizes = library(pgq_dsn, lambda q: q.queue_size())
    assert sum(g.ready + g.scheduled + g.running for g in snap.groups) == sum(
        s.count for s in sizes if s.status in ("queued", "picked")
    )

    # --force: with the preset alone (pgqueuer's 30 s timeout) the heartbeat, silent for a
    # few seconds only, is not old enough; the worker is dead all the same (SIGKILL).
    assert main(["requeue", "--preset", "pgqueuer", "--dsn", pgq_dsn, str(orphan)]) == 1
    assert "lease not expired (use --force)" in capsys.readouterr().out
    assert (
        main(
            [
                "requeue",
                "--preset",
                "pgqueuer",
                "--dsn",
                pgq_dsn,
                str(orphan),
                "--force",
                "--reason",
                "worker killed",
            ]
        )
        == 0
    )
    assert rows(
        pgq_dsn,
        "SELECT status::text, attempts, queue_manager_id FROM pgqueuer WHERE id = %s",
        orphan,
    ) == [("queued", 1, None)]
    # A fresh worker with pgqueuer's default 30 s timeout cannot re-pick the job itself:
    # it runs it because the requeue made it queued, with no queue_manager_id left to count
    # against the entrypoint's concurrency limit of 1.
    workers(pgq_dsn, "long", "fresh", heartbeat_timeout=30.0)
    wait_until(lambda: "successful" in job_log(pgq_dsn, orphan), timeout=60)
    assert side_effects(pgq_dsn, orphan) == Counter(started=2, done=1)  # exactly once
    assert job_log(pgq_dsn, orphan) == ["queued", "picked", "queued", "picked", "successful"]
    assert rows(pgq_dsn, "SELECT count(*) FROM pgqueuer WHERE id = %s", orphan) == [(0,)]
    assert rows(pgq_dsn, "SELECT status::text FROM pgqueuer WHERE id = %s", live) == [("picked",)]
    assert snapshot(pgq_dsn).counts["done"] == 4


def test_refusals_and_dead_letter_in_pgqueuer_terms(pgq_dsn, workers, capsys):
    async def enqueue(queries: Queries) -> tuple[int, int]:
        (held,) = await queries.enqueue("hold", None, dedupe_key="nightly")
        (stuck,) = await queries.enqueue("long", LONG)
        return held, stuck

    held, stuck = library(pgq_dsn, enqueue)
    worker = workers(pgq_dsn, "hold,long", "worker")
    wait_until(
        lambda: (
            side_effects(pgq_dsn, stuck)["started"] and job_log(pgq_dsn, held)[-1:] == ["failed"]
        ),
        timeout=60,
    )
    kill_group(worker)
    (waiting,) = library(pgq_dsn, lambda q: q.enqueue("other", None, dedupe_key="nightly"))

    def act(*args: str) -> tuple[int, str]:
        code = main([args[0], "--preset", "pgqueuer", "--dsn", pgq_dsn, *args[1:]])
        return code, capsys.readouterr().out

    code, out = act("requeue", str(held))
    assert code == 1 and "another active job holds dedupe_key 'nightly'" in out
    code, out = act("dead-letter", str(held), "--reason", "again")
    assert code == 1 and "already failed" in out
    # --force: the killed worker's heartbeat is younger than the preset's 30 s
    assert act("dead-letter", str(stuck), "--force", "--reason", "worker gone")[0] == 0
    assert act("dead-letter", str(waiting), "--reason", "duplicate")[0] == 0
    failed = library(pgq_dsn, lambda q: q.list_failed_jobs())  # `pgq failed`
    assert sorted(job.id for job in failed) == sorted([held, stuck, waiting])
    assert rows(pgq_dsn, "SELECT queue_manager_id FROM pgqueuer WHERE id = %s", stuck) == [(None,)]
    assert rows(
        pgq_dsn,
        "SELECT traceback->>'exception_message' FROM pgqueuer_log "
        "WHERE job_id = %s ORDER BY id DESC LIMIT 1",
        stuck,
    ) == [("worker gone",)]

    # No active job holds the key any more: `pgq requeue`'s way (attempts back to 0) works
    assert act("requeue", str(held))[0] == 0
    job = library(pgq_dsn, lambda q: q.queue_job_by_id(held))
    assert (job.status, job.attempts, job.queue_manager_id) == ("queued", 0, None)
    assert job_log(pgq_dsn, held)[-2:] == ["failed", "queued"]
    assert snapshot(pgq_dsn).by_status["failed"] == 2  # the two still held
