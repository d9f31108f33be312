"""`--preset good-job` on good_job's own schema, driven by emulated good_job workers.

good_job's default strategy claims a job with a session advisory lock on its md5 key and
holds it on the worker's connection while the job runs: a SIGKILLed worker's job is
unlocked at once and claimable again ("interrupted"), nothing to recover. Its skiplocked
strategy leases the job to a process (locked_by_id) that heartbeats in good_job_processes:
a dead process's lease is stale once its heartbeat is older than the timeout.
"""

from __future__ import annotations

import pytest
from psycopg.rows import dict_row

from tests.emulated_workers import GoodJob, done_count, hold, named, release
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
    "queued": "ready",
    "scheduled": "scheduled",
    "retried": "failed",
    "running": "running",
    "succeeded": "done",
    "discarded": "dead",
}
SQL = named("good_job")


def _job(conn, job_id):
    return (
        conn.cursor(row_factory=dict_row)
        .execute(
            "SELECT g.*, p.state ->> 'name' AS process FROM good_jobs g "
            "LEFT JOIN good_job_processes p ON p.id = g.locked_by_id WHERE g.id = %s",
            (job_id,),
        )
        .fetchone()
    )


def lock_pid(conn, job_id):
    """Who holds the job's advisory lock, as good_job's includes_advisory_locks reads it."""
    rows = conn.cursor(row_factory=dict_row).execute(SQL["jobs_with_advisory_lock"]).fetchall()
    return next((r["lock_pid"] for r in rows if str(r["id"]) == job_id), None)


def _state(conn, job_id):
    job = _job(conn, job_id)
    if job["finished_at"]:
        return "discarded" if job["error"] else "succeeded"
    return "retried" if job["serialized_params"]["executions"] > 1 else job["performed_at"]


@pytest.mark.matrix
def test_good_job_advisory_lock_is_the_running_signal(dsn, workers, capsys):  # noqa: F811
    conn = library_db(dsn, "good_job")
    preset = ("--preset", "good-job", "--dsn", dsn)
    hold(conn, "l1")
    hold(conn, "l2")
    l1 = GoodJob.enqueue(conn, {"hold": "l1"}, priority=0)
    doomed = workers.start("good_job", "good-a")
    wait_until(lambda: lock_pid(conn, l1) and _job(conn, l1)["performed_at"], timeout=30)

    s1 = GoodJob.enqueue(conn, {}, priority=1)
    f = GoodJob.enqueue(conn, {"fail": True, "waits": [0, 3600]}, priority=1)
    d = GoodJob.enqueue(conn, {"fail": True}, priority=1)
    l2 = GoodJob.enqueue(conn, {"hold": "l2"}, priority=5)
    s2, s3 = GoodJob.enqueue(conn, {}, priority=10), GoodJob.enqueue(conn, {}, priority=10)
    later = conn.execute("SELECT (now() AT TIME ZONE 'UTC') + interval '1 hour'").fetchone()[0]
    x = GoodJob.enqueue(conn, {}, priority=1, scheduled_at=later)
    workers.start("good_job", "good-b")
    wait_until(lambda: lock_pid(conn, l2), timeout=30)
    assert [_state(conn, j) for j in (s1, f, d)] == ["succeeded", "retried", "discarded"]

    snap = snapshot(capsys, *preset)
    own = conn.cursor(row_factory=dict_row).execute(SQL["dashboard_state_counts"]).fetchone()
    assert snap["by_status"] == {k: n for k, n in own.items() if n}  # good_job's dashboard
    assert (
        snap["counts"]
        == {ROLES[k]: n for k, n in own.items()}
        == {"ready": 2, "scheduled": 1, "running": 2, "done": 1, "failed": 1, "dead": 1}
    )
    assert stale(snap) == []
    jobs = {lk["job_id"]: lk for lk in snap["locks"] if lk["job_id"]}
    assert jobs[l1]["pid"] == lock_pid(conn, l1) and jobs[l2]["pid"] == lock_pid(conn, l2)
    assert_harmless(dsn, "good-job")

    kill_group(doomed)  # SIGKILL mid-job: the worker's session ends, the lock with it
    wait_until(lambda: lock_pid(conn, l1) is None, timeout=30)
    snap = snapshot(capsys, *preset)
    # good_job's dashboard count still says running (performed_at), its lock view does not:
    # the job is claimable again at once, so queuetop counts it ready ("interrupted")
    assert conn.execute(SQL["dashboard_state_counts"]).fetchone()[3] == 2
    assert snap["by_status"]["interrupted"] == 1 and snap["counts"]["running"] == 1
    assert stale(snap) == [] and l1 not in {lk["job_id"] for lk in snap["locks"]}

    code, result = queuetop(capsys, "requeue", *preset, l1, f)
    assert code == 1 and result["changed"] == [f]
    assert result["skipped"] == [{"id": l1, "reason": "already ready"}]
    assert (
        _job(conn, f)["scheduled_at"]
        <= conn.execute("SELECT now() AT TIME ZONE 'UTC'").fetchone()[0]
    )  # reschedule_job(now)
    for action in (("requeue", "--force"), ("dead-letter", "--force", "--reason", "stop")):
        code, result = queuetop(capsys, *action, *preset, l2)
        assert code == 1 and "holds its advisory lock" in result["skipped"][0]["reason"]
    code, result = queuetop(capsys, "dead-letter", *preset, x, "--reason", "obsolete")
    assert (code, result["changed"]) == (0, [x])
    job = _job(conn, x)
    assert job["finished_at"] and job["error_event"] == 5
    assert job["error"] == "GoodJob::Job::DiscardJobError: obsolete"

    release(conn, "l1")
    workers.start("good_job", "good-c")
    wait_until(lambda: _state(conn, l1) == "succeeded", timeout=30)
    assert done_count(conn, l1) == 1 and _job(conn, l1)["executions_count"] == 2
    events = conn.execute(
        "SELECT error_event FROM good_job_executions WHERE active_job_id = %s ORDER BY created_at",
        (l1,),
    ).fetchall()
    assert events == [(0,), (None,)]  # good_job's record of the interruption, then success
    wait_until(lambda: done_count(conn, s2) == done_count(conn, s3) == 1, timeout=30)


def test_good_job_skiplocked_lease_of_a_dead_process(dsn, workers, capsys, tmp_path):  # noqa: F811
    conn = library_db(dsn, "good_job")
    preset = ("--preset", "good-job", "--dsn", dsn)
    hold(conn, "l1")
    hold(conn, "l2")
    l1 = GoodJob.enqueue(conn, {"hold": "l1"}, priority=0)
    doomed = workers.start("good_job", "good-a", "--mode", "skiplocked")
    wait_until(lambda: _job(conn, l1)["process"] == "good-a", timeout=30)
    l2 = GoodJob.enqueue(conn, {"hold": "l2"}, priority=0)
    workers.start("good_job", "good-b", "--mode", "skiplocked")
    wait_until(lambda: _job(conn, l2)["process"] == "good-b", timeout=30)
    kill_group(doomed)  # its heartbeat stops; its lease (locked_by_id) stays

    snap = snapshot(capsys, *preset)
    assert snap["counts"]["running"] == 2 and stale(snap) == []  # good_job waits 5 minutes
    # an operator whose processes heartbeat often may say 3 seconds (the emulated one: 0.2 s)
    fast = preset_copy(tmp_path, "good-job", "3 seconds")
    dead = _job(conn, l1)["locked_by_id"]
    found = wait_until(lambda: stale(snapshot(capsys, "--queue", fast, "--dsn", dsn)), timeout=30)
    assert found == [(l1, str(dead), False)]

    code, result = queuetop(capsys, "requeue", *preset, l1)
    assert code == 1 and result["skipped"] == [
        {"id": l1, "reason": "lease not expired (use --force)"}
    ]
    # the process is known dead (killed above): requeue before good_job's 5 minutes are up
    code, result = queuetop(capsys, "requeue", *preset, "--force", l1)
    assert (code, result["changed"]) == (0, [l1])
    job = _job(conn, l1)
    assert job["locked_by_id"] is None and job["performed_at"] is not None  # Process.cleanup

    release(conn, "l1")
    workers.start("good_job", "good-c", "--mode", "skiplocked")
    wait_until(lambda: _state(conn, l1) == "succeeded", timeout=30)
    assert done_count(conn, l1) == 1 and _job(conn, l1)["executions_count"] == 2
