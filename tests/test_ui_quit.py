"""Ctrl+C quits the dashboard, as it quits top and pg_activity: from the main screen and
from a dialog with a text input alike."""

from __future__ import annotations

import asyncio

from ui_snapshots import demo_spec, fixed_history

from dashboard.actions import ObservedJob
from dashboard.actions.requests import ActionKind, job_request
from dashboard.ui.app import QueuetopApp
from dashboard.ui.screens.confirm import ConfirmScreen, confirm_jobs
from dashboard.ui.screens.help import binding_rows


def quits_on_ctrl_c(open_dialog: bool) -> bool:
    async def go() -> bool:
        app = QueuetopApp(demo_spec(), None, poll=False, snapshots=fixed_history())
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            if open_dialog:  # a reason Input has the focus: it would copy on Ctrl+C
                job = ObservedJob(id="7", status="failed", worker=None, lease_token=None)
                request = job_request(ActionKind.DEAD_LETTER, demo_spec(), [job])
                app.push_screen(ConfirmScreen(confirm_jobs(request)))
                await pilot.pause()
                assert app.screen.focused is not None
            await pilot.press("ctrl+c")
            await pilot.pause()
            return app.return_code == 0 and not app.is_running

    return asyncio.run(go())


def test_ctrl_c_quits_from_the_main_screen():
    assert quits_on_ctrl_c(open_dialog=False)


def test_ctrl_c_quits_from_a_dialog_with_an_input():
    assert quits_on_ctrl_c(open_dialog=True)


def test_help_names_ctrl_c():
    rows = binding_rows(QueuetopApp(demo_spec(), None, poll=False).binding_sections())
    assert any(keys == "q Ctrl+C" or "Ctrl+C" in keys.split() for _, keys, _ in rows), rows
