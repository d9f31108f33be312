"""`--preset django-tasks` against Django's tasks framework with django-tasks-db (Django 6.1,
Python 3.12): its table from its own migrations (`manage.py migrate`), tasks enqueued with
its API, its real workers (`manage.py db_worker`), one SIGKILLed mid-task.

db_worker records no heartbeat; the workers here name their sessions
'django_tasks:<worker id>' (the preset's opt-in), so the killed worker's task is dead at
once while the live worker's long task is not. After `queuetop requeue --preset
django-tasks`, a fresh db_worker completes the orphan exactly once.
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

from dashboard import config, db
from dashboard.cli import main

APPS = Path(__file__).resolve().parent / "library_apps"
PROJECT = APPS / "django_tasks_project"
PACKAGES = ["django-tasks-db==0.13.0", "psycopg[binary]>=3.2"]
HOUR = 3600
ROLE_OF = {"READY": "ready", "RUNNING": "running", "SUCCESSFUL": "done", "FAILED": "dead"}
SIDE_TABLE = "CREATE TABLE side_effects (job_id text NOT NULL, event text NOT NULL)"


@pytest.fixture(scope="module")
def django_python() -> Path:
    python = find_python("3.12")
    if python is None:
        pytest.skip("no Python 3.12 found: Django 6 needs Python >= 3.12")
    return python_venv("django-tasks", python, PACKAGES)


class Django:
    def __init__(self, python: Path, dsn: str, logs: Path):
        self.python, self.logs = python, logs
        self.env = {"DJANGO_DSN": dsn, "PYTHONPATH": str(PROJECT)}
        self.workers: list[subprocess.Popen] = []

    def run(self, *argv: str) -> str:
        done = subprocess.run(
            [str(self.python), *argv],
            env={**os.environ, **self.env},
            cwd=PROJECT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def app(self, command: str, arg: object) -> dict:
        return json.loads(self.run(str(APPS / "django_tasks_app.py"), command, json.dumps(arg)))

    def worker(self, queue: str, worker_id: str) -> subprocess.Popen:
        argv = ["manage.py", "db_worker", "--queue-name", queue, "--worker-id", worker_id]
        proc = spawn(
            [str(self.python), *argv, "--interval", "0.2", "--no-startup-delay"],
            env={**self.env, "WORKER_ID": worker_id},
            cwd=PROJECT,
            log=self.logs / f"{worker_id}.log",
        )
        self.workers.append(proc)
        return proc


@pytest.fixture
def django(django_python, dsn, connect, tmp_path):
    app = Django(django_python, dsn, tmp_path)
    app.run("manage.py", "migrate", "--verbosity", "0")
    connect(autocommit=True).execute(SIDE_TABLE)
    try:
        yield app
    finally:
        for proc in app.workers:
            kill_group(proc)


def library_roles(django: Django, ids: dict[str, str], dsn: str) -> dict[str, int]:
    """The backend's own get_result per task, as queuetop's roles (a READY task whose
    run_after is ahead waits: scheduled)."""
    statuses = django.app("view", list(ids.values()))
    later = {
        i
        for (i,) in rows(
            dsn,
            "SELECT id::text FROM django_tasks_database_dbtaskresult "
            "WHERE run_after > now() AND run_after < '9999-01-01'",
        )
    }
    found = Counter(
        "scheduled" if i in later and s == "READY" else ROLE_OF[s] for i, s in statuses.items()
    )
    return dict(found)


def queuetop(capsys, *argv: str) -> tuple[int, dict]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


def test_killed_db_worker_task_is_found_requeued_and_run_once(django, dsn, capsys):
    ids = django.app(
        "enqueue",
        {
            "quick": {"task": "quick"},
            "boom": {"task": "boom"},
            "scheduled": {"task": "quick", "run_after_s": HOUR},
            "orphan": {"task": "long", "args": [HOUR], "queue": "victim"},
            "live_long": {"task": "long", "args": [HOUR], "queue": "live"},
        },
    )
    assert main(["init-audit", "--dsn", dsn]) == 0
    with db.connect_monitor(dsn) as mon:
        mapped = config.validate(mon, config.load_preset("django-tasks")).library_version
    assert mapped.release == "django-tasks-db 0.13"
    django.worker("default", "default-w")
    django.worker("live", "live-w")
    victim = django.worker("victim", "victim-w")
    wait_until(
        lambda: (
            side_effects(dsn, ids["orphan"])["started"]
            and side_effects(dsn, ids["live_long"])["started"]
            and side_effects(dsn, ids["quick"])["done"]
            and side_effects(dsn, ids["boom"])["raised"]
        ),
        timeout=60,
        interval=0.2,
    )
    wait_until(lambda: django.app("view", [ids["boom"]]) == {ids["boom"]: "FAILED"}, timeout=30)
    kill_group(victim)  # mid-task: its session goes, its task stays RUNNING
    capsys.readouterr()

    def orphan_stale() -> dict | None:
        code, snap = queuetop(
            capsys, "snapshot", "--preset", "django-tasks", "--json", "--dsn", dsn
        )
        stale = {lease["id"] for lease in snap["stale_leases"]}
        return snap if code == 0 and stale == {ids["orphan"]} else None

    snap = wait_until(orphan_stale, timeout=30, interval=0.3)  # not the live worker's task
    [lease] = snap["stale_leases"]
    assert (lease["worker"], lease["worker_alive"], lease["group"]) == ("victim-w", False, "victim")
    counts = {r: n for r, n in snap["counts"].items() if n}
    assert counts == library_roles(django, ids, dsn)
    assert counts == {"scheduled": 1, "running": 2, "done": 1, "dead": 1}

    code, result = queuetop(
        capsys,
        "requeue",
        "--preset",
        "django-tasks",
        "--dsn",
        dsn,
        "--json",
        "--reason",
        "victim-w was SIGKILLed",
        ids["orphan"],
        ids["live_long"],
    )
    assert code == 1 and result["changed"] == [ids["orphan"]]
    assert result["skipped"] == [
        {"id": ids["live_long"], "reason": "lease not expired (use --force)"}
    ]
    assert django.app("view", [ids["orphan"]]) == {ids["orphan"]: "READY"}
    django.worker("victim", "victim-fresh")
    wait_until(
        lambda: django.app("view", [ids["orphan"]]) == {ids["orphan"]: "SUCCESSFUL"}, timeout=60
    )
    assert side_effects(dsn, ids["orphan"]) == Counter(started=2, done=1)  # exactly once
    assert rows(
        dsn,
        "SELECT worker_ids FROM django_tasks_database_dbtaskresult WHERE id = %s",
        ids["orphan"],
    ) == [(["victim-w", "victim-fresh"],)]

    # dead-letter in django-tasks' terms: FAILED as set_failed writes it
    code, result = queuetop(
        capsys,
        "dead-letter",
        "--preset",
        "django-tasks",
        "--dsn",
        dsn,
        "--json",
        "--reason",
        "not wanted",
        ids["scheduled"],
    )
    assert (code, result["changed"]) == (0, [ids["scheduled"]])
    assert django.app("view", [ids["scheduled"]]) == {ids["scheduled"]: "FAILED"}
    assert rows(
        dsn,
        "SELECT exception_class_path, traceback FROM django_tasks_database_dbtaskresult "
        "WHERE id = %s",
        ids["scheduled"],
    ) == [("queuetop.DeadLettered", "not wanted")]
