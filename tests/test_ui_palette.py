"""The command palette (Ctrl+P) lists the action keys too: requeue, dead-letter, mark,
cancel, terminate, and running one from it does what its key does."""

from __future__ import annotations

import asyncio

from test_ui_live import INTERVAL, add_stale, demo_spec, until
from test_ui_recovery import ready, screen_text
from textual.command import CommandPalette
from ui_snapshots import demo_spec as fixed_spec
from ui_snapshots import fixed_history

from dashboard.ui.app import QueuetopApp
from dashboard.ui.screens.confirm import ConfirmScreen
from dashboard.ui.screens.job_lookup import JobLookupScreen

ACTION_COMMANDS = {
    "Requeue (stale leases)",
    "Dead-letter (stale leases)",
    "Mark (stale leases)",
    "Mark all (stale leases)",
    "Unmark all (stale leases)",
    "Cancel query (session)",
    "Terminate (session)",
}


def titles(app) -> set[str]:
    return {c.title for c in app.get_system_commands(app.screen)}


async def run_from_palette(pilot, app, text: str) -> None:
    await pilot.press("ctrl+p")
    await until(pilot, lambda: isinstance(app.screen, CommandPalette))
    await pilot.press(*text)
    palette = app.screen
    # the palette searches in the background: wait until the first hit is the command
    await until(
        pilot,
        lambda: (
            palette._list_visible
            and palette.query_one("CommandList").highlighted == 0
            and text.lower()
            in str(palette.query_one("CommandList").get_option_at_index(0).prompt).lower()
        ),
    )
    await pilot.press("enter")


def test_palette_lists_every_action_key_against_a_database(dsn, connect):
    asyncio.run(_palette_requeues_the_lease_under_the_cursor(dsn, connect))


async def _palette_requeues_the_lease_under_the_cursor(dsn, connect):
    spec = demo_spec(dsn)
    [job_id] = add_stale(connect(autocommit=True), 1, 120)
    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app, stale=1)
        assert ACTION_COMMANDS <= titles(app), titles(app)
        await pilot.press("1")  # elsewhere: the command opens the stale leases itself
        await run_from_palette(pilot, app, "Requeue (stale")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert app.screen.request.action.kind == "requeue" and str(job_id) in screen_text(
            app.screen
        )
        await pilot.press("escape")
        await run_from_palette(pilot, app, "Mark all (stale")
        await until(pilot, lambda: app.stale_table.marked == {str(job_id)})
        await run_from_palette(pilot, app, "Terminate (session")  # tab 4 is open: says where
        await until(
            pilot,
            lambda: any(
                "open tab 2 (waiting) or 3 (idle)" in str(n.message) for n in app._notifications
            ),
        )
        await run_from_palette(pilot, app, "Job id")  # a priority key, run from a dialog
        await until(pilot, lambda: isinstance(app.screen, JobLookupScreen))


def test_without_a_database_the_palette_still_marks_but_offers_no_action():
    async def go() -> set[str]:
        app = QueuetopApp(fixed_spec(), None, poll=False, snapshots=fixed_history())
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            return titles(app)

    shown = asyncio.run(go())
    assert {"Mark (stale leases)", "Mark all (stale leases)"} <= shown
    assert not shown & {"Requeue (stale leases)", "Terminate (session)"}
