"""`watch --record FILE`: the dashboard records every snapshot it shows, on a thread of its
own, and reads the audit trail on a connection of its own (nothing added to the poll)."""

from __future__ import annotations

import asyncio

from demo_queue import setup_demo
from test_ui_live import INTERVAL, until

from dashboard.cli import build_parser
from dashboard.cli.watch_commands import watch_app
from dashboard.recorder import Recording


def test_watch_record_writes_each_snapshot_shown(dsn, connect, tmp_path):
    setup_demo(dsn, jobs=3)
    holder = connect(application_name="holder")
    holder.execute("SELECT id FROM queuetop_demo.jobs WHERE id = 1 FOR UPDATE")
    path = tmp_path / "watched.qtr"
    args = build_parser().parse_args(
        [
            "watch",
            "--dsn",
            dsn,
            "--preset",
            "demo",
            "--interval",
            str(INTERVAL),
            "--record",
            str(path),
        ]
    )
    app = watch_app(args)
    shown = []

    async def go():
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.snapshots_applied >= 6)
            follower = app.recorder.recorder.follower
            await until(pilot, lambda: follower._conn is not None)
            # the audit trail is read on its own session, never the monitor's
            assert follower._conn.info.backend_pid != app.source.conn.info.backend_pid
            shown.append(app.snapshot)

    asyncio.run(go())
    applied = app.snapshots_applied  # the app has stopped: no snapshot comes after this
    app.recorder.close()
    recording = Recording(path)
    bounds = recording.bounds()
    assert bounds.frames == applied  # one frame per snapshot shown, none dropped
    assert shown[0] in list(recording.snapshots(bounds.first_id, bounds.last_id))
    last = recording.snapshot(bounds.last_id)
    assert {h.pid for h in last.row_lock_holders} == {holder.info.backend_pid}
    assert recording.spec() == app.spec
