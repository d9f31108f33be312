"""`--preset river` on River's own schema, driven by an emulated River worker (River's SQL).

River holds nothing while a job runs and has no heartbeat: its rescuer calls a running
job stuck once attempted_at is older than RescueStuckJobsAfter (1 hour). So the worker
that dies runs with its clock two hours behind (River's own `now` override, as River's
time stubs do), standing for a worker that died two hours ago; a live worker's long job
started just now. Nothing here waits for wall time.
"""

from __future__ import annotations

import pytest
from psycopg.rows import dict_row

from tests.emulated_workers import River, done_count, hold, named, release
from tests.helpers import wait_until
from tests.library_adapters import (
    assert_harmless,
    library_db,
    queuetop,
    snapshot,
    stale,
    workers,  # noqa: F401 (a fixture)
)
from tests.library_support import kill_group

# every server of the matrix (tests/servers.py)
pytestmark = pytest.mark.matrix

ROLES = {
    "available": "ready",
    "scheduled": "scheduled",
    "pending": "scheduled",
    "running": "running",
    "completed": "done",
    "retryable": "failed",
    "discarded": "dead",
    "cancelled": "dead",
}


def _job(conn, job_id):
    return (
        conn.cursor(row_factory=dict_row)
        .execute(
            "SELECT state::text, attempt, max_attempts, attempted_by, errors, metadata, "
            "finalized_at FROM river_job WHERE id = %s",
            (job_id,),
        )
        .fetchone()
    )


def _states(conn, *ids):
    rows = conn.execute(
        "SELECT id, state::text FROM river_job WHERE id = ANY(%s)", (list(ids),)
    ).fetchall()
    return dict(rows)


def test_river_counts_orphan_requeue_dead_letter(dsn, workers, capsys):  # noqa: F811
    conn = library_db(dsn, "river")
    preset = ("--preset", "river", "--dsn", dsn)
    long_ago = conn.execute("SELECT now() - interval '3 hours'").fetchone()[0]
    hold(conn, "l1")
    hold(conn, "l2")
    l1 = River.insert(conn, {"hold": "l1"}, scheduled_at=long_ago)
    doomed = workers.start("river", "river-a", "--clock-behind", "7200")
    wait_until(lambda: _job(conn, l1)["attempted_by"] == ["river-a"], timeout=30)

    s1 = River.insert(conn, {})
    f = River.insert(conn, {"fail": True, "waits": [3600]})
    d = River.insert(conn, {"fail": True}, max_attempts=1)
    l2 = River.insert(conn, {"hold": "l2"}, priority=2)
    s2, s3 = River.insert(conn, {}, priority=4), River.insert(conn, {}, priority=4)
    later = conn.execute("SELECT now() + interval '1 hour'").fetchone()[0]
    River.insert(conn, {}, scheduled_at=later, state="scheduled")
    workers.start("river", "river-b")
    want = {s1: "completed", f: "retryable", d: "discarded", l2: "running"}
    wait_until(lambda: _states(conn, *want) == want, timeout=30)
    kill_group(doomed)  # SIGKILL mid-job: River's row stays running, nothing tells

    snap = snapshot(capsys, *preset)
    own = dict(conn.execute(named("river")["job_count_by_all_states"]).fetchall())
    assert snap["by_status"] == own  # River's JobCountByAllStates
    mapped = {
        role: sum(n for state, n in own.items() if ROLES[state] == role) for role in snap["counts"]
    }
    assert (
        snap["counts"]
        == mapped
        == {"ready": 2, "scheduled": 1, "running": 2, "done": 1, "failed": 1, "dead": 1}
    )
    # past River's rescue horizon: stale; the live worker's job is not; liveness unknown
    assert stale(snap) == [(str(l1), "river-a", None)]
    assert_harmless(dsn, "river")

    code, result = queuetop(capsys, "requeue", *preset, str(l1))
    assert (code, result["changed"]) == (0, [l1])
    job = _job(conn, l1)
    assert (job["state"], job["attempt"], job["finalized_at"]) == ("available", 1, None)
    assert job["errors"][-1]["error"] == "Stuck job requeued by queuetop"
    assert job["metadata"]["river:rescue_count"] == 1

    # River's JobCancel on the live job: River would cancel it, not retry it
    conn.execute(
        named("river")["job_cancel"],
        {
            "id": l2,
            "now": None,
            "schema": None,
            "control_topic": "river_control",
            "cancel_attempted_at": '"2026-01-01T00:00:00Z"',
        },
    )
    code, result = queuetop(capsys, "requeue", *preset, "--force", str(l2))
    assert code == 1 and "cancel was requested" in result["skipped"][0]["reason"]
    assert _job(conn, l2)["state"] == "running"

    code, result = queuetop(capsys, "dead-letter", *preset, str(s3), "--reason", "bad input")
    assert (code, result["changed"]) == (0, [s3])
    job = _job(conn, s3)
    assert job["state"] == "discarded" and job["finalized_at"] is not None
    assert job["errors"][-1]["error"] == "Discarded by queuetop: bad input"

    release(conn, "l1")
    workers.start("river", "river-c")
    wait_until(lambda: _job(conn, l1)["state"] == "completed", timeout=30)
    assert done_count(conn, l1) == 1 and _job(conn, l1)["attempt"] == 2
    wait_until(lambda: _job(conn, s2)["state"] == "completed", timeout=30)
    assert done_count(conn, s3) == 0
