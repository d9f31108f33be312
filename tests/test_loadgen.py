"""The load generator against a real server: exactly once, crashes, fencing, no orphans."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import psycopg
import pytest

from dashboard import config, db, monitor
from dashboard.actions import TableAudit
from dashboard.cli import main
from dashboard.loadgen import LoadGenerator, LoadSettings
from dashboard.loadgen.strategies import build
from dashboard.setup import schema
from tests.helpers import wait_until

JOBS_BY_STATE = "SELECT status, count(*) FROM queuetop_demo.jobs GROUP BY status"


@pytest.fixture
def demo_spec(dsn):
    with psycopg.connect(dsn) as conn:
        schema.init_demo(conn)
    with db.connect_monitor(dsn) as conn:
        return config.validate(conn, config.load_preset("demo"))


def by_state(dsn) -> dict[str, int]:
    with psycopg.connect(dsn) as conn:
        return dict(conn.execute(JOBS_BY_STATE).fetchall())


def worker_sessions(dsn) -> int:
    with psycopg.connect(dsn) as conn:
        return conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'queuetop-worker-%'"
        ).fetchone()[0]


def run_until(gen: LoadGenerator, done, timeout: float = 60.0):
    with gen:
        wait_until(lambda: done(gen.stats()), timeout=timeout, interval=0.1)
    return gen.stats()


def test_skip_locked_workers_finish_every_job_exactly_once(dsn, demo_spec):
    gen = LoadGenerator(dsn, demo_spec, LoadSettings(workers=3, prefill=300, work_ms=1, seed=1))
    stats = run_until(gen, lambda s: s.totals["completed"] >= 300)
    assert not gen.running and not stats.errors
    assert stats.totals["claimed"] == stats.totals["completed"] == 300
    assert stats.double_claims == 0
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT status, attempts, lease_token, count(*) "
            "FROM queuetop_demo.jobs GROUP BY 1, 2, 3"
        ).fetchall()
        workers = conn.execute("SELECT count(DISTINCT worker) FROM queuetop_demo.jobs").fetchone()
    assert rows == [("done", 1, 1, 300)]
    assert workers[0] == 3  # each worker wrote its own application_name
    assert worker_sessions(dsn) == 0


def test_crashed_jobs_are_stale_leases_and_finish_once_after_requeue(dsn, demo_spec):
    settings = LoadSettings(workers=2, prefill=60, work_ms=1, crash_rate=0.1, lease_s=1, seed=3)
    gen = LoadGenerator(dsn, demo_spec, settings)  # expired leases wait for the operator
    with gen:
        wait_until(
            lambda: gen.stats().crashed >= 2 and by_state(dsn).get("ready", 0) == 0,
            timeout=60,
            interval=0.1,
        )
        gen.set_knobs(crash_rate=0.0)
        running = by_state(dsn).get("running", 0)
        assert running >= 1
        with db.connect_monitor(dsn) as conn:
            snap = wait_until(
                lambda: (
                    (s := monitor.collect(conn, demo_spec)).stale_leases
                    and len(s.stale_leases) >= running
                    and s
                ),
                timeout=10,
            )
        assert all(lease.worker_alive is False for lease in snap.stale_leases)
        assert all(lease.worker.startswith("queuetop-worker-") for lease in snap.stale_leases)
        with psycopg.connect(dsn) as conn:  # the operator's requeue: the token moves on
            conn.execute(
                "UPDATE queuetop_demo.jobs SET status = 'ready', worker = NULL, "
                "leased_until = NULL, lease_token = lease_token + 1 "
                "WHERE status = 'running' AND leased_until < now()"
            )
        wait_until(lambda: by_state(dsn) == {"done": 60}, timeout=30, interval=0.1)
        wait_until(lambda: gen.stats().totals["completed"] == 60, timeout=5)
    stats = gen.stats()
    assert stats.totals["completed"] == 60 and stats.double_claims == 0
    assert stats.crashed >= 2 and stats.totals["fenced"] == 0
    with psycopg.connect(dsn) as conn:
        retried = conn.execute("SELECT count(*) FROM queuetop_demo.jobs WHERE attempts > 1")
        assert retried.fetchone()[0] >= 2


def test_expired_leases_are_rescued_and_every_job_ends_once(dsn, demo_spec):
    settings = LoadSettings(
        workers=2, prefill=60, work_ms=1, crash_rate=0.1, lease_s=0.5, fail_rate=0.1, seed=5
    )
    gen = LoadGenerator(dsn, demo_spec, settings, rescue=TableAudit())
    stats = run_until(
        gen,
        lambda s: (
            s.totals["completed"] + s.totals["dead"] >= 60
            and by_state(dsn).keys() <= {"done", "dead"}
        ),
    )
    states = by_state(dsn)
    assert sum(states.values()) == 60 and states.keys() <= {"done", "dead"}
    assert stats.totals["completed"] == states.get("done", 0)
    assert stats.totals["dead"] == states.get("dead", 0)
    assert stats.crashed >= 1 and stats.double_claims == 0
    assert stats.rescue and stats.rescued >= 1
    with psycopg.connect(dsn) as conn:  # every rescue has its audit row
        audited = conn.execute(
            "SELECT count(*) FROM queuetop.audit_log "
            "WHERE action = 'rescue' AND outcome = 'changed'"
        ).fetchone()[0]
    assert audited == stats.rescued


def test_a_late_completion_with_an_old_token_changes_nothing(dsn, demo_spec):
    queue_sql = build(demo_spec)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO queuetop_demo.jobs (payload) VALUES ('x')")
        claim = queue_sql.claims["skip-locked"]
        ((job, old),) = conn.execute(claim, queue_sql.params(batch=1, worker="a", lease_s=30))
        conn.execute(
            "UPDATE queuetop_demo.jobs SET status = 'ready', lease_token = lease_token + 1"
        )  # an operator requeue
        ((_, new),) = conn.execute(claim, queue_sql.params(batch=1, worker="b", lease_s=30))
        late = conn.execute(queue_sql.complete, queue_sql.params(id=job, token=old)).fetchone()
        assert late is None
        assert conn.execute("SELECT status, worker FROM queuetop_demo.jobs").fetchone() == (
            "running",
            "b",
        )
        assert conn.execute(queue_sql.complete, queue_sql.params(id=job, token=new)).fetchone()


def test_for_update_workers_pile_up_behind_a_stalled_worker(dsn, demo_spec):
    settings = LoadSettings(workers=3, prefill=200, work_ms=5, strategy="for-update")
    with LoadGenerator(dsn, demo_spec, settings) as gen, db.connect_monitor(dsn) as conn:
        wait_until(lambda: gen.stats().live_workers == 3, timeout=30)
        gen.stall_worker(4.0)

        def pile_up():  # short for-update claims also wait on each other for a moment
            s = monitor.collect(conn, demo_spec)
            stalled = [
                i
                for i in s.idle_in_transaction
                if i.application_name.startswith("queuetop-worker-")
            ]
            return s if s.waiting and stalled else None

        snap = wait_until(pile_up, timeout=10)
        assert all(w.application_name.startswith("queuetop-worker-") for w in snap.waiting)
        assert any(w.stalled for w in gen.stats().workers)
    assert gen.stats().totals["stalls"] == 1 and gen.stats().double_claims == 0


PARENT = textwrap.dedent("""
    import sys, time
    from dashboard import config, db
    from dashboard.loadgen import LoadGenerator, LoadSettings
    if __name__ == "__main__":
        dsn = sys.argv[1]
        with db.connect_monitor(dsn) as conn:
            spec = config.validate(conn, config.load_preset("demo"))
        gen = LoadGenerator(dsn, spec, LoadSettings(workers=2, prefill=100000, work_ms=50))
        gen.start()
        while gen.stats().live_workers < 2:
            time.sleep(0.05)
        print(" ".join(str(w.pid) for w in gen.stats().workers), flush=True)
        time.sleep(600)
""")


def test_killing_the_parent_stops_every_worker(dsn, demo_spec, tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    parent = subprocess.Popen(
        [sys.executable, str(script), dsn],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    try:
        pids = [int(p) for p in parent.stdout.readline().split()]
        assert len(pids) == 2 and worker_sessions(dsn) == 2
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        wait_until(lambda: worker_sessions(dsn) == 0, timeout=10)
        wait_until(lambda: not any(_running(pid) for pid in pids), timeout=10)
    finally:
        parent.kill()


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is dead, unreaped
    except FileNotFoundError:
        return False


def test_load_cli_json_and_refusal_of_a_user_table(dsn, capsys):
    assert (
        main(["load", "--dsn", dsn, "--workers", "2", "--jobs", "100", "--work-ms", "1", "--json"])
        == 0
    )
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["completed"] == 100 and doc["double_claims"] == 0 and doc["workers"] == 2
    assert set(doc["claim_latency_ms"]) == {"p50", "p95", "p99"}
    assert "note:" not in err  # jobs were given
    # nothing to enqueue: it says why the numbers will stay at 0
    assert main(["load", "--dsn", dsn, "--workers", "1", "--duration", "0.5", "--json"]) == 0
    assert "no --jobs and no --rate" in capsys.readouterr().err
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE my_jobs (id serial PRIMARY KEY, status text)")
    assert main(["load", "--dsn", dsn, "--table", "my_jobs"]) == 2
    assert "--yes-write-to-my-table" in capsys.readouterr().err


def test_nowait_and_batch_claims_finish_every_job_exactly_once(dsn, demo_spec):
    for settings in (
        LoadSettings(workers=3, prefill=40, work_ms=3, strategy="nowait", hold_tx=True),
        LoadSettings(workers=2, prefill=100, work_ms=1, batch=5),
    ):
        gen = LoadGenerator(dsn, demo_spec, settings)
        stats = run_until(gen, lambda s, n=settings.prefill: s.totals["completed"] >= n)
        assert stats.totals["claimed"] == stats.totals["completed"] == settings.prefill
        assert stats.double_claims == 0
        if settings.strategy == "nowait":
            assert stats.totals["lock_errors"] > 0  # the held first row fails fast, then retries
        else:
            assert stats.totals["claims"] <= 30  # five jobs per claim, the tail fewer
        with psycopg.connect(dsn) as conn:
            assert (
                conn.execute(
                    "SELECT count(*) FROM queuetop_demo.jobs "
                    "WHERE status <> 'done' OR attempts <> 1"
                ).fetchone()[0]
                == 0
            )
            conn.execute("DELETE FROM queuetop_demo.jobs")


def test_the_load_generator_runs_without_the_ui_toolkit():
    code = (
        "import sys, dashboard.loadgen, dashboard.cli; "
        "assert not [m for m in sys.modules if m.startswith(('textual', 'plotext'))]"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_ctrl_c_stops_queuetop_load_with_a_summary_and_no_workers_left(dsn, demo_spec):
    cmd = [
        sys.executable,
        "-m",
        "dashboard",
        "load",
        "--dsn",
        dsn,
        "--workers",
        "2",
        "--duration",
        "60",
        "--rate",
        "50",
        "--work-ms",
        "20",
        "--json",
    ]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        wait_until(lambda: worker_sessions(dsn) == 2, timeout=30)
        wait_until(lambda: by_state(dsn).get("done", 0) > 0, timeout=10)
        os.killpg(proc.pid, signal.SIGINT)  # the terminal sends it to the whole group
        out, _ = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 0
    assert json.loads(out)["double_claims"] == 0
    assert worker_sessions(dsn) == 0
    assert by_state(dsn).get("running", 0) == 0  # in-flight jobs were handed back


def test_controller_knobs_act_on_a_running_generator(dsn, demo_spec):
    gen = LoadGenerator(dsn, demo_spec, LoadSettings(workers=1, rate=100, work_ms=2, lease_s=5))
    with gen:
        wait_until(lambda: gen.stats().live_workers == 1, timeout=30)
        gen.add_worker()
        wait_until(lambda: gen.stats().live_workers == 2, timeout=30)
        gen.set_strategy("nowait")
        gen.set_hold_tx(True)
        assert gen.settings.strategy == "nowait" and gen.stats().hold_tx
        first = {w.k for w in gen.stats().workers}
        gen.crash_worker()
        wait_until(lambda: gen.stats().crashed == 1 and gen.stats().live_workers == 2, timeout=30)
        assert {w.k for w in gen.stats().workers} - first  # the replacement has a new K
        gen.remove_worker()
        wait_until(
            lambda: gen.stats().live_workers == 1 and len(gen.stats().workers) == 1, timeout=30
        )
        gen.pause_producer()
        wait_until(lambda: gen.stats().producer_paused, timeout=5)
        enqueued = gen.stats().enqueued
        time.sleep(0.5)
        assert gen.stats().enqueued == enqueued
        with pytest.raises(ValueError):
            gen.set_knobs(workers=3)
    stats = gen.stats()
    assert not stats.running and stats.double_claims == 0 and not stats.errors
    assert worker_sessions(dsn) == 0


def test_a_heartbeat_keeps_long_jobs_from_being_rescued(dsn, demo_spec):
    settings = LoadSettings(workers=2, prefill=4, work_ms=1200, lease_s=0.6)
    stats = run_until(
        LoadGenerator(dsn, demo_spec, settings, rescue=TableAudit()),
        lambda s: s.totals["completed"] >= 4,
        timeout=30,
    )
    assert stats.totals["renewals"] >= 4 and stats.totals["fenced"] == 0
    assert stats.rescue and stats.rescued == 0
    assert stats.totals["claimed"] == 4 and stats.double_claims == 0
    assert by_state(dsn) == {"done": 4}
