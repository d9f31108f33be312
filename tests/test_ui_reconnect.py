"""A lost monitoring connection is opened again at once: the header never says
`disconnected` while the server is fine (a terminated backend, a dropped socket)."""

from __future__ import annotations

import asyncio

from helpers import wait_until
from test_ui_live import demo_spec, until

from dashboard.ui.app import QueuetopApp
from dashboard.ui.messages import PollFailed

INTERVAL = 0.5


def test_terminated_monitor_backend_reconnects_without_a_failed_poll(dsn, connect):
    asyncio.run(_terminated_monitor_backend(dsn, connect))


async def _terminated_monitor_backend(dsn, connect):
    spec = demo_spec(dsn)
    failed: list[PollFailed] = []
    app = QueuetopApp(spec, dsn, interval=INTERVAL)

    def hook(message) -> None:
        if isinstance(message, PollFailed):
            failed.append(message)

    async with app.run_test(size=(120, 40), message_hook=hook) as pilot:
        await until(pilot, lambda: app.snapshots_applied >= 1 and app.source.conn is not None)
        admin = connect(autocommit=True)
        for _ in range(2):  # twice: the second loss is as fresh as the first
            pid = app.source.conn.info.backend_pid
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            wait_until(
                lambda pid=pid: (
                    not admin.execute(
                        "SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)
                    ).fetchone()
                )
            )
            seen = app.snapshots_applied
            await until(pilot, lambda seen=seen: app.snapshots_applied >= seen + 2)
            assert [m.kind for m in failed] == []
            assert app.source.conn.info.backend_pid != pid and app.link.kind in ("live", "slow")
