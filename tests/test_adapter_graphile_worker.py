"""`--preset graphile-worker` against graphile-worker itself: its schema from its own
migrations, jobs added with its WorkerUtils, its real worker pools (run, runOnce) in Node.

graphile-worker keeps no status column (the preset derives the state) and no liveness: a
lock only runs out after its fixed 4 hours. The opt-in the preset documents names each
pool's sessions 'graphile_worker:' + its pool id (the locked_by value), so that a locked job
whose pool has no session left is dead at once. The first test runs named pools: a live
one with an hour-long job, a victim SIGKILLed mid-job (an orphan in a named queue, on its
only attempt, and a job add_job replaces while it runs); `queuetop requeue` frees the
orphan and refuses the replaced job, and a fresh pool completes the orphan exactly once.
The second test shows what queuetop says where pools do not name their sessions.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import psycopg
import pytest
from helpers import wait_until
from library_support import kill_group
from node_apps import NodeApp
from psycopg import sql

from dashboard import config, db
from dashboard.cli import main
from dashboard.queue_sql.parts import queue_parts

HOUR_MS = 3_600_000
NAMED = {"NAME_SESSIONS": "1"}
JOBS = {
    "quick1": {"task": "live_task", "payload": {"ms": 10}},
    "quick2": {"task": "live_task", "payload": {"ms": 10}},
    "live_long": {"task": "live_task", "payload": {"ms": HOUR_MS}},
    "scheduled": {"task": "live_task", "options": {"runIn": 3600}},
    "flaky": {"task": "flaky_task", "payload": {"fail": "flaky"}, "options": {"maxAttempts": 2}},
    "doomed": {"task": "flaky_task", "payload": {"fail": "doomed"}, "options": {"maxAttempts": 1}},
    # the victim pool's: an hour on the first attempt (cut short by the kill), 10 ms after
    "orphan": {
        "task": "victim_task",
        "payload": {"first_ms": HOUR_MS, "ms": 10},
        "options": {"queueName": "serial", "maxAttempts": 1},
    },
    "serial_next": {
        "task": "victim_task",
        "payload": {"ms": 10},
        "options": {"queueName": "serial"},
    },  # waits for the orphan's named queue
    "replaced": {"task": "victim_task", "payload": {"ms": HOUR_MS}, "options": {"jobKey": "dup"}},
}
ACTIVE = ("ready", "scheduled", "running")


# The newest release of each minor the preset maps (their migrations 19 and 20).
RELEASES = {"0.17.3": "graphile-worker 0.17", "0.18.0": "graphile-worker 0.18"}


@pytest.fixture(params=list(RELEASES))
def graphile(request, dsn, tmp_path):
    release = request.param
    app = NodeApp(
        f"graphile-worker-{release}",
        [f"graphile-worker@{release}"],
        "graphile_app.mjs",
        dsn,
        tmp_path,
    )
    app.release = RELEASES[release]
    try:
        yield app
    finally:
        app.stop()


def library_view(app: NodeApp) -> tuple[dict[str, int], dict[str, dict], dict[str, dict]]:
    """The jobs as graphile-worker's own view (graphile_worker.jobs, and _private_jobs'
    is_available) shows them, placed in roles by its own rules: locked, claimable (due now
    or later), waiting out a retry backoff, out of attempts. It counts nothing itself."""
    rows = app.run("view")
    now = datetime.now(timezone.utc)
    roles = dict.fromkeys(("ready", "scheduled", "running", "failed", "dead"), 0)
    tasks: dict[str, dict[str, int]] = {}
    for job in rows:
        later = datetime.fromisoformat(job["run_at"].replace("Z", "+00:00")) > now
        if job["locked_at"]:
            role = "running"
        elif not job["is_available"]:
            role = "dead"
        elif later:
            role = "failed" if job["attempts"] > 0 else "scheduled"
        else:
            role = "ready"
        roles[role] += 1
        if role in ACTIVE:
            task = tasks.setdefault(job["task_identifier"], dict.fromkeys(ACTIVE, 0))
            task[role] += 1
    return roles, tasks, {int(job["id"]): job for job in rows}


def as_ids(added: dict[str, str]) -> dict[str, int]:
    """Job ids as numbers, as queuetop's JSON gives a bigint id (node-postgres gives text)."""
    return {label: int(i) for label, i in added.items()}


def runs(conn: psycopg.Connection, job_id: int, event: str) -> list[int]:
    rows = conn.execute(
        "SELECT attempts FROM job_runs WHERE job_id = %s AND event = %s ORDER BY at",
        (job_id, event),
    ).fetchall()
    return [r for (r,) in rows]


def queuetop(capsys, *argv: str) -> tuple[int, dict]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


def snapshot(capsys, dsn: str) -> dict:
    code, snap = queuetop(capsys, "snapshot", "--preset", "graphile-worker", "--json", "--dsn", dsn)
    assert code == 0
    return snap


def test_killed_graphile_pool_requeued_and_completed_once(graphile, dsn, connect, capsys):
    ids = as_ids(graphile.run("setup", json.dumps(JOBS)))
    graphile.run("once", "flaky_task")  # fails both: doomed for good, flaky for a retry
    assert graphile.run("reschedule", json.dumps({"id": ids["flaky"], "runIn": 3600})) == [
        str(ids["flaky"])
    ]  # its retry an hour away: it stays retrying
    assert main(["init-audit", "--dsn", dsn]) == 0
    capsys.readouterr()
    conn = connect(autocommit=True)
    # the preset maps the release its migrations table says (0.17: 19, 0.18: 20)
    with db.connect_monitor(dsn) as mon:
        mapped = config.validate(mon, config.load_preset("graphile-worker")).library_version
    assert mapped.release == graphile.release

    graphile.start("pool-live", "work", "live_task", "4", env=NAMED)
    wait_until(
        lambda: (
            runs(conn, ids["quick2"], "done")
            and runs(conn, ids["quick1"], "done")
            and runs(conn, ids["live_long"], "start")
        ),
        timeout=60,
        interval=0.2,
    )
    victim = graphile.start("pool-victim", "work", "victim_task", "2", env=NAMED)
    wait_until(
        lambda: runs(conn, ids["orphan"], "start") and runs(conn, ids["replaced"], "start"),
        timeout=60,
        interval=0.2,
    )
    kill_group(victim)  # mid-job: its sessions go, its locks stay
    # add_job with the running job's key: graphile-worker adds a new job and spends the old
    # one's attempts, so that the old one never runs again
    ids.update(
        as_ids(
            graphile.run(
                "add",
                json.dumps(
                    {
                        "replacement": {
                            "task": "victim_task",
                            "payload": {"ms": 10},
                            "options": {"jobKey": "dup"},
                        }
                    }
                ),
            )
        )
    )
    orphans = {ids["orphan"], ids["replaced"]}

    def orphans_stale() -> dict | None:
        snap = snapshot(capsys, dsn)
        return snap if {lease["id"] for lease in snap["stale_leases"]} == orphans else None

    snap = wait_until(orphans_stale, timeout=30, interval=0.3)  # the live pool's job is not
    assert {(s["worker_alive"], s["group"]) for s in snap["stale_leases"]} == {
        (False, "victim_task")
    }

    roles, tasks, jobs = library_view(graphile)
    assert snap["estimated"] == []
    assert snap["counts"] == roles  # no done role: graphile-worker deletes completed jobs
    # ready: serial_next, replacement; scheduled: scheduled; running: live_long, orphan,
    # replaced; failed: flaky (retry due in an hour); dead: doomed
    assert roles == {"ready": 2, "scheduled": 1, "running": 3, "failed": 1, "dead": 1}
    assert {g["name"]: {r: g[r] for r in ACTIVE} for g in snap["groups"]} == tasks
    lease = next(s for s in snap["stale_leases"] if s["id"] == ids["orphan"])
    locked_at = datetime.fromisoformat(jobs[ids["orphan"]]["locked_at"].replace("Z", "+00:00"))
    # the claim's locked_at in microseconds (node-postgres reads it to the millisecond)
    assert lease["lease_token"] // 1000 == round(locked_at.timestamp() * 1000)
    assert lease["worker"] == jobs[ids["orphan"]]["locked_by"]

    code, result = queuetop(
        capsys,
        "requeue",
        "--preset",
        "graphile-worker",
        "--dsn",
        dsn,
        "--json",
        "--reason",
        "pool-victim was SIGKILLed",
        str(ids["orphan"]),
        str(ids["replaced"]),
    )
    assert code == 1 and result["changed"] == [ids["orphan"]]
    assert result["skipped"] == [
        {
            "id": ids["replaced"],
            "reason": (
                "graphile-worker: the job was replaced (add_job with its job_key) or removed "
                "(remove_job) while it ran, so it must not run again"
            ),
        }
    ]
    requeued = library_view(graphile)[2][ids["orphan"]]
    assert (
        requeued["locked_at"],
        requeued["attempts"],
        requeued["max_attempts"],
        requeued["is_available"],
    ) == (None, 1, 2, True)
    audited = conn.execute(
        "SELECT target, from_state->>'worker', outcome FROM "
        "queuetop.audit_log WHERE action = 'requeue' AND outcome = 'changed'"
    ).fetchall()
    assert audited == [(str(ids["orphan"]), jobs[ids["orphan"]]["locked_by"], "changed")]

    graphile.start("pool-fresh", "work", "victim_task", "2", env=NAMED)
    wait_until(
        lambda: all(runs(conn, ids[k], "done") for k in ("orphan", "serial_next", "replacement")),
        timeout=60,
        interval=0.2,
    )  # the serial queue was unlocked with the orphan
    assert runs(conn, ids["orphan"], "start") == [1, 2]  # the killed run, then the fresh one
    assert runs(conn, ids["orphan"], "done") == [2]  # completed exactly once
    jobs = library_view(graphile)[2]
    assert ids["orphan"] not in jobs  # graphile-worker deleted it on completion
    assert runs(conn, ids["replaced"], "start") == [1] and jobs[ids["replaced"]]["locked_at"]

    # retry now a job waiting out its backoff (reschedule_jobs' way); dead-letter as
    # permanently_fail_jobs: a scheduled job and the replaced orphan (unlocked too); the
    # live pool's job is skipped
    code, result = queuetop(
        capsys,
        "requeue",
        "--preset",
        "graphile-worker",
        "--dsn",
        dsn,
        "--json",
        "--reason",
        "retry now",
        str(ids["flaky"]),
    )
    assert (code, result["changed"]) == (0, [ids["flaky"]])
    code, result = queuetop(
        capsys,
        "dead-letter",
        "--preset",
        "graphile-worker",
        "--dsn",
        dsn,
        "--json",
        "--reason",
        "not wanted any more",
        str(ids["scheduled"]),
        str(ids["replaced"]),
        str(ids["live_long"]),
    )
    assert code == 1 and result["changed"] == [ids["scheduled"], ids["replaced"]]
    assert result["skipped"] == [
        {"id": ids["live_long"], "reason": "lease not expired (use --force)"}
    ]
    roles, _, jobs = library_view(graphile)
    assert [
        (
            jobs[ids[k]]["attempts"],
            jobs[ids[k]]["max_attempts"],
            jobs[ids[k]]["last_error"],
            jobs[ids[k]]["locked_at"],
        )
        for k in ("scheduled", "replaced")
    ] == [(25, 25, "not wanted any more", None)] * 2
    assert jobs[ids["flaky"]]["attempts"] == 1 and jobs[ids["flaky"]]["last_error"]
    assert roles == {"ready": 1, "scheduled": 0, "running": 1, "failed": 0, "dead": 3}
    assert snapshot(capsys, dsn)["counts"] == roles


def worker_alive(conn: psycopg.Connection, ids: list[int]) -> list[bool | None]:
    """The preset's worker_alive expression for the given jobs, as the monitor reads it."""
    spec = config.validate(conn, config.load_preset("graphile-worker"))
    parts = queue_parts(spec)
    stmt = sql.SQL(
        "SELECT {alive} FROM {table} AS t WHERE t.id = ANY(%s) ORDER BY array_position(%s, t.id)"
    ).format(alive=parts["worker_alive"], table=parts["table"])
    return [alive for (alive,) in conn.execute(stmt, (ids, ids)).fetchall()]


def test_unnamed_pools_leave_liveness_unknown(graphile, dsn, connect, capsys):
    """Out of the box (no pool names its sessions) a locked job's pool is neither alive nor
    dead to queuetop: only graphile-worker's 4 hours make it stale, and a requeue needs
    --force. A pool that does not name its sessions keeps named pools' verdicts off its
    jobs while it runs (its LISTEN session is seen)."""
    ids = as_ids(
        graphile.run(
            "setup",
            json.dumps(
                {
                    "plain": {"task": "plain_task", "payload": {"ms": HOUR_MS}},
                    "named": {"task": "named_task", "payload": {"ms": HOUR_MS}},
                }
            ),
        )
    )
    assert main(["init-audit", "--dsn", dsn]) == 0
    capsys.readouterr()
    conn = connect(autocommit=True)
    plain = graphile.start("pool-plain", "work", "plain_task", "1")
    named = graphile.start("pool-named", "work", "named_task", "1", env=NAMED)
    wait_until(
        lambda: runs(conn, ids["plain"], "start") and runs(conn, ids["named"], "start"),
        timeout=60,
        interval=0.2,
    )
    both = [ids["plain"], ids["named"]]
    assert worker_alive(conn, both) == [None, True]
    assert snapshot(capsys, dsn)["stale_leases"] == []

    kill_group(plain)  # no unnamed pool is left: the named pools' convention now judges
    wait_until(lambda: worker_alive(conn, both) == [False, True], timeout=30, interval=0.2)
    [lease] = snapshot(capsys, dsn)["stale_leases"]
    assert (lease["id"], lease["worker_alive"]) == (ids["plain"], False)

    kill_group(named)  # no pool names its sessions any more: nothing is known
    wait_until(lambda: worker_alive(conn, both) == [None, None], timeout=30, interval=0.2)
    assert snapshot(capsys, dsn)["stale_leases"] == []
    code, result = queuetop(
        capsys,
        "requeue",
        "--preset",
        "graphile-worker",
        "--dsn",
        dsn,
        "--json",
        "--reason",
        "its pool is gone",
        str(ids["plain"]),
    )
    assert code == 1 and result["skipped"] == [
        {"id": ids["plain"], "reason": "lease not expired (use --force)"}
    ]
    # the operator knows the pool is gone (graphile-worker cannot tell): --force
    code, result = queuetop(
        capsys,
        "requeue",
        "--preset",
        "graphile-worker",
        "--dsn",
        dsn,
        "--json",
        "--force",
        "--reason",
        "its pool is gone",
        str(ids["plain"]),
    )
    assert (code, result["changed"]) == (0, [ids["plain"]])
    job = library_view(graphile)[2][ids["plain"]]
    assert (job["locked_at"], job["locked_by"], job["attempts"], job["is_available"]) == (
        None,
        None,
        1,
        True,
    )
