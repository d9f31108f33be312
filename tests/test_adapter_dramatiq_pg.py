"""`--preset dramatiq-pg` against dramatiq-pg 0.12.0 (dalibo's PostgresBroker for dramatiq
1.17.1, Python 3.11): its schema from its own generate_init_sql, messages sent with
dramatiq's API, its real workers (the `dramatiq` command), one SIGKILLed mid-message.

dramatiq-pg's consumer takes a session advisory lock on a message as it consumes it and keeps
it while the message is worked: a killed worker's session ends, its lock with it, so its
consumed message is orphaned at once (no time limit: --stale-after is refused), while a live
worker's long message keeps its lock. The truth the test holds queuetop to: the library's own
STATS statement, its own message_lock key read in pg_locks, its state column.
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
APP = APPS / "dramatiq_pg_app.py"
PACKAGES = ["dramatiq-pg==0.12.0", "dramatiq==1.17.1", "psycopg2-binary==2.9.10"]
HOUR = 3600
PRESET = ["--preset", "dramatiq-pg"]


@pytest.fixture(scope="module")
def dramatiq_python() -> Path:
    python = find_python("3.11")
    if python is None:
        pytest.skip("no Python 3.11 found: dramatiq-pg 0.12 declares Python up to 3.11")
    return python_venv("dramatiq-pg", python, PACKAGES)


class Dramatiq:
    def __init__(self, python: Path, dsn: str, logs: Path):
        self.python, self.logs = python, logs
        self.env = {"DRAMATIQ_DSN": dsn, "PYTHONPATH": str(APPS)}
        self.workers: list[subprocess.Popen] = []

    def app(self, command: str, arg: object = None) -> dict:
        argv = [str(self.python), str(APP), command]
        argv += [] if arg is None else [json.dumps(arg)]
        done = subprocess.run(
            argv, env={**os.environ, **self.env}, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def worker(self, queue: str, name: str) -> subprocess.Popen:
        exe = Path(self.python).parent / "dramatiq"
        proc = spawn(
            [str(exe), "dramatiq_pg_app", "--processes", "1", "--threads", "1", "--queues", queue],
            env=self.env,
            cwd=APPS,
            log=self.logs / f"{name}.log",
        )
        self.workers.append(proc)
        return proc


@pytest.fixture
def dramatiq(dramatiq_python, dsn, tmp_path):
    app = Dramatiq(dramatiq_python, dsn, tmp_path)
    app.app("init")
    assert main(["init-audit", "--dsn", dsn]) == 0
    try:
        yield app
    finally:
        for proc in app.workers:
            kill_group(proc)


def queuetop(capsys, *argv: str) -> tuple[int, dict]:
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def snapshot(capsys, dsn: str) -> dict:
    code, snap = queuetop(capsys, "snapshot", *PRESET, "--dsn", dsn)
    assert code == 0
    return snap


def test_discovered_with_its_version_and_an_unknown_schema_refused(dramatiq, dsn, capsys):
    code, found = queuetop(capsys, "discover", "--dsn", dsn)
    assert code == 0
    ours = [q for q in found["queues"] if q["table"] == "dramatiq.queue"]
    assert [(q["adapter"], q["version"], q["confidence"]) for q in ours] == [
        ("dramatiq-pg", "0.10 to 0.12", "high")
    ]
    with db.connect_monitor(dsn) as mon:
        mapped = config.validate(mon, config.load_preset("dramatiq-pg")).library_version
    assert mapped.release == "dramatiq-pg 0.10 to 0.12"

    # its lock is its liveness: no time limit to set
    assert main(["snapshot", *PRESET, "--stale-after", "4s", "--dsn", dsn]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--stale-after has nothing to set" in err

    # a schema that is not dramatiq-pg's (a state it never had) is refused in one line
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ALTER TYPE dramatiq.state ADD VALUE 'archived'")
    assert main(["snapshot", *PRESET, "--dsn", dsn]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "dramatiq-pg at dramatiq.queue: found no schema" in err and "0.10 to 0.12" in err


def library_view(dramatiq: Dramatiq, dsn: str) -> dict[str, int]:
    """dramatiq-pg's own STATS (per state), and how many messages wait in a delay queue."""
    stats = dramatiq.app("stats")
    [(delayed,)] = rows(
        dsn, "SELECT count(*) FROM dramatiq.queue WHERE right(queue_name, 3) = '.DQ'"
    )
    return {**stats, "in delay queues": delayed}


def test_killed_worker_message_is_orphaned_requeued_and_run_once(dramatiq, dsn, capsys):
    ids = dramatiq.app(
        "send",
        {
            "quick": {"actor": "quick"},
            "boom": {"actor": "boom"},
            "flaky": {"actor": "flaky"},
            "delayed": {"actor": "quick", "delay_ms": HOUR * 1000},
            "orphan": {"actor": "long_victim", "args": [HOUR]},
            "live_long": {"actor": "long_live", "args": [HOUR]},
        },
    )
    dramatiq.worker("default", "default-w")
    dramatiq.worker("live", "live-w")
    victim = dramatiq.worker("victim", "victim-w")
    wait_until(
        lambda: (
            side_effects(dsn, ids["orphan"])["started"]
            and side_effects(dsn, ids["live_long"])["started"]
            and side_effects(dsn, ids["quick"])["done"]
            and side_effects(dsn, ids["boom"])["raised"]
            and side_effects(dsn, ids["flaky"])["raised"]
        ),
        timeout=90,
        interval=0.3,
    )

    def settled() -> dict | None:
        found = dramatiq.app("rows", list(ids.values()))
        want = {
            "boom": ("rejected", "default"),
            "flaky": ("consumed", "default.DQ"),  # a live delay consumer holds it until its eta
            "delayed": ("consumed", "default.DQ"),
        }
        ok = all(tuple(found[ids[k]][:2]) == v for k, v in want.items())
        return found if ok else None

    wait_until(settled, timeout=60, interval=0.3)
    kill_group(victim)  # mid-message: its session, and the advisory lock with it, goes

    # the server ends the killed worker's backend as it notices the closed socket
    def orphan_unlocked() -> dict | None:
        found = dramatiq.app("rows", [ids["orphan"], ids["live_long"], ids["delayed"]])
        return None if found[ids["orphan"]][3] else found

    truth = wait_until(orphan_unlocked, timeout=30, interval=0.2)
    # the library's own lock key (message_lock) as pg_locks holds it: the killed worker's
    # is free, the live workers' are held
    assert [truth[ids[k]][0::3] for k in ("orphan", "live_long", "delayed")] == [
        ["consumed", False],
        ["consumed", True],
        ["consumed", True],
    ]
    snap = snapshot(capsys, dsn)
    [lease] = snap["stale_leases"]  # at once: the lock is the library's rule, no time limit
    assert (lease["id"], lease["worker"], lease["worker_alive"], lease["group"]) == (
        ids["orphan"],
        None,
        False,
        "victim",
    )
    assert snap["threshold"]["signal"] == "lock"
    counts = {r: n for r, n in snap["counts"].items() if n}
    assert counts == {"scheduled": 1, "failed": 1, "running": 2, "done": 1, "dead": 1}
    view = library_view(dramatiq, dsn)
    assert view == {"done": 1, "rejected": 1, "consumed": 4, "in delay queues": 2}
    assert counts["done"] == view["done"] and counts["dead"] == view["rejected"]
    assert counts["running"] + counts["scheduled"] + counts["failed"] == view["consumed"]
    assert counts["scheduled"] + counts["failed"] == view["in delay queues"]

    # requeue: the orphan is queued again; the live worker's message is refused, forced or not
    for force in ([], ["--force"]):
        code, result = queuetop(
            capsys, "requeue", *PRESET, "--dsn", dsn, *force, "--reason", "SIGKILLed",
            ids["live_long"],
        )  # fmt: skip
        assert code == 1 and result["changed"] == []
        [skipped] = result["skipped"]
        assert "holds its advisory lock" in skipped["reason"]
    code, result = queuetop(
        capsys, "requeue", *PRESET, "--dsn", dsn, "--reason", "victim-w was SIGKILLed",
        ids["orphan"],
    )  # fmt: skip
    assert (code, result["changed"]) == (0, [ids["orphan"]])
    assert dramatiq.app("rows", [ids["orphan"]])[ids["orphan"]][:2] == ["queued", "victim"]
    assert snapshot(capsys, dsn)["stale_leases"] == []

    dramatiq.worker("victim", "victim-fresh")
    wait_until(lambda: side_effects(dsn, ids["orphan"])["done"] == 1, timeout=90, interval=0.3)
    wait_until(
        lambda: dramatiq.app("rows", [ids["orphan"]])[ids["orphan"]][0] == "done", timeout=30
    )
    assert side_effects(dsn, ids["orphan"]) == Counter(started=2, done=1)  # exactly once


def test_dead_letter_ends_where_dramatiq_fails_a_message(dramatiq, dsn, capsys):
    ids = dramatiq.app(
        "send",
        {
            "boom": {"actor": "boom"},
            "parked": {"actor": "quick", "delay_ms": HOUR * 1000},
            "held": {"actor": "flaky", "delay_ms": HOUR * 1000},
        },
    )
    worker = dramatiq.worker("default", "default-w")
    wait_until(
        lambda: dramatiq.app("rows", [ids["boom"]])[ids["boom"]][0] == "rejected", timeout=90
    )
    wait_until(lambda: dramatiq.app("rows", [ids["held"]])[ids["held"]][3], timeout=30)
    # the live delay consumer holds both delayed messages: refused while it does
    code, result = queuetop(
        capsys, "dead-letter", *PRESET, "--dsn", dsn, "--reason", "poison", ids["held"]
    )
    assert code == 1 and "holds its advisory lock" in result["skipped"][0]["reason"]
    kill_group(worker)  # now nobody holds them
    code, result = queuetop(
        capsys, "dead-letter", *PRESET, "--dsn", dsn, "--reason", "poison", ids["parked"]
    )
    assert (code, result["changed"]) == (0, [ids["parked"]])
    # where dramatiq's own failure ends: rejected, the reason where its Retries puts one
    found = rows(
        dsn,
        "SELECT message_id::text, state::text, message -> 'options' ->> 'traceback' IS NOT NULL "
        "FROM dramatiq.queue WHERE message_id = ANY(%s::uuid[]) ORDER BY 1",
        [ids["boom"], ids["parked"]],
    )
    assert sorted((i, s, t) for i, s, t in found) == sorted(
        [(ids["boom"], "rejected", True), (ids["parked"], "rejected", True)]
    )
    assert rows(
        dsn,
        "SELECT message -> 'options' ->> 'traceback' FROM dramatiq.queue WHERE message_id = %s",
        ids["parked"],
    ) == [("poison",)]
    counts = snapshot(capsys, dsn)["counts"]
    assert counts["dead"] == dramatiq.app("stats")["rejected"] == 2
