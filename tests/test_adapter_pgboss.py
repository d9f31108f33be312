"""`--preset pg-boss` against pg-boss itself: its schema from its own migrations, queues and
jobs made with its API (send, flow, cancel), its real workers (boss.work) in Node processes.

A live worker runs queues `live` and `kfifo` (a job that runs for an hour on each); a victim
worker on queues `victim` and `stately` is SIGKILLed mid-job. Every queue has a 10 s
heartbeat (pg-boss's smallest), so the orphans' heartbeats run out 10 s after their last
touch while the live jobs' keep being touched: that is how queuetop tells them apart. No
process supervises (pg-boss's own supervisor would fail the orphans itself once it sees
the same thing). After `queuetop requeue --preset pg-boss`, a fresh worker completes the
orphan exactly once; the stately queue's orphan is refused, as another job of its key
already waits in retry.
"""

from __future__ import annotations

import json

import psycopg
import pytest
from helpers import wait_until
from library_support import kill_group
from node_apps import NodeApp

from dashboard.cli import main

HOUR_MS = 3_600_000
LATER = 3600  # startAfter, seconds
QUEUES = {  # created in this order: a dead-letter queue before the queue naming it
    "dlq": {},
    "live": {"heartbeatSeconds": 10, "retryLimit": 0, "deadLetter": "dlq"},
    "victim": {"heartbeatSeconds": 10, "retryLimit": 0},
    "kfifo": {"heartbeatSeconds": 10, "policy": "key_strict_fifo"},
    # one job per singleton key in each state up to active; a failed run retries in an hour
    "stately": {"heartbeatSeconds": 10, "policy": "stately", "retryLimit": 1, "retryDelay": LATER},
}
JOBS = {
    "quick1": {"queue": "live", "data": {"ms": 10}},
    "quick2": {"queue": "live", "data": {"ms": 10}},
    "live_long": {"queue": "live", "data": {"ms": HOUR_MS}},
    "failed": {"queue": "live", "data": {"fail": "boom"}},  # retryLimit 0: failed at once
    "scheduled": {"queue": "live", "options": {"startAfter": LATER}},
    "cancelled": {"queue": "live", "options": {"startAfter": LATER}},
    "kfifo_head": {"queue": "kfifo", "data": {"ms": HOUR_MS}, "options": {"singletonKey": "k"}},
    "kfifo_next": {"queue": "kfifo", "data": {"ms": 10}, "options": {"singletonKey": "k"}},
    # an hour on its first run, which the kill cuts short; 10 ms when run again
    "orphan": {"queue": "victim", "data": {"first_ms": HOUR_MS, "ms": 10}},
    "stately_retry": {
        "queue": "stately",
        "data": {"fail": "boom"},
        "options": {"singletonKey": "s"},
    },
}
FLOWS = [  # a child waits for its parent, which waits an hour: pg-boss calls the child blocked
    {"ref": "parent", "name": "live", "options": {"startAfter": LATER}},
    {"ref": "child", "name": "live", "dependsOn": ["parent"]},
]
ACTIVE = ("ready", "scheduled", "running")


@pytest.fixture
def boss(dsn, tmp_path):
    app = NodeApp("pg-boss", ["pg-boss@12.38.0"], "pgboss_app.mjs", dsn, tmp_path)
    try:
        yield app
    finally:
        app.stop()


def library_view(boss: NodeApp) -> tuple[dict[str, int], dict[str, dict], dict[str, dict]]:
    """pg-boss's own view: its getQueueStats statement per queue (queued jobs split into
    ready, deferred and blocked; active; failed), and findJobs' jobs for the states it does
    not count (completed, cancelled)."""
    view = boss.run("view", ",".join(QUEUES))
    queues = {
        s["name"]: {
            "ready": s["readyCount"],
            "scheduled": s["deferredCount"] + s["blockedCount"],
            "running": s["activeCount"],
        }
        for s in view["stats"]
    }
    roles = {r: sum(q[r] for q in queues.values()) for r in ACTIVE}
    found = [job["state"] for job in view["jobs"]]
    roles["done"] = found.count("completed")
    roles["dead"] = sum(s["failedCount"] for s in view["stats"]) + found.count("cancelled")
    return roles, queues, {job["id"]: job for job in view["jobs"]}


def runs(conn: psycopg.Connection, job_id: str, event: str) -> list[int]:
    rows = conn.execute(
        "SELECT retry_count FROM job_runs WHERE job_id = %s AND event = %s ORDER BY at",
        (job_id, event),
    ).fetchall()
    return [r for (r,) in rows]


def states(conn: psycopg.Connection, ids: dict[str, str]) -> dict[str, str]:
    rows = dict(
        conn.execute(
            "SELECT id::text, state::text FROM pgboss.job WHERE id = ANY(%s)", (list(ids.values()),)
        ).fetchall()
    )
    return {label: rows.get(i) for label, i in ids.items()}


def queuetop(capsys, *argv: str) -> tuple[int, dict]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


def test_killed_pgboss_worker_requeued_and_completed_once(boss, dsn, connect, capsys):
    ids = boss.run(
        "setup",
        json.dumps({"queues": QUEUES, "jobs": JOBS, "flows": FLOWS, "cancel": ["cancelled"]}),
    )
    assert main(["init-audit", "--dsn", dsn]) == 0
    capsys.readouterr()
    conn = connect(autocommit=True)

    boss.start("worker-live", "work", "live,kfifo", "4")
    settled = {
        "quick1": "completed",
        "quick2": "completed",
        "failed": "failed",
        "live_long": "active",
        "kfifo_head": "active",
    }
    wait_until(
        lambda: states(conn, {k: ids[k] for k in settled}) == settled, timeout=60, interval=0.3
    )
    victim = boss.start("worker-victim", "work", "victim,stately", "2")
    wait_until(
        lambda: states(conn, {"s": ids["stately_retry"]}) == {"s": "retry"},
        timeout=60,
        interval=0.2,
    )  # its retry waits an hour: the key's retry place is taken
    ids.update(
        boss.run(
            "send",
            json.dumps(
                {
                    "stately_orphan": {
                        "queue": "stately",
                        "data": {"ms": HOUR_MS},
                        "options": {"singletonKey": "s"},
                    }
                }
            ),
        )
    )
    wait_until(
        lambda: runs(conn, ids["orphan"], "start") and runs(conn, ids["stately_orphan"], "start"),
        timeout=60,
        interval=0.2,
    )
    kill_group(victim)  # mid-job: its heartbeats stop
    ids.update(
        boss.run("send", json.dumps({"victim_quick": {"queue": "victim", "data": {"ms": 10}}}))
    )
    orphan = ids["orphan"]

    orphans = {orphan, ids["stately_orphan"]}

    def orphans_stale() -> dict | None:
        code, snap = queuetop(capsys, "snapshot", "--preset", "pg-boss", "--json", "--dsn", dsn)
        stale = {lease["id"] for lease in snap["stale_leases"]}
        return snap if code == 0 and stale == orphans else None

    # the live worker's hour-long jobs are not orphans
    snap = wait_until(orphans_stale, timeout=60, interval=0.5)
    assert {
        (s["id"], s["worker_alive"], s["group"], s["lease_token"]) for s in snap["stale_leases"]
    } == {(orphan, False, "victim", 0), (ids["stately_orphan"], False, "stately", 0)}

    # queuetop's counts per role and per queue are pg-boss's own, counted through the
    # indexes of job's partitions (a partitioned table: its partitions are what plans scan)
    roles, queues, jobs = library_view(boss)
    assert snap["count_mode"] == "index"
    assert snap["estimated"] == []
    assert {r: n for r, n in snap["counts"].items() if n} == {r: n for r, n in roles.items() if n}
    # ready: the dead-letter copy of `failed`, kfifo_next (held behind its key's head) and
    # victim_quick (its worker was killed); scheduled: scheduled, parent, child (blocked) and
    # stately_retry; running: live_long, kfifo_head, orphan, stately_orphan; done: quick1,
    # quick2; dead: failed, cancelled
    assert (roles["ready"], roles["scheduled"], roles["running"]) == (3, 4, 4)
    assert (roles["done"], roles["dead"]) == (2, 2)
    assert {g["name"]: {r: g[r] for r in ACTIVE} for g in snap["groups"]} == {
        name: q for name, q in queues.items() if any(q.values())
    }
    assert {g["name"]: g["stale_leases"] for g in snap["groups"] if g["stale_leases"]} == {
        "victim": 1,
        "stately": 1,
    }

    # the stately orphan cannot go back to retry while stately_retry holds its key's place
    code, result = queuetop(
        capsys,
        "requeue",
        "--preset",
        "pg-boss",
        "--dsn",
        dsn,
        "--json",
        "--reason",
        "worker-victim was SIGKILLed",
        orphan,
        ids["stately_orphan"],
    )
    assert code == 1 and result["changed"] == [orphan]
    assert result["skipped"] == [
        {
            "id": ids["stately_orphan"],
            "reason": (
                f"pg-boss stately queue stately: job {ids['stately_retry']} with the same "
                "singleton key already waits in retry"
            ),
        }
    ]
    requeued = library_view(boss)[2][orphan]
    assert (requeued["state"], requeued["retryCount"], requeued["retryLimit"]) == ("retry", 0, 1)
    audited = conn.execute(
        "SELECT target, from_state->>'lease_token', outcome FROM "
        "queuetop.audit_log WHERE action = 'requeue' ORDER BY outcome"
    ).fetchall()
    assert audited == [(orphan, "0", "changed"), (ids["stately_orphan"], "0", "skipped")]

    boss.start("worker-fresh", "work", "victim", "2")
    wait_until(
        lambda: (
            states(conn, {k: ids[k] for k in ("orphan", "victim_quick")})
            == {"orphan": "completed", "victim_quick": "completed"}
        ),
        timeout=60,
        interval=0.3,
    )
    assert runs(conn, orphan, "start") == [0, 1]  # the killed run, then the fresh one
    assert runs(conn, orphan, "done") == [1]  # completed exactly once

    # dead-letter in pg-boss's terms: failed, the reason in output, a copy in the dead-letter
    # queue; a running job on a live claim is skipped, and key_strict_fifo forbids failing a
    # second job of a key whose head is active
    code, result = queuetop(
        capsys,
        "dead-letter",
        "--preset",
        "pg-boss",
        "--dsn",
        dsn,
        "--json",
        "--reason",
        "not wanted any more",
        ids["scheduled"],
        ids["live_long"],
        ids["kfifo_next"],
    )
    assert code == 1 and result["changed"] == [ids["scheduled"]]
    skipped = {s["id"]: s["reason"] for s in result["skipped"]}
    assert skipped[ids["live_long"]] == "lease not expired (use --force)"
    assert skipped[ids["kfifo_next"]].startswith(
        "pg-boss key_strict_fifo queue kfifo: job "
        f"{ids['kfifo_head']} with the same singleton "
        "key is active"
    )
    jobs = library_view(boss)[2]
    dead = jobs[ids["scheduled"]]
    assert (dead["state"], dead["output"]) == (
        "failed",
        {"value": {"message": "not wanted any more"}},
    )
    copies = [j for j in jobs.values() if j["sourceId"] == ids["scheduled"]]
    assert [(c["name"], c["state"], c["sourceName"]) for c in copies] == [
        ("dlq", "created", "live")
    ]
    assert (jobs[ids["live_long"]]["state"], jobs[ids["kfifo_next"]]["state"]) == (
        "active",
        "created",
    )
