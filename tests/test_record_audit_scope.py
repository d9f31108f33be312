"""A recording keeps the actions taken while it records, on its own queue (and on sessions):
a recording of the demo queue carried records of another table made before it started
(`record` said 6, one had happened)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from dashboard.recorder.audit_follow import AuditFollower
from dashboard.setup import schema

INSERT = (
    "INSERT INTO queuetop.audit_log (at, action, queue_table, target, outcome) "
    "VALUES (%s, %s, %s, %s, 'changed')"
)


def test_only_the_actions_on_its_queue_since_it_started(dsn, connect):
    conn = connect(autocommit=True)
    schema.init_audit(conn)
    started = datetime.now(timezone.utc)
    before, after = started - timedelta(seconds=30), started + timedelta(seconds=1)
    for at, action, table, target in (
        (before, "requeue", "queuetop_demo.jobs", "1"),  # ours, before it started
        (before, "requeue", "public.tasks", "2"),  # another queue, before
        (after, "requeue", "public.tasks", "3"),  # another queue, while recording
        (after, "requeue", "queuetop_demo.jobs", "4"),  # ours, while recording
        (after, "terminate", None, "4242"),  # a session, while recording
    ):
        conn.execute(INSERT, (at, action, table, target))
    follower = AuditFollower(dsn, None, started, table="queuetop_demo.jobs")
    try:
        got = [(r.action, r.queue_table, r.target) for r in follower.read()]
    finally:
        follower.close()
    assert got == [("requeue", "queuetop_demo.jobs", "4"), ("terminate", None, "4242")]
