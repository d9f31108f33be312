"""The absurd preset (`--preset absurd --table absurd.r_QUEUE`) against Absurd itself: its
schema (tests/library_schemas/absurd.sql, 0.5.1, as absurdctl bundles it), real workers of
its Python SDK (tests/library_apps/absurd_app.py, absurd-sdk 0.5.1 in a venv of its own)
claiming with a short claim timeout, one SIGKILLed mid-job. Absurd's own view is its
SDK's (fetch_task_result) and its own SQL: absurdctl list-tasks' query, and the sweep of
expired claims its claim_task runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import psycopg
import pytest
from helpers import wait_until
from library_support import find_python, kill_group, python_venv, rows, side_effects, spawn

from dashboard import config, db, monitor
from dashboard.cli import main
from dashboard.setup import schema

APP = Path(__file__).parent / "library_apps" / "absurd_app.py"
SCHEMAS = Path(__file__).parent / "library_schemas"
CLAIM = 6  # seconds: the workers' claim timeout, the lease queuetop follows
SIDE_TABLE = (
    "CREATE TABLE side_effects (id bigserial PRIMARY KEY, job_id text NOT NULL, "
    "task text NOT NULL, attempt int NOT NULL, event text NOT NULL)"
)
# absurdctl list-tasks' own query (absurdctl 0.5.1, cmd_list_tasks): each task with its
# last run, the library's view of a queue
LIST_TASKS = """
    SELECT t.task_id, r.run_id, t.task_name, t.state, r.attempt, t.max_attempts
    FROM absurd.t_default t
    LEFT JOIN absurd.r_default r ON r.run_id = t.last_attempt_run
"""
# the sweep claim_task runs before it claims (absurd.sql 0.5.1): the expired claims it fails
EXPIRED = """
    SELECT run_id FROM absurd.r_default
    WHERE state = 'running' AND claim_expires_at IS NOT NULL AND claim_expires_at <= now()
"""
ROLE_OF_TASK = {"pending": "ready", "sleeping": "scheduled", "running": "running",
                "completed": "done", "failed": "dead", "cancelled": "dead"}  # fmt: skip


@pytest.fixture(scope="module")
def absurd_python() -> Path:
    """Absurd's SDK in a venv of its own."""
    return python_venv("absurd", find_python("3.11") or sys.executable, ["absurd-sdk==0.5.1"])


class Absurd:
    """Absurd's SDK on one test database: its CLI (absurd_app.py) and worker processes."""

    def __init__(self, dsn: str, python: Path, tmp_path: Path):
        self.dsn, self.python, self.tmp_path = dsn, python, tmp_path
        self.procs: list[subprocess.Popen] = []
        self.env = {"ABSURD_DSN": dsn, "ABSURD_CLAIM": str(CLAIM)}

    def app(self, *argv: str, queue: str = "default") -> str:
        done = subprocess.run(
            [str(self.python), str(APP), *argv],
            env={**os.environ, **self.env, "ABSURD_QUEUE": queue},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def spawn(self, params: dict, max_attempts: int | None = None) -> tuple[str, str]:
        more = [str(max_attempts)] if max_attempts else []
        found = json.loads(self.app("spawn", json.dumps(params), *more))
        return found["task_id"], found["run_id"]

    def result(self, task_id: str) -> str:
        return json.loads(self.app("result", task_id))

    def start(self, name: str) -> subprocess.Popen:
        proc = spawn(
            [str(self.python), str(APP), "work", name],
            env=self.env,
            log=self.tmp_path / f"{name}.log",
        )
        self.procs.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.procs:
            kill_group(proc)


# Absurd before 0.5 takes its random uuids from uuid-ossp, which the embedded server does
# not ship: PostgreSQL's own gen_random_uuid() (a random v4 uuid too) stands in for its one
# function the schema calls.
UUID_OSSP = b'create extension if not exists "uuid-ossp";'
UUID_V4 = (
    b"create function uuid_generate_v4() returns uuid language sql as 'select gen_random_uuid()';"
)


def install(dsn: str, script: str = "absurd.sql") -> None:
    """Absurd's schema by its own SQL, the side table, queuetop's audit table."""
    text = (SCHEMAS / script).read_bytes()
    with psycopg.connect(dsn, autocommit=True) as conn:
        if (
            UUID_OSSP in text
            and not conn.execute(
                "SELECT 1 FROM pg_available_extensions WHERE name = 'uuid-ossp'"
            ).fetchone()
        ):
            text = text.replace(UUID_OSSP, UUID_V4)
        conn.execute(text)
        conn.execute(SIDE_TABLE)
        schema.init_audit(conn)


@pytest.fixture
def absurd(dsn, absurd_python, tmp_path):
    install(dsn)
    lib = Absurd(dsn, absurd_python, tmp_path)
    lib.app("create")
    yield lib
    lib.stop()


def queuetop(capsys, *argv: str) -> tuple[int, dict]:
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def run_state(dsn: str, run_id: str) -> str:
    return rows(dsn, "SELECT state FROM absurd.r_default WHERE run_id = %s", run_id)[0][0]


def library_counts(dsn: str) -> Counter:
    """The roles Absurd's own view gives: each task by its state (absurdctl list-tasks),
    and the failed runs its tasks ran again (every attempt before a task's last one)."""
    counts: Counter = Counter()
    for _, _, _, state, attempt, _ in rows(dsn, LIST_TASKS):
        counts[ROLE_OF_TASK[state]] += 1
        counts["failed"] += attempt - 1
    return +counts


def test_discovered_each_queue_with_its_version(absurd, capsys):
    absurd.app("create", queue="emails")
    code, found = queuetop(capsys, "discover", "--dsn", absurd.dsn)
    assert code == 0
    ours = [q for q in found["queues"] if q["table"].startswith("absurd.")]
    assert [(q["table"], q["adapter"], q["version"], q["schema_marker"]) for q in ours] == [
        ("absurd.r_default", "absurd", "0.5.1", "0.5.1"),
        ("absurd.r_emails", "absurd", "0.5.1", "0.5.1"),
    ]  # its tasks, checkpoints, events and waits tables are no queues of their own
    assert ours[0]["command"].startswith("queuetop watch --preset absurd --table absurd.r_default")
    assert main(["snapshot", "--preset", "absurd", "--dsn", absurd.dsn]) == 2
    assert "pick one with --table" in capsys.readouterr().err
    assert main(["snapshot", "--preset", "absurd", "--table", "absurd.t_default",
                 "--dsn", absurd.dsn]) == 2  # fmt: skip
    assert "not one of the queue tables of preset absurd" in capsys.readouterr().err
    assert main(["snapshot", "--preset", "absurd", "--table", "r_emails", "--dsn", absurd.dsn]) == 0
    assert main(["snapshot", "--preset", "absurd", "--table", "r_emails",
                 "--stale-after", "4s", "--dsn", absurd.dsn]) == 2  # fmt: skip
    assert "cannot apply to absurd.r_emails" in capsys.readouterr().err


def test_killed_worker_run_is_the_one_stale_lease_then_requeued_and_run_once(absurd, capsys):
    flags = ["--preset", "absurd", "--table", "absurd.r_default", "--dsn", absurd.dsn]
    # history first: a job done, one failed twice (retried once, then for good)
    quick, _ = absurd.spawn({"seconds": 0})
    failing, _ = absurd.spawn({"fail": True}, max_attempts=2)
    early = absurd.start("early")
    wait_until(
        lambda: absurd.result(failing) == "failed" and absurd.result(quick) == "completed",
        timeout=60,
    )
    kill_group(early)
    # the orphan's task allows one attempt: Absurd's own sweep would fail it for good
    orphan_task, orphan = absurd.spawn({"seconds": 120, "once": True}, max_attempts=1)
    doomed = absurd.start("doomed")
    wait_until(lambda: side_effects(absurd.dsn, orphan_task)["started"] == 1, timeout=60)
    kill_group(doomed)  # mid-job: its claim runs out, nobody finishes the run
    live_task, live = absurd.spawn({"seconds": 120, "extend": True})
    absurd.start("alive")  # claims the live job before the orphan's claim runs out
    wait_until(lambda: side_effects(absurd.dsn, live_task)["started"] == 1, timeout=60)
    waiting = [absurd.spawn({"seconds": 0})[0] for _ in range(2)]  # the worker is busy

    def stale_now():
        _, snap = queuetop(capsys, "snapshot", *flags)
        return snap if snap["stale_leases"] else None

    snap = wait_until(stale_now, timeout=CLAIM + 30, interval=0.5)
    # the orphan is the one stale lease (its worker named, alive unknown); the live
    # worker's long job is not: its heartbeat extends its claim
    assert [(s["id"], s["worker"], s["worker_alive"]) for s in snap["stale_leases"]] == [
        (orphan, "doomed", None)
    ]
    assert [str(r) for (r,) in rows(absurd.dsn, EXPIRED)] == [orphan]  # Absurd's own sweep
    assert snap["counts"] == {"ready": 2, "scheduled": 0, "running": 2, "done": 1,
                              "failed": 1, "dead": 1}  # fmt: skip
    assert +Counter(snap["counts"]) == library_counts(absurd.dsn)

    code, result = queuetop(capsys, "requeue", str(orphan), *flags)
    assert code == 0 and result["changed"] == [orphan], result
    # Absurd's recovery of an expired claim: the run failed ($ClaimTimeout), and its task,
    # out of attempts, retried as absurdctl retry-task does (max_attempts raised)
    assert rows(
        absurd.dsn,
        "SELECT state, failure_reason ->> 'name' FROM absurd.r_default WHERE run_id = %s",
        orphan,
    ) == [("failed", "$ClaimTimeout")]
    assert rows(
        absurd.dsn,
        "SELECT t.state, t.max_attempts, r.attempt, r.state FROM absurd.t_default t "
        "JOIN absurd.r_default r ON r.run_id = t.last_attempt_run WHERE t.task_id = %s",
        orphan_task,
    ) == [("pending", 2, 2, "pending")]
    assert rows(absurd.dsn, EXPIRED) == []  # nothing left for Absurd's own sweep
    _, snap = queuetop(capsys, "snapshot", *flags)
    assert snap["stale_leases"] == [] and +Counter(snap["counts"]) == library_counts(absurd.dsn)
    assert snap["counts"]["failed"] == 2  # the orphan's run, retried

    absurd.start("fresh")
    wait_until(lambda: absurd.result(orphan_task) == "completed", timeout=60)
    for task in waiting:
        wait_until(lambda task=task: absurd.result(task) == "completed", timeout=60)
    assert side_effects(absurd.dsn, orphan_task) == Counter(started=2, done=1)  # exactly once
    assert absurd.result(live_task) == "running" and run_state(absurd.dsn, live) == "running"
    assert rows(
        absurd.dsn,
        "SELECT action, outcome FROM queuetop.audit_log WHERE target = %s",
        orphan,
    ) == [("requeue", "changed")]


def test_dead_letter_ends_as_absurd_fail_path_and_refusals(absurd, capsys):
    flags = ["--preset", "absurd", "--table", "absurd.r_default", "--dsn", absurd.dsn]
    failing, failing_run = absurd.spawn({"fail": True}, max_attempts=1)
    worker = absurd.start("w")
    wait_until(lambda: absurd.result(failing) == "failed", timeout=60)
    kill_group(worker)
    parked, parked_run = absurd.spawn({"seconds": 0})
    cancelled, cancelled_run = absurd.spawn({"seconds": 0})
    absurd.app("cancel", cancelled)

    code, result = queuetop(capsys, "dead-letter", parked_run, "--reason", "poison", *flags)
    assert code == 0 and result["changed"] == [parked_run], result
    # where Absurd's own fail path leaves a task with no attempt left: run and task failed
    library, ours = (
        rows(
            absurd.dsn,
            "SELECT r.state, t.state, r.failed_at IS NOT NULL, r.failure_reason IS NOT NULL, "
            "t.last_attempt_run = r.run_id, t.attempts FROM absurd.r_default r "
            "JOIN absurd.t_default t USING (task_id) WHERE r.run_id = %s",
            run,
        )[0]
        for run in (failing_run, parked_run)
    )
    assert ours[:5] == library[:5] == ("failed", "failed", True, True, True)
    assert absurd.result(parked) == "failed"
    assert rows(
        absurd.dsn,
        "SELECT failure_reason ->> 'message' FROM absurd.r_default WHERE run_id = %s",
        parked_run,
    ) == [("poison",)]
    _, snap = queuetop(capsys, "snapshot", *flags)
    assert snap["counts"]["dead"] == 3 and +Counter(snap["counts"]) == library_counts(absurd.dsn)

    # refused in Absurd's terms: a cancelled task is not retried, an ended one not failed
    code, result = queuetop(capsys, "requeue", cancelled_run, *flags)
    assert code == 1 and "Absurd retries failed tasks only" in result["skipped"][0]["reason"]
    code, result = queuetop(capsys, "dead-letter", cancelled_run, "--reason", "x", *flags)
    assert code == 1 and "already cancelled" in result["skipped"][0]["reason"]

    # a dead task runs again through Absurd's retry_task, and a worker completes it; the
    # dead-lettered run is then one its task ran again, which a requeue refuses
    code, result = queuetop(capsys, "requeue", parked_run, *flags)
    assert code == 0 and result["changed"] == [parked_run]
    absurd.start("again")
    wait_until(lambda: absurd.result(parked) == "completed", timeout=60)
    code, result = queuetop(capsys, "requeue", parked_run, *flags)
    assert code == 1 and "already runs this task again" in result["skipped"][0]["reason"]


def test_previous_schema_0_4_with_absurd_own_functions(dsn, capsys):
    """Absurd 0.4.0: its schema, and its own spawn, claim and fail functions called in SQL."""
    install(dsn, "absurd_0_4.sql")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT absurd.create_queue('default')")
        conn.execute("SELECT absurd.spawn_task('default', 'job', '{}'::jsonb)")
        (run,) = conn.execute("SELECT run_id FROM absurd.claim_task('default', 'w1', 1)").fetchone()
    flags = ["--preset", "absurd", "--table", "absurd.r_default", "--dsn", dsn]
    code, found = queuetop(capsys, "discover", "--dsn", dsn)
    assert [(q["table"], q["version"]) for q in found["queues"] if q["adapter"] == "absurd"] == [
        ("absurd.r_default", "0.4.0")
    ]

    def stale_now():
        _, snap = queuetop(capsys, "snapshot", *flags)
        return snap if snap["stale_leases"] else None

    snap = wait_until(stale_now, timeout=30, interval=0.5)
    assert [(s["id"], s["worker"]) for s in snap["stale_leases"]] == [(str(run), "w1")]
    code, result = queuetop(capsys, "requeue", str(run), *flags)
    assert code == 0 and result["changed"] == [str(run)]
    with psycopg.connect(dsn, autocommit=True) as conn:
        claimed = conn.execute("SELECT attempt FROM absurd.claim_task('default', 'w2', 30)")
        assert claimed.fetchall() == [(2,)]  # Absurd's claim takes the task's next attempt


def test_monitor_reads_absurd_with_access_share_only(absurd):
    absurd.spawn({"seconds": 0})
    with db.connect_monitor(absurd.dsn) as mon:
        spec = config.validate(mon, config.build_spec(preset="absurd", table="absurd.r_default"))
        assert spec.table_match == "default" and str(spec.tables["tasks"]) == "absurd.t_default"
        mon.autocommit = False
        monitor.collect(mon, spec)
        held = mon.execute(
            "SELECT locktype, mode FROM pg_locks WHERE pid = pg_backend_pid()"
        ).fetchall()
        mon.rollback()
    assert {mode for _, mode in held} <= {"AccessShareLock", "ExclusiveLock"}, held
    assert all(kind == "virtualxid" for kind, mode in held if mode == "ExclusiveLock"), held
