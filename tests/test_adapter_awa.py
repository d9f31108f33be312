"""The awa preset on awa's canonical engine against real awa workers: awa-pg's own Python
runtime (0.6.9, and 0.5.7, the previous line) in venvs of their own
(tests/library_apps/awa_app.py), one SIGKILLed mid-job as a crash would; awa's own list_jobs
and its own rescue statement are the truth.

The canonical engine keeps jobs in awa.jobs_hot and awa.scheduled_jobs. awa 0.6 keeps a
database canonical while it holds canonical jobs, so each test enqueues before it starts a
worker (as a 0.5 upgrade or an app that enqueues first does); a 0.6 worker started on an
empty database switches it to the queue storage engine: tests/test_adapter_awa_queue_storage.py.

awa's own maintenance would rescue the orphan (its heartbeat rescue, in whichever worker
leads) soon after the limit: the workers of the crash test run their stale-heartbeat sweep
once an hour (heartbeat_rescue_interval), so that the orphan is still there when queuetop
is asked; their limit itself (heartbeat_staleness) is the short one queuetop is given.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from helpers import wait_until
from library_support import find_python, kill_group, python_venv, rows, side_effects, spawn
from psycopg import conninfo

from dashboard.cli import main
from dashboard.setup import schema

APP = Path(__file__).resolve().parent / "library_apps" / "awa_app.py"
STALE_S = 10  # the workers' heartbeat_staleness, and queuetop's --stale-after
STALE_PAST = timedelta(seconds=STALE_S + 1)
HOUR_MS = "3600000"
# version -> (venv, package, awa's schema marker as the preset reads it, the release named)
VERSIONS = {
    "0.6.9": ("awa", "awa-pg==0.6.9", "40, canonical engine", "0.6.5 to 0.6.9"),
    "0.5.7": ("awa-0.5", "awa-pg==0.5.7", "11, canonical engine", "0.5.7"),
}
ROLE_OF = {
    "available": "ready",
    "scheduled": "scheduled",
    "waiting_external": "scheduled",
    "running": "running",
    "completed": "done",
    "retryable": "failed",  # awa's promoter runs it again
    "failed": "dead",  # awa never runs it again on its own
    "cancelled": "dead",
}


def awa_url(dsn: str) -> str:
    """The postgresql:// URL awa (sqlx) reads: every part in the query string (sqlx refuses
    a user before an empty host, the socket directory's place)."""
    parts = conninfo.conninfo_to_dict(dsn)
    query = {k: parts[k] for k in ("host", "port", "user", "password") if parts.get(k)}
    args = "&".join(f"{k}={quote(str(v), safe='/')}" for k, v in query.items())
    return f"postgresql:///{quote(str(parts['dbname']), safe='')}?{args}"


class Awa:
    """One awa release's app on one test database: commands and worker processes."""

    def __init__(self, version: str, dsn: str, logs: Path):
        venv, package, self.marker, self.release = VERSIONS[version]
        python = find_python("3.12") or sys.executable  # awa-pg's wheels are abi3, 3.10+
        self.python = python_venv(venv, python, [package, "psycopg[binary]"])
        self.version, self.dsn, self.logs = version, dsn, logs
        self.env = {"AWA_DSN": awa_url(dsn), "AWA_STALENESS_MS": str(STALE_S * 1000)}
        self.workers: list[subprocess.Popen] = []

    def run(self, *argv: str) -> str:
        done = subprocess.run(
            [str(self.python), str(APP), *argv],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def enqueue(self, seconds: float, queue: str = "demo", *more: str) -> int:
        return int(self.run("enqueue", str(seconds), queue, *more))

    def view(self) -> dict:
        return json.loads(self.run("view"))

    def jobs(self, *ids: int) -> dict[int, dict]:
        """Each job as awa's own get_job reads it (state "missing" where it finds none)."""
        lines = self.run("jobs", *map(str, ids)).splitlines()
        return {job["id"]: job for job in map(json.loads, lines)}

    def start(
        self, name: str, queue: str, rescue_ms: str = "1000", slots: int = 1
    ) -> subprocess.Popen:
        proc = spawn(
            [str(self.python), str(APP), "work", name, queue, str(slots)],
            env={**self.env, "AWA_RESCUE_MS": rescue_ms},
            log=self.logs / f"{name}.log",
        )
        self.workers.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.workers:
            kill_group(proc)


@pytest.fixture(params=list(VERSIONS))
def awa(request, dsn, tmp_path):
    app = Awa(request.param, dsn, tmp_path)
    app.run("migrate")
    with psycopg.connect(dsn, autocommit=True) as conn:
        schema.init_audit(conn)
    yield app
    app.stop()


def queuetop(capsys, *argv: str) -> tuple[int, dict]:
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def job(dsn: str, job_id: int) -> dict:
    """The job's row as awa keeps it (awa.jobs, its view over jobs_hot and scheduled_jobs)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        cur = conn.execute(
            "SELECT state::text, attempt, run_lease, attempted_at, heartbeat_at, deadline_at, "
            "finalized_at, "
            "errors[array_upper(errors, 1)] AS last FROM awa.jobs WHERE id = %s",
            (job_id,),
        )
        names = [c.name for c in cur.description]
        return dict(zip(names, cur.fetchone(), strict=True))


def awa_stale(dsn: str) -> set[int]:
    """awa's own answer: the jobs its stale-heartbeat rescue takes (the selection of
    rescue_canonical_stale_heartbeats, awa-worker maintenance.rs, 0.6; the same in 0.5)."""
    found = rows(
        dsn,
        "SELECT id FROM awa.jobs_hot WHERE state = 'running' "
        "AND heartbeat_at < now() - (%s * interval '1 millisecond')",
        STALE_S * 1000,
    )
    return {job_id for (job_id,) in found}


def library_roles(view: dict) -> dict[str, int]:
    roles: Counter = Counter()
    for state, n in view["states"].items():
        roles[ROLE_OF[state]] += n
    return dict(roles)


def test_discovered_with_its_version(awa, capsys):
    awa.enqueue(0.1)
    code, found = queuetop(capsys, "discover", "--dsn", awa.dsn)
    assert code == 0
    ours = [q for q in found["queues"] if q["adapter"] == "awa"]
    assert [(q["table"], q["version"], q["schema_marker"], q["confidence"]) for q in ours] == [
        ("awa.jobs_hot", awa.release, awa.marker, "high")
    ]
    # awa's other tables (scheduled_jobs, its queue-storage rings) are not queues of their own
    assert not [q for q in found["queues"] if q["table"].startswith("awa.") and q not in ours]


def test_killed_worker_job_is_the_one_stale_lease_then_requeued_and_run_once(awa, capsys):
    dsn = awa.dsn
    flags = ["--preset", "awa", "--stale-after", f"{STALE_S}s", "--dsn", dsn]
    orphan = awa.enqueue(600)
    quick = awa.enqueue(0.1)
    failing = awa.enqueue(0.1, "demo", "fail")
    later = awa.enqueue(0.1, "demo", "later")
    assert rows(dsn, "SELECT awa.active_storage_engine()") == [("canonical",)]
    doomed = awa.start("doomed", "demo", rescue_ms=HOUR_MS, slots=3)
    wait_until(lambda: side_effects(dsn, orphan)["started"] == 1, timeout=60)
    wait_until(lambda: job(dsn, quick)["state"] == "completed", timeout=60)
    wait_until(lambda: job(dsn, failing)["state"] == "failed", timeout=60)
    kill_group(doomed)  # mid-job: its claim stays running, nobody beats for it
    live = awa.enqueue(600, "live")
    awa.start("alive", "live", rescue_ms=HOUR_MS)
    wait_until(lambda: side_effects(dsn, live)["started"] == 1, timeout=60)

    def stale_now():
        _, snap = queuetop(capsys, "snapshot", *flags)
        return snap if snap["stale_leases"] else None

    snap = wait_until(stale_now, timeout=STALE_S + 30, interval=0.5)
    assert snap["threshold"]["source"] == "--stale-after"
    # the orphan is the one stale lease; the live worker's younger job is not
    assert [(s["id"], s["worker_alive"], s["group"]) for s in snap["stale_leases"]] == [
        (orphan, False, "demo")
    ]
    assert awa_stale(dsn) == {orphan}  # awa's own rescue would take that one
    # the counts are awa's own (its list_jobs): the later job waits in scheduled_jobs
    view = awa.view()
    assert snap["counts"] == {role: library_roles(view).get(role, 0) for role in snap["counts"]}
    assert library_roles(view) == {"scheduled": 1, "running": 2, "done": 1, "dead": 1}
    assert job(dsn, later)["state"] == "scheduled"

    # once the live job is older than the limit, queuetop still says what awa's rescue would
    started = job(dsn, live)["attempted_at"]
    wait_until(lambda: rows(dsn, "SELECT now()")[0][0] > started + STALE_PAST, timeout=30)
    _, snap = queuetop(capsys, "snapshot", *flags)
    stale = {s["id"] for s in snap["stale_leases"]}
    assert stale == awa_stale(dsn)
    if awa.version == "0.5.7":  # its worker beats for the live job: never stale
        assert stale == {orphan}
        assert job(dsn, live)["heartbeat_at"] > started
    else:
        # awa 0.6.9's Python runtime beats its queue-storage plane only, never a canonical
        # job's heartbeat_at (its HeartbeatService is built with the configured storage, not
        # the one it resolved): awa's own rescue takes a live worker's job once it is older
        # than the limit, and queuetop says so
        assert stale == {orphan, live}
        assert job(dsn, live)["heartbeat_at"] == started

    code, result = queuetop(capsys, "requeue", str(orphan), *flags, "--reason", "worker killed")
    assert code == 0 and result["changed"] == [orphan], result
    row = job(dsn, orphan)
    assert (row["state"], row["attempt"], row["heartbeat_at"], row["deadline_at"]) == (
        "available",
        1,
        None,
        None,
    )
    assert row["last"]["error"] == "rescued by queuetop requeue: worker presumed dead"
    _, snap = queuetop(capsys, "snapshot", *flags)
    assert orphan not in {s["id"] for s in snap["stale_leases"]}
    assert snap["counts"]["ready"] == library_roles(awa.view())["ready"] == 1
    # a fresh worker runs it, once: the killed run, then one
    awa.start("fresh", "demo")
    wait_until(lambda: side_effects(dsn, orphan)["done"] == 1, timeout=60)
    # the handler's side effect commits before awa records the completion (CI once read
    # the job still running in between): wait for awa's own word
    wait_until(lambda: job(dsn, orphan)["state"] != "running", timeout=30)
    assert side_effects(dsn, orphan) == Counter(started=2, done=1)
    assert (job(dsn, orphan)["state"], job(dsn, orphan)["attempt"]) == ("completed", 2)
    assert rows(
        dsn,
        "SELECT action, outcome, reason FROM queuetop.audit_log WHERE target = %s",
        str(orphan),
    ) == [("requeue", "changed", "worker killed")]


def test_dead_letter_ends_where_the_library_failure_ends(awa, capsys):
    dsn = awa.dsn
    flags = ["--preset", "awa", "--dsn", dsn]
    failing = awa.enqueue(0.1, "demo", "fail")
    parked = awa.enqueue(0.1, "parked")  # no worker takes queue parked
    later = awa.enqueue(0.1, "demo", "later")  # in awa.scheduled_jobs: refused by name
    awa.start("w", "demo")
    wait_until(lambda: job(dsn, failing)["state"] == "failed", timeout=60)
    code, result = queuetop(capsys, "dead-letter", str(parked), "--reason", "poison", *flags)
    assert code == 0 and result["changed"] == [parked], result
    library, ours = job(dsn, failing), job(dsn, parked)
    # where awa's worker leaves a job that failed for good (TerminalError)
    assert library["state"] == ours["state"] == "failed"
    assert library["finalized_at"] and ours["finalized_at"]
    assert set(library["last"]) == set(ours["last"]) == {"error", "attempt", "at", "terminal"}
    assert library["last"]["error"].startswith("TerminalError: boom")  # with its traceback
    assert ours["last"]["error"] == "poison"
    assert library["last"]["terminal"] is ours["last"]["terminal"] is True
    view = awa.view()
    _, snap = queuetop(capsys, "snapshot", *flags)
    assert snap["counts"]["dead"] == library_roles(view)["dead"] == view["states"]["failed"] == 2
    for action in ("requeue", "dead-letter"):
        code, result = queuetop(capsys, action, str(later), "--reason", "no", *flags)
        assert code == 1 and result["changed"] == [], result
        (skipped,) = result["skipped"]
        assert skipped["id"] == later and "awa keeps this scheduled job" in skipped["reason"]
    assert job(dsn, later)["state"] == "scheduled"
    # and back: requeue of a failed job is awa's admin retry (available, attempt 0)
    code, result = queuetop(capsys, "requeue", str(parked), *flags)
    assert code == 0 and result["changed"] == [parked], result
    assert (job(dsn, parked)["state"], job(dsn, parked)["attempt"]) == ("available", 0)
    awa.start("parked-worker", "parked")
    wait_until(lambda: job(dsn, parked)["state"] == "completed", timeout=60)
    assert side_effects(dsn, parked) == Counter(started=1, done=1)
