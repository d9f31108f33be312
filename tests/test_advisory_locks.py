"""A queue whose workers hold a session advisory lock per running job (`advisory_lock`).

The lock is the running signal: a running job whose lock is held is alive, one whose
lock nobody holds lost its worker (stale at once, worker_alive false); the locks view
names the job each advisory lock stands for, next to the holder's session.
"""

from __future__ import annotations

from dataclasses import replace

import psycopg
import pytest
from ui_snapshots import fixed_snapshot

from dashboard import config, db, monitor
from dashboard.actions import TableAudit, observe_jobs, requeue
from dashboard.models import LockInfo
from dashboard.render import report
from dashboard.setup import schema
from dashboard.ui.widgets.tables import LocksTable
from tests.helpers import wait_until

# every server of the matrix (tests/servers.py)
pytestmark = pytest.mark.matrix

BIG = 5_000_000_123  # above 2**32: pg_locks splits the key into classid and objid

TOML = """
[queue]
table = "jobs"
status = "status"
started_at = "started_at"
worker = "worker"
{key}

[queue.states]
ready = ["ready"]
running = ["running"]
done = ["done"]
"""


def _spec(conn: psycopg.Connection, tmp_path, key: str) -> object:
    path = tmp_path / "jobs.toml"
    path.write_text(TOML.format(key=key))
    spec = config.validate(conn, config.build_spec(queue_file=str(path)))
    conn.commit()
    return spec


def test_advisory_lock_is_the_running_signal(dsn, connect, tmp_path):
    setup = connect(autocommit=True)
    schema.init_audit(setup)
    setup.execute(
        "CREATE TABLE jobs (id bigint PRIMARY KEY, status text NOT NULL, "
        "started_at timestamptz, worker text)"
    )
    setup.execute(
        "INSERT INTO jobs VALUES (1, 'running', now(), 'w1'), "
        "(%s, 'running', now(), 'w2'), (3, 'ready', NULL, NULL)",
        (BIG,),
    )
    worker = connect(autocommit=True, application_name="w1")
    worker.execute("SELECT pg_advisory_lock(1), pg_advisory_lock(424242)")  # 424242: no job
    other = connect(autocommit=True, application_name="w2")
    other.execute("SELECT pg_advisory_lock(%s)", (BIG,))

    with db.connect_monitor(dsn) as mon:
        spec = _spec(mon, tmp_path, 'advisory_lock = "id"')
        snap = monitor.collect(mon, spec)
        assert snap.counts["running"] == 2 and snap.stale_leases == ()
        named = {lk.advisory_key: lk for lk in snap.locks if lk.locktype == "advisory"}
        assert named[1].job_id == 1 and named[1].pid == worker.info.backend_pid
        assert named[1].on_queue_table and named[1].application_name == "w1"
        assert named[BIG].job_id == BIG and named[BIG].pid == other.info.backend_pid
        assert named[424242].job_id is None and not named[424242].on_queue_table

        other.close()  # the second worker dies: its session and its lock are gone
        stale = wait_until(lambda: monitor.collect(mon, spec).stale_leases)
        assert [(s.id, s.worker_alive) for s in stale] == [(BIG, False)]

        # without the key, nothing tells the dead worker's job from the live one
        plain = _spec(mon, tmp_path, "")
        assert monitor.collect(mon, plain).stale_leases == ()

    with db.connect_action(dsn) as action:
        seen, _ = observe_jobs(action, spec, ["1", str(BIG)])
        result = requeue(action, spec, seen, audit=TableAudit())
    assert result.changed == (str(BIG),)
    assert [(s.id, s.reason) for s in result.skipped] == [("1", "lease not expired (use --force)")]
    assert setup.execute("SELECT status FROM jobs WHERE id = %s", (BIG,)).fetchone() == ("ready",)


def test_locks_panel_and_text_snapshot_name_the_job():
    lock = LockInfo(
        pid=4242,
        backend_start=None,
        application_name="Que Locker: 4242",
        locktype="advisory",
        mode="ExclusiveLock",
        granted=True,
        relation=None,
        on_queue_table=True,
        wait_s=None,
        state="idle",
        query="",
        advisory_key=7,
        job_id="7",
    )
    snap = replace(fixed_snapshot(), locks=(lock,))
    table = LocksTable()
    table.update_from(snap)
    assert [table.row_texts(i)[4] for i in range(table.row_count)] == ["job 7"]
    assert "advisory  job 7" in report.snapshot_text(snap)
