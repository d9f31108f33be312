"""The job list (`j` with several ids) on a real server: its keys stay in sight, Home/End and
pages jump, the footer is the shown screen's, Escape on a confirmation returns to the list."""

from __future__ import annotations

import asyncio

from demo_queue import audit_rows, job
from test_ui_live import INTERVAL, demo_spec, until
from test_ui_lookup import add_job, look_up
from test_ui_recovery import ready

from dashboard.ui.app import QueuetopApp
from dashboard.ui.screens.action_result import ActionResultScreen
from dashboard.ui.screens.confirm import ConfirmScreen
from dashboard.ui.screens.job_lookup import JobListScreen, JobLookupScreen


def visible_lines(app) -> list[str]:
    """The terminal as the operator sees it now (the active screen over what it covers)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def job_shown(app, job_id: int) -> bool:
    return any(f" {job_id}  failed " in line for line in visible_lines(app))


KEYS_LINE = "R requeue  F force requeue  D dead-letter  Esc close"


def test_the_job_list_keeps_its_keys_in_sight_and_jumps_with_home_end_pages(dsn, connect):
    asyncio.run(_the_job_list_keeps_its_keys_in_sight(dsn, connect))


async def _the_job_list_keeps_its_keys_in_sight(dsn, connect):
    spec = demo_spec(dsn)
    setup = connect(autocommit=True)
    ids = [add_job(setup, "failed") for _ in range(41)]
    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        await pilot.press("j")
        await until(pilot, lambda: isinstance(app.screen, JobLookupScreen))
        footer = visible_lines(app)[-1]
        assert "Enter Look up" in footer and "Esc Close" in footer, footer
        assert "Quit" not in footer and "Job id" not in footer, footer
        await pilot.press(*" ".join(map(str, ids)), "enter")
        await until(pilot, lambda: isinstance(app.screen, JobListScreen))
        listing = app.screen
        body = listing.query_one("#joblist-body")
        assert body.max_scroll_y > 0  # 41 jobs do not fit in 24 rows: the list scrolls

        def keys_in_sight() -> None:
            lines = visible_lines(app)
            assert any(KEYS_LINE in line for line in lines[:-1]), "\n".join(lines)
            footer = lines[-1]  # the footer names this screen's keys, not the dashboard's
            for key in ("R Requeue", "F Force requeue", "D Dead-letter", "Esc Close"):
                assert key in footer, footer
            for other in ("Mark", "Quit", "Job id", "Panels"):
                assert other not in footer, footer

        keys_in_sight()
        assert job_shown(app, ids[0]) and not job_shown(app, ids[-1])
        await pilot.press("end")
        await pilot.pause()
        assert body.scroll_y == body.max_scroll_y
        assert job_shown(app, ids[-1]) and not job_shown(app, ids[0])
        keys_in_sight()
        await pilot.press("home")
        await pilot.pause()
        assert body.scroll_y == 0 and job_shown(app, ids[0]) and not job_shown(app, ids[-1])
        await pilot.press("pagedown")
        await pilot.pause()
        page = body.scroll_y
        assert 0 < page <= body.max_scroll_y and not job_shown(app, ids[0])
        keys_in_sight()
        await pilot.press("pagedown", "pagedown", "pagedown")
        await pilot.pause()
        assert body.scroll_y == body.max_scroll_y and job_shown(app, ids[-1])
        await pilot.press("pageup")
        await pilot.pause()
        assert body.scroll_y == body.max_scroll_y - page
        await pilot.press("up", "down", "down")
        await pilot.pause()
        assert body.scroll_y == body.max_scroll_y - page + 1
        assert app.screen is listing


def test_escape_on_a_confirmation_returns_to_the_job_list(dsn, connect):
    asyncio.run(_escape_on_a_confirmation_returns_to_the_job_list(dsn, connect))


async def _escape_on_a_confirmation_returns_to_the_job_list(dsn, connect):
    spec = demo_spec(dsn)
    setup = connect(autocommit=True)
    ids = [add_job(setup, "failed") for _ in range(30)]
    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        await look_up(pilot, app, " ".join(map(str, ids)))
        await until(pilot, lambda: isinstance(app.screen, JobListScreen))
        listing = app.screen
        await pilot.press("end")
        await pilot.pause()
        scrolled = listing.query_one("#joblist-body").scroll_y
        assert scrolled > 0

        await pilot.press("D")  # the dead-letter confirmation asks for a reason
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert app.screen.query_one("#confirm-body").border_title == "Dead-letter 30 jobs?"
        footer = visible_lines(app)[-1]
        assert "Esc No" in footer and "Enter Yes" in footer and "Requeue" not in footer, footer
        await pilot.press(*"not yet", "escape")
        await until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
        assert app.screen is listing  # only the confirmation closed: the list, as it was
        assert listing.query_one("#joblist-body").scroll_y == scrolled

        for key in ("R", "F"):  # the same for the other confirmations, and with n
            await pilot.press(key)
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("escape" if key == "R" else "n")
            await until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
            assert app.screen is listing, key
        assert {job(setup, i)["status"] for i in ids} == {"failed"}
        assert audit_rows(setup) == []

        await pilot.press("D")  # a yes goes ahead and closes the list
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press(*"poison", "enter")
        await until(pilot, lambda: isinstance(app.screen, ActionResultScreen))
        assert listing not in app.screen_stack
        assert sorted(app.screen.result.changed, key=int) == [str(i) for i in ids]
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ActionResultScreen))
        assert not isinstance(app.screen, JobListScreen | ConfirmScreen)
    assert all(job(setup, i) is None for i in ids)
    assert [r["reason"] for r in audit_rows(setup)] == ["poison"] * 30
