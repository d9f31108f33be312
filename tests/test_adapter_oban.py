"""`--preset oban` against Oban itself (the Python port, on Python 3.12): its schema from
`oban install`, jobs enqueued with its API, its real `oban start` workers.

Two workers run at once: a live one on queue `default` (Oban's leader, with a job that
runs for an hour) and a victim on queue `victim`, SIGKILLed while it runs two long jobs,
one of them with max_attempts = 1. Oban's leader deletes the victim's producer once it
has not heartbeated for max_age (5 s here instead of 60 s), which is how queuetop tells
the orphans from the live job. After `queuetop requeue --preset oban`, a fresh worker
completes each orphan exactly once.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import psycopg
import pytest
from helpers import wait_until
from library_support import find_python, kill_group, python_venv, spawn, stop_group

from dashboard import actions, config, db, monitor
from dashboard.actions import ObservedJob
from dashboard.cli import main

TESTS = Path(__file__).resolve().parent
OBAN = "oban==0.7.0"
# Where queuetop must place each of Oban's states (the preset says the same; this is the
# test's own statement of it).
ROLE_OF = {
    "available": "ready",
    "scheduled": "scheduled",
    "retryable": "failed",  # it failed, and Oban runs it again when it is due
    "suspended": "scheduled",
    "executing": "running",
    "completed": "done",
    "discarded": "dead",
    "cancelled": "dead",
}
ACTIVE = ("ready", "scheduled", "running")


@pytest.fixture(scope="module")
def oban_python() -> Path:
    python = find_python("3.12")
    if python is None:
        pytest.skip("no Python 3.12 found: Oban needs Python >= 3.12")
    return python_venv("oban", python, [OBAN])


class Oban:
    """Oban's CLI, its workers and its API (tests/oban_app.py), on one database."""

    def __init__(self, python: Path, dsn: str, folder: Path):
        self.python, self.dsn, self.folder = python, dsn, folder
        self.env = {"OBAN_DSN": dsn, "PYTHONPATH": str(TESTS)}
        self.workers: list[subprocess.Popen] = []

    def run(self, *argv: str) -> str:
        # cwd: a folder of our own, as `oban` also reads ./oban.toml where it runs
        done = subprocess.run(
            [str(self.python), *argv],
            env={**os.environ, **self.env},
            cwd=self.folder,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def app(self, *argv: str):
        return json.loads(self.run(str(TESTS / "oban_app.py"), *argv))

    def install(self) -> None:
        self.run(str(self.python.parent / "oban"), "install", "--dsn", self.dsn)

    def worker(self, node: str, queues: str, *, leader: bool = False) -> subprocess.Popen:
        # Named otherwise than oban.toml: `oban start` would read that one by itself too.
        config = self.folder / f"{node}.toml"
        config.write_text(
            f"leadership = {str(leader).lower()}\n"
            "shutdown_grace_period = 1.0\n"
            "[refresher]\ninterval = 1.0\nmax_age = 5.0\n"
        )
        proc = spawn(
            [
                str(self.python.parent / "oban"),
                "start",
                "--config",
                str(config),
                "--dsn",
                self.dsn,
                "--queues",
                queues,
                "--node",
                node,
                "--log-level",
                "WARNING",
            ],
            env=self.env,
            cwd=self.folder,
            log=self.folder / f"{node}.log",
        )
        self.workers.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.workers:
            stop_group(proc)


@pytest.fixture
def oban(oban_python, dsn, tmp_path):
    lib = Oban(oban_python, dsn, tmp_path)
    try:
        yield lib
    finally:
        lib.stop()


def queuetop(capsys, *argv: str) -> tuple[int, dict]:
    code = main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out)


def oban_view(oban: Oban) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """Oban's own counts (count_jobs, what its metrics report) per role and per queue."""
    roles: dict[str, int] = {}
    queues: dict[str, dict[str, int]] = {}
    for state, queue, n in oban.app("counts"):
        role = ROLE_OF[state]
        roles[role] = roles.get(role, 0) + n
        per_queue = queues.setdefault(queue, dict.fromkeys(ACTIVE, 0))
        if role in ACTIVE:
            per_queue[role] += n
    return roles, queues


def states(conn: psycopg.Connection, ids: dict[str, int]) -> dict[str, str]:
    rows = conn.execute(
        "SELECT id, state::text FROM oban_jobs WHERE id = ANY(%s)", (list(ids.values()),)
    ).fetchall()
    by_id = dict(rows)
    return {name: by_id.get(job_id) for name, job_id in ids.items()}


def runs(conn: psycopg.Connection, job_id: int, event: str) -> list[tuple]:
    return conn.execute(
        "SELECT attempt, node FROM job_runs WHERE job_id = %s AND event = %s ORDER BY at",
        (job_id, event),
    ).fetchall()


def test_killed_oban_worker_requeued_and_completed_once(oban, dsn, connect, capsys):
    oban.install()
    assert main(["init-audit", "--dsn", dsn]) == 0
    ids = oban.app("setup")
    capsys.readouterr()
    conn = connect(autocommit=True)

    oban.worker("worker-live", "default:5", leader=True)
    settled = {
        "quick1": "completed",
        "quick2": "completed",
        "live_long": "executing",
        "retryable": "retryable",
        "discarded": "discarded",
    }
    wait_until(
        lambda: states(conn, {k: ids[k] for k in settled}) == settled, timeout=60, interval=0.2
    )
    victim = oban.worker("worker-victim", "victim:2")
    orphans = {k: ids[k] for k in ("orphan", "orphan_max1")}
    wait_until(
        lambda: all(runs(conn, i, "start") for i in orphans.values()), timeout=60, interval=0.2
    )
    # one heartbeat of the victim's producer after the claim, then the crash
    wait_until(
        lambda: conn.execute(
            "SELECT bool_and(updated_at > started_at) FROM "
            "oban_producers WHERE node = 'worker-victim'"
        ).fetchone()[0],
        timeout=30,
        interval=0.2,
    )
    kill_group(victim)
    ids["victim_quick"] = oban.app("quick", "victim")  # ready, with no worker for its queue

    def orphans_stale() -> dict | None:
        # the producers' own 5 s max_age, given as the user would ([refresher] above)
        code, snap = queuetop(
            capsys, "snapshot", "--preset", "oban", "--stale-after", "5s", "--json", "--dsn", dsn
        )
        stale = {lease["id"] for lease in snap["stale_leases"]}
        return snap if code == 0 and set(orphans.values()) <= stale else None

    snap = wait_until(orphans_stale, timeout=60, interval=0.5)
    assert (snap["threshold"]["seconds"], snap["threshold"]["source"]) == (5.0, "--stale-after")
    leases = {lease["id"]: lease for lease in snap["stale_leases"]}
    assert ids["live_long"] not in leases  # its producer heartbeats: not an orphan
    assert set(leases) == set(orphans.values())
    assert all(
        lease["worker_alive"] is False and lease["group"] == "victim" for lease in leases.values()
    )

    # queuetop's counts per role and per queue are Oban's own
    roles, queues = oban_view(oban)
    assert snap["estimated"] == []
    assert {r: n for r, n in snap["counts"].items() if n} == roles
    assert (roles["ready"], roles["scheduled"], roles["running"]) == (1, 1, 3)
    assert (roles["failed"], roles["dead"]) == (1, 2)
    assert {g["name"]: {r: g[r] for r in ACTIVE} for g in snap["groups"]} == queues
    assert {g["name"]: g["stale_leases"] for g in snap["groups"]} == {"default": 0, "victim": 2}

    # the dashboard's way (the leases as the snapshot shows them) passes the guard too
    spec = config.validate(conn, config.build_spec(preset="oban", stale_after="5s"))
    with db.connect_monitor(dsn) as mon, db.connect_action(dsn) as act:
        seen = monitor.collect(mon, spec).stale_leases
        dry = actions.requeue(
            act,
            spec,
            [ObservedJob.from_stale(x) for x in seen],
            audit=actions.choose_sink(act, None),
            dry_run=True,
        )
    assert sorted(dry.changed) == sorted(str(i) for i in orphans.values())

    code, result = queuetop(
        capsys,
        "requeue",
        "--preset",
        "oban",
        "--stale-after",
        "5s",
        "--dsn",
        dsn,
        "--json",
        "--reason",
        "worker-victim was SIGKILLed",
        *(str(i) for i in orphans.values()),
    )
    assert (code, sorted(result["changed"])) == (0, sorted(orphans.values()))
    requeued = oban.app("jobs", *(str(i) for i in orphans.values()))
    orphan, maxed = requeued[str(orphans["orphan"])], requeued[str(orphans["orphan_max1"])]
    assert (orphan["state"], orphan["attempt"], orphan["max_attempts"]) == ("available", 1, 3)
    # attempt 1 of max_attempts 1: Oban claims it again only because max_attempts was raised
    assert (maxed["state"], maxed["attempt"], maxed["max_attempts"]) == ("available", 1, 2)
    assert orphan["meta"]["rescued"] == maxed["meta"]["rescued"] == 1
    audited = conn.execute(
        "SELECT target, from_state->>'status', outcome FROM "
        "queuetop.audit_log WHERE action = 'requeue' ORDER BY target"
    ).fetchall()
    assert audited == sorted((str(i), "executing", "changed") for i in orphans.values())

    oban.worker("worker-fresh", "victim:2")
    fresh_jobs = {**orphans, "victim_quick": ids["victim_quick"]}
    wait_until(
        lambda: set(states(conn, fresh_jobs).values()) == {"completed"}, timeout=60, interval=0.2
    )
    for job_id in orphans.values():
        assert runs(conn, job_id, "start") == [(1, "worker-victim"), (2, "worker-fresh")]
        assert runs(conn, job_id, "done") == [(2, "worker-fresh")]  # exactly once

    # dead-letter in Oban's terms: discarded, the reason in its errors
    code, result = queuetop(
        capsys,
        "dead-letter",
        "--preset",
        "oban",
        "--stale-after",
        "5s",
        "--dsn",
        dsn,
        "--json",
        "--reason",
        "not wanted any more",
        str(ids["scheduled"]),
        str(ids["live_long"]),
    )
    assert code == 1 and result["changed"] == [ids["scheduled"]]
    assert result["skipped"] == [
        {"id": ids["live_long"], "reason": "lease not expired (use --force)"}
    ]
    dead = oban.app("jobs", str(ids["scheduled"]), str(ids["live_long"]))
    assert dead[str(ids["scheduled"])]["state"] == "discarded"
    assert dead[str(ids["scheduled"])]["errors"][-1]["error"] == "not wanted any more"
    assert dead[str(ids["live_long"])]["state"] == "executing"
