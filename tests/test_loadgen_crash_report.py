"""The load generator tells who is who and what crashed: each worker's backend pid (the
one the dashboard's tables show), and for each crash the session, the jobs it held and
whether the crash knob (`!`) or the random crash rate made it."""

from __future__ import annotations

import psycopg
import pytest

from dashboard import config, db
from dashboard.loadgen import LoadGenerator, LoadSettings
from dashboard.setup import schema
from tests.helpers import wait_until


@pytest.fixture
def demo_spec(dsn):
    with psycopg.connect(dsn) as conn:
        schema.init_demo(conn)
    with db.connect_monitor(dsn) as conn:
        return config.validate(conn, config.load_preset("demo"))


def backend_pids(dsn) -> dict[str, int]:
    with psycopg.connect(dsn) as conn:
        return dict(
            conn.execute(
                "SELECT application_name, pid FROM pg_stat_activity "
                "WHERE application_name LIKE 'queuetop-worker-%'"
            ).fetchall()
        )


def job_row(dsn, job_id) -> tuple:
    with psycopg.connect(dsn) as conn:
        return conn.execute(
            "SELECT status, worker FROM queuetop_demo.jobs WHERE id = %s", (job_id,)
        ).fetchone()


def test_workers_report_their_backend_pid_beside_their_os_pid(dsn, demo_spec):
    settings = LoadSettings(workers=2, rate=20, work_ms=5, lease_s=30)
    with LoadGenerator(dsn, demo_spec, settings) as gen:
        wait_until(lambda: gen.stats().live_workers == 2, timeout=30)
        workers = gen.stats().workers
        sessions = backend_pids(dsn)
        assert {w.session: w.backend_pid for w in workers} == sessions
        assert all(w.pid and w.pid != w.backend_pid for w in workers)


def test_a_crash_names_its_session_its_jobs_and_the_knob_or_the_rate(dsn, demo_spec):
    settings = LoadSettings(workers=2, prefill=40, rate=20, work_ms=5, lease_s=30, seed=5)
    with LoadGenerator(dsn, demo_spec, settings) as gen:
        wait_until(lambda: gen.stats().live_workers == 2, timeout=30)
        newest = max(gen.stats().workers, key=lambda w: w.k)
        gen.crash_worker(newest.k)
        wait_until(lambda: gen.stats().crashes, timeout=30)
        [knob] = gen.stats().crashes
        assert (knob.n, knob.k, knob.session, knob.by_knob, knob.committed) == (
            1,
            newest.k,
            newest.session,
            True,
            True,
        )
        [job_id] = knob.jobs
        # the job it held stays running under its name: the stale lease `!` made
        assert job_row(dsn, job_id) == ("running", newest.session)
        assert gen.stats().lease_s == 30

        gen.set_knobs(crash_rate=1.0)  # the random rate: the next claim crashes
        wait_until(lambda: len(gen.stats().crashes) >= 2, timeout=30)
        gen.set_knobs(crash_rate=0.0)
        rate = gen.stats().crashes[1]
        assert rate.n == 2 and rate.by_knob is False and rate.jobs and rate.committed


def test_with_hold_tx_a_crash_leaves_no_lease_and_says_so(dsn, demo_spec):
    settings = LoadSettings(workers=1, prefill=20, work_ms=5, hold_tx=True, lease_s=30)
    with LoadGenerator(dsn, demo_spec, settings) as gen:
        wait_until(lambda: gen.stats().live_workers == 1, timeout=30)
        gen.crash_worker()
        wait_until(lambda: gen.stats().crashes, timeout=30)
        [report] = gen.stats().crashes
        assert report.by_knob and not report.committed
        [job_id] = report.jobs
        wait_until(lambda: job_row(dsn, job_id)[0] in ("ready", "done"), timeout=10)
