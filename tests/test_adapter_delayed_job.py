"""The delayed-job preset against real delayed_job workers (Debian's delayed_job 4.1.9 and
delayed_job_active_record 4.1.6 on ActiveRecord and ruby-pg: tests/library_apps/
delayed_job_app.rb), SIGKILLed mid-job as a crash would; the library's own scopes are the
truth the counts are checked against."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import psycopg
import pytest
from helpers import wait_until
from library_support import kill_group, rows, side_effects, spawn

from dashboard.cli import main
from dashboard.setup import schema

APP = Path(__file__).resolve().parent / "library_apps" / "delayed_job_app.rb"
MAX_RUN_TIME = 10  # seconds: the workers' max_run_time, and queuetop's --stale-after


def _ruby_problem() -> str | None:
    if shutil.which("ruby") is None:
        return "no ruby (apt: ruby-delayed-job ruby-delayed-job-active-record ruby-pg)"
    done = subprocess.run(
        ["ruby", "-e", 'require "delayed_job_active_record"; require "pg"'],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        return f"delayed_job does not load: {done.stderr.strip().splitlines()[-1:]}"
    return None


pytestmark = pytest.mark.skipif(bool(_ruby_problem()), reason=_ruby_problem() or "")


def pg_env(dsn: str) -> dict[str, str]:
    """libpq's environment for the Ruby app (its ActiveRecord connection reads it)."""
    info = psycopg.conninfo.conninfo_to_dict(dsn)
    names = {"host": "PGHOST", "port": "PGPORT", "user": "PGUSER", "dbname": "PGDATABASE",
             "password": "PGPASSWORD"}  # fmt: skip
    return {env: str(info[key]) for key, env in names.items() if info.get(key)}


def app(dsn: str, *argv: str) -> str:
    done = subprocess.run(
        ["ruby", str(APP), *argv],
        env={**os.environ, **pg_env(dsn), "MAX_RUN_TIME": str(MAX_RUN_TIME)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


class Workers:
    def __init__(self, dsn: str, tmp_path: Path):
        self.dsn, self.tmp_path, self.procs = dsn, tmp_path, []

    def start(self, name: str) -> subprocess.Popen:
        proc = spawn(
            ["ruby", str(APP), "work", name],
            env={**pg_env(self.dsn), "MAX_RUN_TIME": str(MAX_RUN_TIME)},
            log=self.tmp_path / f"{name}.log",
        )
        self.procs.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.procs:
            kill_group(proc)


@pytest.fixture
def dj(dsn, tmp_path):
    app(dsn, "schema")
    with psycopg.connect(dsn, autocommit=True) as conn:
        schema.init_audit(conn)
    workers = Workers(dsn, tmp_path)
    yield dsn, workers
    workers.stop()


def queuetop(capsys, *argv: str) -> tuple[int, dict]:
    code = main([*argv, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def locked_by(dsn: str, job: int) -> str | None:
    found = rows(dsn, "SELECT locked_by FROM delayed_jobs WHERE id = %s", job)
    return found[0][0] if found else None


def test_discovered_as_delayed_job(dj, capsys):
    dsn, _ = dj
    code, found = queuetop(capsys, "discover", "--dsn", dsn)
    assert code == 0
    ours = [q for q in found["queues"] if q["table"] == "public.delayed_jobs"]
    assert [(q["adapter"], q["version"], q["confidence"]) for q in ours] == [
        ("delayed-job", "4.x", "high")
    ]


def test_killed_worker_job_is_the_one_stale_lease_then_requeued_and_run_once(dj, capsys):
    dsn, workers = dj
    flags = ["--preset", "delayed-job", "--stale-after", f"{MAX_RUN_TIME}s", "--dsn", dsn]
    orphan = int(app(dsn, "enqueue", "60"))
    doomed = workers.start("doomed")
    wait_until(lambda: locked_by(dsn, orphan) == "doomed", timeout=60)
    wait_until(lambda: side_effects(dsn, orphan)["started"] == 1, timeout=60)  # it runs
    kill_group(doomed)  # mid-job: its lock stays, nobody finishes it
    time.sleep(MAX_RUN_TIME / 2)  # the live worker's job starts later: younger than its limit
    live_job = int(app(dsn, "enqueue", "60"))
    alive = workers.start("alive")
    wait_until(lambda: locked_by(dsn, live_job) == "alive", timeout=60)

    def stale_now():
        _, snap = queuetop(capsys, "snapshot", *flags)
        return snap if snap["stale_leases"] else None

    snap = wait_until(stale_now, timeout=MAX_RUN_TIME + 30, interval=0.5)
    # the orphan is the one stale lease; the live worker's younger job is not
    assert [(s["id"], s["worker"]) for s in snap["stale_leases"]] == [(orphan, "doomed")]
    assert locked_by(dsn, live_job) == "alive"
    # the library's own scopes: both are locked, and its reserve query would take the orphan
    view = json.loads(app(dsn, "view"))
    assert view["running"] == snap["counts"]["running"] == 2
    assert view["claimable"] == 1  # the orphan, locked longer than max_run_time
    # the live worker is stopped here: once its own job times out it would take the orphan
    # (as its reserve query does), and the requeue's effect could not be seen on its own
    kill_group(alive)

    code, result = queuetop(capsys, "requeue", str(orphan), *flags)
    assert code == 0 and result["changed"] == [orphan], result
    assert rows(dsn, "SELECT locked_at, locked_by FROM delayed_jobs WHERE id = %s", orphan) == [
        (None, None)
    ]
    _, snap = queuetop(capsys, "snapshot", *flags)
    view = json.loads(app(dsn, "view"))
    # ready for any worker (the live one takes it once its own job ends)
    assert (
        snap["stale_leases"] == []
        and snap["counts"]["ready"] + snap["counts"]["running"] == view["ready"] + view["running"]
    )
    # a fresh worker runs it, once
    workers.start("fresh")
    wait_until(lambda: side_effects(dsn, orphan)["done"] == 1, timeout=120)
    assert side_effects(dsn, orphan) == {"started": 2, "done": 1}  # the killed run, then one


def test_dead_letter_ends_where_the_library_failure_ends(dj, capsys):
    dsn, workers = dj
    flags = ["--preset", "delayed-job", "--dsn", dsn]
    failing = int(app(dsn, "enqueue", "0.1", "fail"))
    workers.start("w")
    wait_until(
        lambda: rows(dsn, "SELECT failed_at FROM delayed_jobs WHERE id = %s", failing)[0][0],
        timeout=60,
    )
    workers.stop()
    parked = int(app(dsn, "enqueue", "0.1"))
    code, result = queuetop(capsys, "dead-letter", str(parked), "--reason", "poison", *flags)
    assert code == 0 and result["changed"] == [parked], result
    library, ours = (
        rows(
            dsn,
            "SELECT failed_at IS NOT NULL, locked_at, locked_by, last_error IS NOT NULL "
            "FROM delayed_jobs WHERE id = %s",
            job,
        )[0]
        for job in (failing, parked)
    )
    assert ours[0] is library[0] is True and ours[3] is library[3] is True
    assert rows(dsn, "SELECT last_error FROM delayed_jobs WHERE id = %s", parked) == [("poison",)]
    view = json.loads(app(dsn, "view"))
    _, snap = queuetop(capsys, "snapshot", *flags)
    assert snap["counts"]["dead"] == view["dead"] == 2 and view["claimable"] == 0
