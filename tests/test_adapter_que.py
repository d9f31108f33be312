"""`--preset que` on Que's own schema, driven by emulated Que lockers (Que's SQL).

Que's running signal is the session advisory lock on the job id, held by the locker's
connection while a worker runs the job: when the process dies, the lock goes with its
session and the job is ready again at once; nothing else records that it ran.
"""

from __future__ import annotations

import pytest
from psycopg.rows import dict_row

from tests.emulated_workers import Que, done_count, hold, named, release
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
    "ready": "ready",
    "scheduled": "scheduled",
    "working": "running",
    "finished": "done",
    "errored": "failed",
    "expired": "dead",
}


def que_view(conn) -> dict[str, int]:
    """Que's own view: Que.job_states (the jobs a locker works now), else
    que_determine_job_state(job), per job."""
    working = {
        r["id"]
        for r in conn.cursor(row_factory=dict_row).execute(named("que")["job_states"]).fetchall()
    }
    counts: dict[str, int] = {}
    for job_id, state in conn.execute("SELECT id, que_determine_job_state(j) FROM que_jobs j"):
        state = "working" if job_id in working else state
        counts[state] = counts.get(state, 0) + 1
    return counts


def locker_of(conn, job_id) -> int | None:
    """The locker working the job, as Que.job_states finds it (pg_locks joined to que_lockers)."""
    row = conn.execute(
        "SELECT pid FROM pg_locks JOIN que_lockers USING (pid) "
        "WHERE locktype = 'advisory' "
        "AND (classid::bigint << 32) + objid::bigint = %s",
        (job_id,),
    ).fetchone()
    return row[0] if row else None


def _row(conn, job_id):
    return conn.execute(
        "SELECT error_count, run_at <= now(), finished_at IS NOT NULL, "
        "expired_at IS NOT NULL, last_error_message FROM que_jobs WHERE id = %s",
        (job_id,),
    ).fetchone()


def test_que_counts_lock_signal_recovery(dsn, workers, capsys):  # noqa: F811
    conn = library_db(dsn, "que")
    preset = ("--preset", "que", "--dsn", dsn)
    hold(conn, "l1")
    hold(conn, "l2")
    l1 = Que.insert(conn, {"hold": "l1"}, priority=1)
    doomed = workers.start("que", "que-a")
    wait_until(lambda: locker_of(conn, l1), timeout=30)

    s1 = Que.insert(conn, {}, priority=10)
    f = Que.insert(conn, {"fail": True, "waits": [3600]}, priority=10)
    d = Que.insert(conn, {"fail": True}, priority=10)
    fin = Que.insert(conn, {"finish": True}, priority=10)
    l2 = Que.insert(conn, {"hold": "l2"}, priority=20)
    s2, s3 = Que.insert(conn, {}, priority=50), Que.insert(conn, {}, priority=50)
    x = Que.insert(conn, {}, run_at=conn.execute("SELECT now() + interval '1 hour'").fetchone()[0])
    workers.start("que", "que-b")
    wait_until(lambda: locker_of(conn, l2), timeout=30)
    assert _row(conn, s1) is None and done_count(conn, s1) == 1  # Que destroys what succeeds
    assert _row(conn, f)[0] == 1 and _row(conn, d)[3] and _row(conn, fin)[2]

    snap = snapshot(capsys, *preset)
    assert snap["by_status"] == que_view(conn)
    assert snap["counts"] == {
        "ready": 2,
        "scheduled": 1,
        "running": 2,
        "done": 1,
        "failed": 1,
        "dead": 1,
    }
    assert {
        role: sum(n for s, n in que_view(conn).items() if ROLES[s] == role)
        for role in snap["counts"]
    } == snap["counts"]
    assert stale(snap) == []
    # the locks view names the job each locker's advisory lock stands for
    jobs = {lk["job_id"]: lk for lk in snap["locks"] if lk["job_id"]}
    doomed_pid = locker_of(conn, l1)
    assert jobs[l1]["pid"] == doomed_pid and jobs[l1]["on_queue_table"]
    assert jobs[l1]["application_name"] == f"Que Locker: {doomed_pid}"
    assert jobs[l2]["pid"] == locker_of(conn, l2)
    assert_harmless(dsn, "que")

    kill_group(doomed)  # SIGKILL mid-job: the locker's session ends, its lock with it
    wait_until(lambda: locker_of(conn, l1) is None, timeout=30)
    snap = snapshot(capsys, *preset)
    assert snap["by_status"] == que_view(conn)
    assert snap["counts"]["running"] == 1 and snap["counts"]["ready"] == 3
    assert stale(snap) == [] and str(l1) not in {lk["job_id"] for lk in snap["locks"]}

    code, result = queuetop(capsys, "requeue", *preset, str(l1), str(f))
    assert code == 1 and result["changed"] == [f]
    assert result["skipped"] == [{"id": l1, "reason": "already ready"}]
    assert _row(conn, f)[:2] == (1, True)  # due now, its error count kept
    for action in (("requeue", "--force"), ("dead-letter", "--force", "--reason", "stop")):
        code, result = queuetop(capsys, *action, *preset, str(l2))
        assert code == 1 and "holds its advisory lock" in result["skipped"][0]["reason"]
    assert locker_of(conn, l2) and _row(conn, l2)[3] is False
    code, result = queuetop(capsys, "dead-letter", *preset, str(x), "--reason", "obsolete")
    assert (code, result["changed"]) == (0, [x])
    assert _row(conn, x)[0] == 1 and _row(conn, x)[3:] == (True, "obsolete")

    release(conn, "l1")
    workers.start("que", "que-c")
    wait_until(lambda: _row(conn, l1) is None, timeout=30)
    assert done_count(conn, l1) == 1
    wait_until(lambda: _row(conn, f)[0] == 2, timeout=30)  # run again, and failed again
    wait_until(lambda: done_count(conn, s2) == done_count(conn, s3) == 1, timeout=30)
