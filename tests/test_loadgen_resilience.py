"""The load generator keeps going: through a server restart it says the database is gone,
keeps the worker count the user set, reconnects, and jobs flow again; a worker process
that exits on an error is replaced, and the error is said once, not once per replacement."""

from __future__ import annotations

import os
import signal

import psycopg
import pytest
from helpers import restart_elsewhere, wait_until
from test_ui_live import demo_spec

from dashboard import db
from dashboard.loadgen import LoadGenerator, LoadSettings

pytestmark = pytest.mark.db  # tier: see tests/conftest.py

WORKERS_SQL = (
    "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'queuetop-worker-%'"
)


def worker_sessions(dsn: str) -> set[str]:
    with psycopg.connect(dsn) as conn:
        return {
            r[0]
            for r in conn.execute(
                "SELECT application_name FROM pg_stat_activity "
                "WHERE application_name LIKE 'queuetop-worker-%'"
            )
        }


def done_jobs(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        return conn.execute(
            "SELECT count(*) FROM queuetop_demo.jobs WHERE status = 'done'"
        ).fetchone()[0]


@pytest.mark.parametrize("strategy, hold_tx", [("skip-locked", False), ("for-update", True)])
def test_workers_and_producer_reconnect_after_a_server_restart(tmp_path, strategy, hold_tx):
    pgdata = tmp_path / "pgdata"
    dsn = db.start_embedded(pgdata)
    try:
        spec = demo_spec(dsn)
        settings = LoadSettings(
            workers=3,
            prefill=100,
            rate=40.0,
            work_ms=20.0,
            lease_s=2.0,
            strategy=strategy,
            hold_tx=hold_tx,
        )
        with LoadGenerator(dsn, spec, settings) as gen:
            wait_until(
                lambda: (
                    (s := gen.stats()).live_workers == 3
                    and s.totals["completed"] > 0
                    and not s.reconnecting
                ),
                timeout=30,
            )
            pids = {w.pid for w in gen.stats().workers}
            before = worker_sessions(dsn)

            db.stop_embedded(pgdata)
            down = wait_until(
                lambda: (s := gen.stats()).live_workers == 0 and len(s.reconnecting) == 4 and s,
                timeout=30,
            )
            assert down.running and down.target_workers == 3
            assert "producer" in down.reconnecting and down.connection_error
            assert all(not w.connected for w in down.workers)
            assert {w.pid for w in down.workers} == pids  # the same processes wait it out
            # a worker process that dies meanwhile is replaced; the new one waits too
            os.kill(down.workers[0].pid, signal.SIGKILL)
            replaced = wait_until(
                lambda: (
                    (s := gen.stats()).crashed >= 1
                    and len(s.workers) == 3
                    and len(s.reconnecting) == 4
                    and s
                ),
                timeout=30,
            )
            assert down.workers[0].k not in {w.k for w in replaced.workers}

            restart_elsewhere(pgdata)
            wait_until(
                lambda: (s := gen.stats()).live_workers == 3 and not s.reconnecting, timeout=60
            )
            up = gen.stats()
            assert up.connection_error is None and up.target_workers == 3
            # new sessions, new names: a lease of a lost session must not look owned
            after = worker_sessions(dsn)
            assert len(after) == 3 and not after & before
            assert sum(name.endswith(".2") for name in after) == 2  # the two that waited
            assert all(w.connected for w in up.workers)
            assert {w.session for w in up.workers} == after  # what panel 5 shows
            waited = [w for w in up.workers if w.k in {x.k for x in down.workers}]
            assert len(waited) == 2 and all(w.session == f"{w.name}.2" for w in waited)
            completed, enqueued, done = up.totals["completed"], up.enqueued, done_jobs(dsn)
            wait_until(
                lambda: (
                    (s := gen.stats()).totals["completed"] > completed + 20
                    and s.enqueued > enqueued
                    and done_jobs(dsn) > done + 20
                ),
                timeout=60,
            )
        stats = gen.stats()
        assert stats.double_claims == 0 and not stats.errors
        with psycopg.connect(dsn) as conn:
            assert conn.execute(WORKERS_SQL).fetchone()[0] == 0
    finally:
        db.stop_embedded(pgdata)


def test_workers_that_exit_on_an_error_are_replaced_and_the_error_said_once(dsn):
    spec = demo_spec(dsn)
    settings = LoadSettings(workers=2, rate=30.0, work_ms=5.0, lease_s=5.0)
    rename = "ALTER TABLE queuetop_demo.jobs RENAME COLUMN {} TO {}"
    with LoadGenerator(dsn, spec, settings) as gen:
        wait_until(
            lambda: (s := gen.stats()).live_workers == 2 and s.totals["completed"] > 0, timeout=30
        )
        first = max(w.k for w in gen.stats().workers)
        with psycopg.connect(dsn, autocommit=True) as conn:  # every claim fails from now on
            conn.execute(rename.format("lease_token", "token_elsewhere"))
        # each worker exits, its replacement fails the same way, and so on, with pauses
        wait_until(
            lambda: max((w.k for w in gen.stats().workers), default=0) >= first + 4, timeout=60
        )
        failing = gen.stats()
        assert failing.target_workers == 2 and not failing.reconnecting
        worker_errors = [e for e in failing.errors if e.startswith("queuetop-worker-")]
        assert len(worker_errors) == 1 and "lease_token" in worker_errors[0]
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(rename.format("token_elsewhere", "lease_token"))
        completed = gen.stats().totals["completed"]
        wait_until(
            lambda: (s := gen.stats()).live_workers == 2 and s.totals["completed"] > completed + 10,
            timeout=60,
        )
    assert gen.stats().double_claims == 0
