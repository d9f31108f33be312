"""`--preset dbos` against DBOS itself (Python 3.12): its system schema from its own
migrations, workflows enqueued with its client, its real worker processes (DBOS.launch on
the queues they listen to), one SIGKILLed mid-workflow.

DBOS records no heartbeat; the executors here name their sessions 'dbos:<executor id>'
(the preset's opt-in), so the killed executor's workflow is dead at once while the live
executor's long workflow is not. After `queuetop requeue --preset dbos` (what DBOS's own
recovery does), a fresh executor reruns the orphan to completion exactly once.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from helpers import wait_until
from library_support import find_python, kill_group, python_venv, rows, side_effects, spawn
from node_apps import node_dsn

from dashboard import config, db
from dashboard.cli import main

APP = Path(__file__).resolve().parent / "library_apps" / "dbos_app.py"
PACKAGES = ["dbos==3.4.0"]
HOUR = 3600
ROLE_OF = {
    "ENQUEUED": "ready",
    "DELAYED": "scheduled",
    "PENDING": "running",
    "SUCCESS": "done",
    "ERROR": "dead",  # final for a workflow: it never runs again on its own
    "MAX_RECOVERY_ATTEMPTS_EXCEEDED": "dead",
    "CANCELLED": "dead",
}
SIDE_TABLE = "CREATE TABLE side_effects (job_id text NOT NULL, event text NOT NULL)"


@pytest.fixture(scope="module")
def dbos_python() -> Path:
    python = find_python("3.12")
    if python is None:
        pytest.skip("no Python 3.12 found for the DBOS venv")
    return python_venv("dbos", python, PACKAGES)


class Dbos:
    def __init__(self, python: Path, dsn: str, logs: Path):
        self.python, self.logs = python, logs
        self.env = {"DBOS_DSN": node_dsn(dsn)}  # DBOS takes a postgresql:// URL
        self.workers: list[subprocess.Popen] = []

    def app(self, *argv: str) -> dict:
        done = subprocess.run(
            [str(self.python), str(APP), *argv],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    def worker(self, executor: str, queues: str) -> subprocess.Popen:
        proc = spawn(
            [str(self.python), str(APP), "work", executor, queues],
            env=self.env,
            log=self.logs / f"{executor}.log",
        )
        self.workers.append(proc)
        return proc


@pytest.fixture
def dbos(dbos_python, dsn, connect, tmp_path):
    app = Dbos(dbos_python, dsn, tmp_path)
    app.app("migrate")
    connect(autocommit=True).execute(SIDE_TABLE)
    try:
        yield app
    finally:
        for proc in app.workers:
            kill_group(proc)


def queuetop(capsys, *argv: str) -> tuple[int, dict]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


def test_killed_dbos_executor_workflow_is_found_requeued_and_run_once(dbos, dsn, capsys):
    ids = dbos.app(
        "enqueue",
        json.dumps(
            {
                "quick": {"workflow": "quick", "queue": "work"},
                "boom": {"workflow": "boom", "queue": "work"},
                "delayed": {"workflow": "quick", "queue": "work", "delay": HOUR},
                "orphan": {"workflow": "long", "queue": "victim", "args": [HOUR]},
                "live_long": {"workflow": "long", "queue": "live", "args": [HOUR]},
            }
        ),
    )
    assert main(["init-audit", "--dsn", dsn]) == 0
    with db.connect_monitor(dsn) as mon:
        mapped = config.validate(mon, config.load_preset("dbos")).library_version
    assert mapped.release == "DBOS 3.4"
    dbos.worker("live-x", "live,work")
    victim = dbos.worker("victim-x", "victim")
    wait_until(
        lambda: (
            side_effects(dsn, ids["orphan"])["started"]
            and side_effects(dsn, ids["live_long"])["started"]
            and dbos.app("view")[ids["quick"]] == "SUCCESS"
            and dbos.app("view")[ids["boom"]] == "ERROR"
        ),
        timeout=60,
        interval=0.3,
    )
    kill_group(victim)  # mid-workflow: its sessions go, its workflow stays PENDING
    capsys.readouterr()

    def orphan_stale() -> dict | None:
        code, snap = queuetop(capsys, "snapshot", "--preset", "dbos", "--json", "--dsn", dsn)
        stale = {lease["id"] for lease in snap["stale_leases"]}
        return snap if code == 0 and stale == {ids["orphan"]} else None

    snap = wait_until(orphan_stale, timeout=30, interval=0.3)  # not the live executor's
    [lease] = snap["stale_leases"]
    assert (lease["worker"], lease["worker_alive"], lease["group"]) == ("victim-x", False, "victim")
    counts = {r: n for r, n in snap["counts"].items() if n}
    assert counts == dict(Counter(ROLE_OF[s] for s in dbos.app("view").values()))
    assert counts == {"scheduled": 1, "running": 2, "done": 1, "dead": 1}

    code, result = queuetop(
        capsys,
        "requeue",
        "--preset",
        "dbos",
        "--dsn",
        dsn,
        "--json",
        ids["orphan"],
        ids["live_long"],
    )
    assert code == 1 and result["changed"] == [ids["orphan"]]
    assert result["skipped"] == [
        {"id": ids["live_long"], "reason": "lease not expired (use --force)"}
    ]
    assert dbos.app("view")[ids["orphan"]] == "ENQUEUED"
    dbos.worker("victim-y", "victim")
    wait_until(lambda: dbos.app("view")[ids["orphan"]] == "SUCCESS", timeout=60, interval=0.3)
    assert side_effects(dsn, ids["orphan"]) == Counter(started=2, done=1)  # exactly once
    assert rows(
        dsn, "SELECT executor_id FROM dbos.workflow_status WHERE workflow_uuid = %s", ids["orphan"]
    ) == [("victim-y",)]

    # dead-letter in DBOS's terms: cancelled, as cancel_workflow leaves it
    code, result = queuetop(
        capsys,
        "dead-letter",
        "--preset",
        "dbos",
        "--dsn",
        dsn,
        "--json",
        "--reason",
        "no",
        ids["delayed"],
    )
    assert (code, result["changed"]) == (0, [ids["delayed"]])
    assert dbos.app("view")[ids["delayed"]] == "CANCELLED"
