"""`--preset django-q2` against django-q2 1.11.1 with its ORM broker (Django 5.2, Python 3.12):
its tables from its own migrations (`manage.py migrate`), tasks enqueued with its API
(async_task), its real clusters (`manage.py qcluster`), one SIGKILLed mid-task.

django-q2's ORM broker keeps one lock-until time per queued task: a pull sets it to now plus
the cluster's retry, and once it passes any cluster of that key pulls the task again. The
victim cluster runs with a 5 s retry; once it is killed, its task is the one stale lease as
soon as its lock passes, while the live cluster's older task (its own 60 s retry) is not.
After `queuetop requeue`, a fresh cluster completes the orphan exactly once. The truth the
test holds queuetop to: the broker's own queue_size and lock_size, its Success and Failure
models, its fetch.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from pathlib import Path

import psycopg
import pytest
from helpers import wait_until
from library_support import find_python, kill_group, python_venv, rows, side_effects, spawn

from dashboard import config, db
from dashboard.cli import main

APPS = Path(__file__).resolve().parent / "library_apps"
PROJECT = APPS / "django_q2_project"
PACKAGES = ["django-q2==1.11.1", "Django==5.2.8", "psycopg[binary]>=3.2"]
PRESET = ["--preset", "django-q2"]
LAST = "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"
SIDE_TABLE = "CREATE TABLE side_effects (job_id text NOT NULL, event text NOT NULL)"


@pytest.fixture(scope="module")
def q2_python() -> Path:
    python = find_python("3.12")
    if python is None:
        pytest.skip("no Python 3.12 found: django-q2 1.11 needs Django 5.2")
    return python_venv("django-q2", python, PACKAGES)


class DjangoQ:
    def __init__(self, python: Path, dsn: str, logs: Path):
        self.python, self.logs = python, logs
        self.env = {"DJANGO_DSN": dsn, "PYTHONPATH": str(PROJECT)}
        self.clusters: list[subprocess.Popen] = []

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
        return json.loads(self.run(str(APPS / "django_q2_app.py"), command, json.dumps(arg)))

    def cluster(self, name: str, log: str) -> subprocess.Popen:
        proc = spawn(
            [str(self.python), "manage.py", "qcluster"],
            env={**self.env, "Q_CLUSTER_NAME": name},
            cwd=PROJECT,
            log=self.logs / f"{log}.log",
        )
        self.clusters.append(proc)
        return proc


@pytest.fixture
def q2(q2_python, dsn, connect, tmp_path):
    app = DjangoQ(q2_python, dsn, tmp_path)
    app.run("manage.py", "migrate", "--verbosity", "0")
    connect(autocommit=True).execute(SIDE_TABLE)
    assert main(["init-audit", "--dsn", dsn]) == 0
    try:
        yield app
    finally:
        for proc in app.clusters:
            kill_group(proc)


def queuetop(capsys, *argv: str) -> tuple[int, dict]:
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def snapshot(capsys, dsn: str) -> dict:
    code, snap = queuetop(capsys, "snapshot", *PRESET, "--dsn", dsn)
    assert code == 0
    return snap


def one_line_refusal(capsys, *argv: str) -> str:
    assert main(list(argv)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_versions_from_its_migrations_and_discovered(q2, dsn, capsys):
    code, found = queuetop(capsys, "discover", "--dsn", dsn)
    assert code == 0
    ours = [q for q in found["queues"] if q["table"] == "public.django_q_ormq"]
    assert [(q["adapter"], q["version"], q["confidence"]) for q in ours] == [
        ("django-q2", "1.10 to 1.11", "high")
    ]
    # its results table (the preset's history) is the library's, no queue of its own
    assert "public.django_q_task" not in {q["table"] for q in found["queues"]}

    def release() -> str:
        with db.connect_monitor(dsn) as mon:
            return config.validate(mon, config.load_preset("django-q2")).library_version.release

    assert release() == "django-q2 1.10 to 1.11"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM django_migrations WHERE app = 'django_q' AND name = %s", (LAST,))
        assert release() == "django-q2 1.7 to 1.9"  # the same tables, the same broker
        conn.execute("DELETE FROM django_migrations WHERE name = '0018_task_success_index'")
    err = one_line_refusal(capsys, "snapshot", *PRESET, "--dsn", dsn)
    assert "found migration 0017_task_cluster_alter" in err and "1.7 to 1.9" in err

    # each task's own lock is its expiry: no time limit to set
    err = one_line_refusal(capsys, "snapshot", *PRESET, "--stale-after", "4s", "--dsn", dsn)
    assert "--stale-after cannot apply" in err


def test_killed_cluster_task_is_found_requeued_and_run_once(q2, dsn, capsys):
    ids = q2.app(
        "enqueue",
        {
            "quick": {"task": "quick", "cluster": "live"},
            "boom": {"task": "boom", "cluster": "live", "ack_failure": True},
            "live_long": {"task": "long", "args": [45], "cluster": "live"},
            "orphan": {"task": "long", "args": [3600], "cluster": "victim"},
            "waiting": {"task": "quick", "cluster": "nobody"},
        },
    )
    ormq = {label: i["ormq"] for label, i in ids.items()}
    q2.cluster("live", "live")
    wait_until(
        lambda: (
            side_effects(dsn, "quick")["done"]
            and side_effects(dsn, "boom")["raised"]
            and side_effects(dsn, "live_long")["started"]
        ),
        timeout=90,
        interval=0.3,
    )
    victim = q2.cluster("victim", "victim")
    wait_until(lambda: side_effects(dsn, "orphan")["started"], timeout=90, interval=0.2)
    kill_group(victim)  # mid-task, the whole cluster: nobody acknowledges it
    wait_until(lambda: q2.app("view", {})["failure"] == 1, timeout=30)  # boom's result saved

    def orphan_stale() -> dict | None:
        snap = snapshot(capsys, dsn)
        return snap if [s["id"] for s in snap["stale_leases"]] == [ormq["orphan"]] else None

    snap = wait_until(orphan_stale, timeout=30, interval=0.3)  # its 5 s lock, then a poll
    [lease] = snap["stale_leases"]
    assert (lease["worker"], lease["worker_alive"], lease["group"]) == (None, None, "victim")
    assert snap["threshold"]["signal"] == "expiry"
    assert not side_effects(dsn, "live_long")["done"]  # the older live task still runs
    stale = len(snap["stale_leases"])
    counts = {r: n for r, n in snap["counts"].items() if n}
    assert counts == {"ready": 1, "running": 2, "done": 1, "failed": 1}
    view = q2.app("view", {"keys": ["live", "victim", "nobody"]})
    assert view["keys"] == {"live": [0, 1], "victim": [1, 0], "nobody": [1, 0]}
    # its queue_size counts a passed lock as pullable: the stale lease and the ready task
    assert counts["ready"] + stale == sum(q for q, _ in view["keys"].values())
    assert counts["running"] - stale == sum(locked for _, locked in view["keys"].values())
    assert (counts["done"], counts["failed"]) == (view["success"], view["failure"])

    code, result = queuetop(
        capsys, "requeue", *PRESET, "--dsn", dsn, "--reason", "victim cluster SIGKILLed",
        str(ormq["orphan"]), str(ormq["live_long"]),
    )  # fmt: skip
    assert code == 1 and result["changed"] == [ormq["orphan"]]
    assert result["skipped"] == [
        {"id": ormq["live_long"], "reason": "lease not expired (use --force)"}
    ]
    snap = snapshot(capsys, dsn)
    assert snap["stale_leases"] == [] and snap["counts"]["ready"] == 2
    assert q2.app("view", {"keys": ["victim"]})["keys"] == {"victim": [1, 0]}

    q2.cluster("victim", "victim-fresh")
    orphan_task = ids["orphan"]["task"]
    wait_until(lambda: q2.app("view", {"tasks": [orphan_task]})["results"][orphan_task], timeout=90)
    assert side_effects(dsn, "orphan") == Counter(started=2, done=1)  # exactly once
    assert rows(dsn, "SELECT count(*) FROM django_q_ormq WHERE id = %s", ormq["orphan"]) == [(0,)]

    # django-q2 keeps no dead state in django_q_ormq: refused, nothing changed
    before = rows(dsn, "SELECT lock FROM django_q_ormq WHERE id = %s", ormq["waiting"])
    err = one_line_refusal(
        capsys, "dead-letter", *PRESET, "--dsn", dsn, "--reason", "poison", str(ormq["waiting"])
    )
    assert "preset django-q2 has no dead role" in err
    assert rows(dsn, "SELECT lock FROM django_q_ormq WHERE id = %s", ormq["waiting"]) == before
