"""`--preset solid-queue` on Solid Queue's own schema, driven by emulated Solid Queue workers.

A job's state is the execution table holding it. A worker claims with FOR UPDATE SKIP
LOCKED and holds nothing while the job runs; its process heartbeats in
solid_queue_processes. Killing the whole `bin/jobs` (supervisor and worker) leaves the
claim behind: stale once the process's heartbeat is older than process_alive_threshold.
"""

from __future__ import annotations

import json

from psycopg.rows import dict_row

from tests.emulated_workers import SolidQueue, done_count, hold, named, release
from tests.helpers import wait_until
from tests.library_adapters import (
    assert_harmless,
    library_db,
    preset_copy,
    queuetop,
    snapshot,
    stale,
    workers,  # noqa: F401 (a fixture)
)
from tests.library_support import kill_group

ROLES = {
    "ready": "ready",
    "scheduled": "scheduled",
    "blocked": "scheduled",
    "claimed": "running",
    "finished": "done",
    "failed": "dead",  # a failed execution waits for a person: never runs again on its own
}
SQL = named("solid_queue")


def process_of(conn, job_id):
    """The worker process (its OS pid) whose claimed execution holds the job."""
    row = conn.execute(
        "SELECT p.pid FROM solid_queue_claimed_executions c "
        "JOIN solid_queue_processes p ON p.id = c.process_id "
        "WHERE c.job_id = %s",
        (job_id,),
    ).fetchone()
    return row[0] if row else None


def status(conn, job_id) -> str:
    """Job#status: finished, else the execution table that holds the job."""
    if conn.execute(
        "SELECT finished_at IS NOT NULL FROM solid_queue_jobs WHERE id = %s", (job_id,)
    ).fetchone()[0]:
        return "finished"
    for kind in ("claimed", "failed", "ready", "scheduled", "blocked"):
        if conn.execute(
            f"SELECT 1 FROM solid_queue_{kind}_executions WHERE job_id = %s", (job_id,)
        ).fetchone():
            return kind
    return "none"


def error_of(conn, job_id) -> dict:
    return json.loads(
        conn.execute(
            "SELECT error FROM solid_queue_failed_executions WHERE job_id = %s", (job_id,)
        ).fetchone()[0]
    )


def test_solid_queue_counts_stale_claim_retry(dsn, workers, capsys, tmp_path):  # noqa: F811
    conn = library_db(dsn, "solid_queue")
    preset = ("--preset", "solid-queue", "--dsn", dsn)
    hold(conn, "l1")
    hold(conn, "l2")
    l1 = SolidQueue.enqueue(conn, {"hold": "l1"}, priority=0)
    doomed = workers.start("solid_queue", "sq-a")
    wait_until(lambda: process_of(conn, l1) == doomed.pid, timeout=30)

    s1 = SolidQueue.enqueue(conn, {}, priority=1)
    f = SolidQueue.enqueue(conn, {"fail": True}, priority=1)
    d = SolidQueue.enqueue(conn, {"fail": True}, priority=1)
    l2 = SolidQueue.enqueue(conn, {"hold": "l2"}, priority=5)
    s2, s3 = SolidQueue.enqueue(conn, {}, priority=10), SolidQueue.enqueue(conn, {}, priority=10)
    later = conn.execute("SELECT (now() AT TIME ZONE 'UTC') + interval '1 hour'").fetchone()[0]
    x = SolidQueue.enqueue(conn, {}, scheduled_at=later)
    k = SolidQueue.enqueue(conn, {}, concurrency_key="SleepJob/account-1")
    live = workers.start("solid_queue", "sq-b")
    wait_until(lambda: process_of(conn, l2) == live.pid, timeout=30)
    assert [status(conn, j) for j in (s1, f, d)] == ["finished", "failed", "failed"]

    snap = snapshot(capsys, *preset)
    own = conn.cursor(row_factory=dict_row).execute(SQL["status_counts"]).fetchone()
    assert snap["by_status"] == {k: n for k, n in own.items() if n}  # Mission Control's counts
    mapped = {role: sum(n for s, n in own.items() if ROLES[s] == role) for role in snap["counts"]}
    assert (
        snap["counts"] == mapped == {"ready": 2, "scheduled": 2, "running": 2, "done": 1, "dead": 2}
    )
    assert stale(snap) == []
    assert_harmless(dsn, "solid-queue")

    dead_process = conn.execute(
        "SELECT id FROM solid_queue_processes WHERE pid = %s", (doomed.pid,)
    ).fetchone()[0]
    kill_group(doomed)  # the whole bin/jobs: no supervisor is left to fail its claims
    assert stale(snapshot(capsys, *preset)) == []  # Solid Queue waits 5 minutes
    # an app with `config.solid_queue.process_alive_threshold = 3.seconds` (its heartbeat
    # interval below that, as the emulated one's 0.2 s) says so in its queue spec
    fast = preset_copy(tmp_path, "solid-queue", "3 seconds")
    found = wait_until(lambda: stale(snapshot(capsys, "--queue", fast, "--dsn", dsn)), timeout=30)
    assert found == [(str(l1), str(dead_process), False)]

    # the process is known dead (killed above): requeue before Solid Queue's 5 minutes
    code, result = queuetop(capsys, "requeue", *preset, "--force", str(l1), str(f))
    assert (code, result["changed"]) == (0, [l1, f])
    assert status(conn, l1) == status(conn, f) == "ready"
    args = json.loads(
        conn.execute("SELECT arguments FROM solid_queue_jobs WHERE id = %s", (f,)).fetchone()[0]
    )
    assert (args["executions"], args["exception_executions"]) == (0, {})  # reset, as retry does

    for action in (("requeue",), ("dead-letter", "--reason", "stop")):
        code, result = queuetop(capsys, *action, *preset, str(k))
        assert code == 1 and "concurrency-limited" in result["skipped"][0]["reason"]
    code, result = queuetop(capsys, "dead-letter", *preset, str(d), "--reason", "again")
    assert code == 1 and "already a failed execution" in result["skipped"][0]["reason"]
    code, result = queuetop(capsys, "dead-letter", *preset, str(x), "--reason", "obsolete")
    assert (code, result["changed"]) == (0, [x])
    assert status(conn, x) == "failed" and error_of(conn, x)["message"] == "obsolete"

    release(conn, "l1")
    workers.start("solid_queue", "sq-c")
    wait_until(lambda: status(conn, l1) == "finished", timeout=30)
    assert done_count(conn, l1) == 1
    wait_until(lambda: done_count(conn, s2) == done_count(conn, s3) == 1, timeout=30)
    assert status(conn, f) == "failed"  # retried, and failed again
