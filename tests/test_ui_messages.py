"""Notifications on the main screen take a line of their own above the footer and cover no
data (three stacked toasts hid half the locks table at 120x40; at 80x24 one covered the
`on` and `waiting` columns of every row); modals keep Textual's toasts."""

from __future__ import annotations

import asyncio

import pytest
from helpers.pilot import until
from pile_up import pile_up_snapshot
from ui_snapshots import demo_spec

from dashboard.ui.app import QueuetopApp
from dashboard.ui.screens.help import HelpScreen


def pile_up_app() -> QueuetopApp:
    return QueuetopApp(demo_spec(), None, poll=False, snapshots=[pile_up_snapshot()])


def overlaps(a, b) -> bool:
    return bool(a.intersection(b).area)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
def test_notifications_cover_no_data(size):
    async def go():
        app = pile_up_app()
        # notifications=True: run_test turns Textual's toasts off unless asked
        async with app.run_test(size=size, notifications=True) as pilot:
            await pilot.press("1")
            for n in range(3):  # three at once, as actions and toggles make them
                app.notify(f"notice {n}: something the operator should read", timeout=30)
            await pilot.pause()
            bar = app.query_one("#messages")
            locks = app.table("locks")
            assert "notice 2: something the operator should read" in str(bar.render())
            assert bar.region.height >= 1 and not overlaps(bar.region, locks.region)
            # no toast anywhere over the main screen: every row of the locks table is seen
            assert list(app.screen.query("Toast")) == []
            assert len(app._notifications) == 3  # Textual still holds them (modals show them)
            # on a modal, Textual's toasts are back (they cover no data there)
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)
            app.notify("on the help screen", timeout=30)
            await until(pilot, lambda: list(app.screen.query("Toast")))

    asyncio.run(go())


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
def test_pile_up_with_a_notification_snapshot(snap_compare, size):
    async def notify(pilot):
        await pilot.press("1", "f")  # unfold the locks: the toggle says so
        await pilot.pause()

    assert snap_compare(pile_up_app(), terminal_size=size, run_before=notify)
