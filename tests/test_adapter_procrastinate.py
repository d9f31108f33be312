"""The procrastinate adapter (`--preset procrastinate`) against procrastinate itself: its
schema, its API to defer and count, its real worker processes, one of them SIGKILLed mid-job.

The workers beat every second and call a worker silent for 4 s stalled
(tests/library_apps/procrastinate_app.py); the preset assumes procrastinate's defaults
(30 s), so where a test wants queuetop to see the crash within seconds it tells the spec
the workers' timeout, as a user running such workers would in their own TOML.
"""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import psycopg
import pytest
from helpers import wait_until
from library_apps import procrastinate_app
from library_support import kill_group, rows, side_effects, spawn
from procrastinate import PsycopgConnector

from dashboard import config, db, monitor
from dashboard.actions import observe_jobs
from dashboard.cli import main
from dashboard.models import QueueSpec, Snapshot
from dashboard.setup import schema

APPS = Path(__file__).parent / "library_apps"
LONG_S = 120  # a long job outlives the test: it ends only by a kill


@pytest.fixture
def pq_dsn(dsn: str) -> str:
    """A database with procrastinate's schema (as `procrastinate schema --apply` makes it),
    the side table the tasks write to, and queuetop's audit table."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(procrastinate_app.app.schema_manager.get_schema())
        conn.execute(procrastinate_app.SIDE_TABLE)
        schema.init_audit(conn)
    return dsn


@contextmanager
def library(dsn: str):
    """procrastinate's app, open on this test's database."""
    connector = PsycopgConnector(conninfo=dsn, min_size=1, max_size=1)
    with procrastinate_app.app.replace_connector(connector) as app, app.open():
        yield app


@pytest.fixture
def workers(tmp_path: Path) -> Iterator:
    """Start procrastinate's own worker (`procrastinate --app=... worker`); all are killed at
    the end of the test."""
    started = []

    def start(dsn: str, queues: str, name: str):
        proc = spawn(
            [
                sys.executable,
                "-m",
                "procrastinate",
                "--app=procrastinate_app.app",
                "worker",
                f"--queues={queues}",
                "--concurrency=1",
                f"--name={name}",
            ],
            env={"PQ_DSN": dsn, "PYTHONPATH": str(APPS)},
            log=tmp_path / f"{name}.log",
        )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        kill_group(proc)


def status(dsn: str, job_id: int) -> str:
    return rows(dsn, "SELECT status::text FROM procrastinate_jobs WHERE id = %s", job_id)[0][0]


def snapshot(dsn: str, spec: QueueSpec | None = None) -> Snapshot:
    with db.connect_monitor(dsn) as conn:
        return monitor.collect(
            conn, config.validate(conn, spec or config.load_preset("procrastinate"))
        )


def library_roles(app) -> tuple[Counter, dict[str, Counter]]:
    """Jobs per queuetop role and per queue, from procrastinate's own API (list_jobs): todo
    is scheduled while its scheduled_at is ahead, else ready."""
    now = datetime.now(timezone.utc)
    names = {
        "todo": "ready",
        "doing": "running",
        "succeeded": "done",
        "failed": "dead",  # final: a retry is todo again
        "cancelled": "dead",
        "aborted": "dead",
    }
    roles: Counter = Counter()
    groups: dict[str, Counter] = {}
    for job in app.job_manager.list_jobs():
        role = names[job.status]
        if role == "ready" and job.scheduled_at and job.scheduled_at > now:
            role = "scheduled"
        roles[role] += 1
        groups.setdefault(job.queue, Counter())[role] += 1
    return roles, groups


def library_stalled(dsn: str, seconds: float) -> set[int]:
    """procrastinate's own answer: get_stalled_jobs (doing, worker silent or gone)."""

    async def stalled() -> set[int]:
        connector = PsycopgConnector(conninfo=dsn, min_size=1, max_size=1)
        with procrastinate_app.app.replace_connector(connector) as app:
            async with app.open_async():
                found = await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=seconds)
                return {job.id for job in found}

    return asyncio.run(stalled())


def test_killed_worker_job_is_orphaned_then_requeued_and_run_exactly_once(pq_dsn, workers, capsys):
    with library(pq_dsn) as app:
        for _ in range(3):
            app.configure_task("quick").defer()
        app.configure_task("boom").defer()
        app.configure_task("quick", schedule_in={"hours": 1}).defer()
        orphan = app.configure_task("long").defer(seconds=LONG_S)
        live = app.configure_task("long", queue="live").defer(seconds=LONG_S)
        app.configure_task("quick", queue="other").defer()
        cancelled = app.configure_task("quick", queue="other").defer()
        app.job_manager.cancel_job_by_id(cancelled)
    doomed = workers(pq_dsn, "demo", "doomed")
    workers(pq_dsn, "live", "alive")
    wait_until(
        lambda: side_effects(pq_dsn, orphan)["started"] and side_effects(pq_dsn, live)["started"],
        timeout=60,
    )
    doomed_id = rows(pq_dsn, "SELECT worker_id FROM procrastinate_jobs WHERE id = %s", orphan)[0][0]
    kill_group(doomed)

    # queuetop, told the workers' 4 s timeout (--stale-after), sees the orphan once the
    # worker is silent
    stale_after = f"{procrastinate_app.STALLED_S:g}s"
    spec = config.build_spec(preset="procrastinate", stale_after=stale_after)
    assert spec.workers.timeout_s == procrastinate_app.STALLED_S
    snap = wait_until(lambda: (s := snapshot(pq_dsn, spec)).stale_leases and s, timeout=30)
    assert snap.threshold.source == "--stale-after"
    assert [(s.id, s.worker, s.worker_alive, s.group) for s in snap.stale_leases] == [
        (orphan, str(doomed_id), False, "demo")
    ]  # the live worker's long job is not there
    assert {s.id for s in snap.stale_leases} == library_stalled(pq_dsn, procrastinate_app.STALLED_S)
    with library(pq_dsn) as app:
        roles, groups = library_roles(app)
        queues = {q["name"]: q for q in app.job_manager.list_queues()}
    assert snap.counts == {role: roles[role] for role in snap.roles}
    assert snap.counts == {
        "ready": 1,
        "scheduled": 1,
        "running": 2,
        "done": 3,
        "dead": 2,
    }
    assert {g.name: (g.ready, g.scheduled, g.running, g.stale_leases) for g in snap.groups} == {
        name: (c["ready"], c["scheduled"], c["running"], int(name == "demo"))
        for name, c in groups.items()
    }
    assert {g.name: g.ready + g.scheduled for g in snap.groups} == {
        name: q["todo"] for name, q in queues.items()
    }

    # With the preset alone (a 30 s timeout) the dead worker still looks recent: the guard
    # skips the job rather than requeue a lease it cannot call stale.
    assert main(["requeue", "--preset", "procrastinate", "--dsn", pq_dsn, str(orphan)]) == 1
    assert "lease not expired (use --force)" in capsys.readouterr().out
    # A starting worker deletes the rows of stalled workers: the orphan's worker_id becomes
    # NULL and it stays 'doing'. queuetop still calls it orphaned, with the preset alone.
    workers(pq_dsn, "demo", "fresh")
    wait_until(
        lambda: rows(
            pq_dsn, "SELECT worker_id IS NULL FROM procrastinate_jobs WHERE id = %s", orphan
        )[0][0],
        timeout=30,
    )
    assert [(s.id, s.worker, s.worker_alive) for s in snapshot(pq_dsn).stale_leases] == [
        (orphan, None, False)
    ]

    assert (
        main(
            [
                "requeue",
                "--preset",
                "procrastinate",
                "--dsn",
                pq_dsn,
                str(orphan),
                "--reason",
                "worker killed",
            ]
        )
        == 0
    )
    assert "requeue" in capsys.readouterr().out
    wait_until(lambda: status(pq_dsn, orphan) == "succeeded", timeout=30)
    assert side_effects(pq_dsn, orphan) == Counter(started=2, done=1)  # exactly once
    # procrastinate's retry counted the crashed attempt and made the job due now
    assert rows(
        pq_dsn,
        "SELECT attempts, scheduled_at IS NOT NULL FROM procrastinate_jobs WHERE id = %s",
        orphan,
    ) == [(2, True)]
    assert rows(
        pq_dsn,
        "SELECT type::text FROM procrastinate_events WHERE job_id = %s "
        "AND type = 'deferred_for_retry'",
        orphan,
    ) == [("deferred_for_retry",)]
    assert rows(
        pq_dsn,
        "SELECT action, outcome, reason FROM queuetop.audit_log "
        "WHERE target = %s ORDER BY audit_id",
        str(orphan),
    ) == [("requeue", "skipped", None), ("requeue", "changed", "worker killed")]
    assert status(pq_dsn, live) == "doing"


def test_refusals_and_dead_letter_in_procrastinate_terms(pq_dsn, workers, capsys):
    with library(pq_dsn) as app:
        nightly = app.configure_task("boom", queueing_lock="nightly").defer()
        aborted = app.configure_task("long").defer(seconds=LONG_S)
    worker = workers(pq_dsn, "demo", "worker")
    wait_until(lambda: side_effects(pq_dsn, aborted)["started"], timeout=60)
    assert status(pq_dsn, nightly) == "failed"
    with library(pq_dsn) as app:
        app.job_manager.cancel_job_by_id(aborted, abort=True)  # the task never looks: it runs
        waiting = app.configure_task("quick", queue="other", queueing_lock="nightly").defer()
    kill_group(worker)

    def requeue(job: int, *flags: str) -> tuple[int, str]:
        code = main(["requeue", "--preset", "procrastinate", "--dsn", pq_dsn, str(job), *flags])
        return code, capsys.readouterr().out

    # --force: the preset's 30 s timeout has not run out for the killed worker
    code, out = requeue(aborted, "--force")
    assert code == 1 and "an abort was requested for this job" in out
    code, out = requeue(nightly)
    assert code == 1 and "another waiting job holds queueing_lock 'nightly'" in out
    assert (status(pq_dsn, aborted), status(pq_dsn, nightly)) == ("doing", "failed")
    with db.connect_action(pq_dsn) as conn:
        seen, _ = observe_jobs(
            conn,
            config.validate(conn, config.load_preset("procrastinate")),
            [str(aborted), str(nightly)],
        )
    assert [bool(job.requeue_refusal) for job in seen] == [True, True]

    assert (
        main(
            [
                "dead-letter",
                "--preset",
                "procrastinate",
                "--dsn",
                pq_dsn,
                str(aborted),
                "--force",
                "--reason",
                "worker gone",
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "dead-letter",
                "--preset",
                "procrastinate",
                "--dsn",
                pq_dsn,
                str(nightly),
                "--reason",
                "again",
            ]
        )
        == 1
    )
    assert "already failed" in capsys.readouterr().out
    with library(pq_dsn) as app:
        (job,) = app.job_manager.list_jobs(id=aborted)
    assert (job.status, job.abort_requested, job.attempts) == ("failed", False, 1)

    # Once the waiting job is gone, procrastinate's retry may take the failed one again.
    assert (
        main(
            [
                "dead-letter",
                "--preset",
                "procrastinate",
                "--dsn",
                pq_dsn,
                str(waiting),
                "--reason",
                "duplicate",
            ]
        )
        == 0
    )
    assert requeue(nightly)[0] == 0
    assert (status(pq_dsn, waiting), status(pq_dsn, nightly)) == ("failed", "todo")
    assert rows(
        pq_dsn,
        "SELECT type::text FROM procrastinate_events WHERE job_id = %s ORDER BY id DESC LIMIT 1",
        nightly,
    ) == [("retried",)]
