"""The job browser tab (b) fed fixed pages: SVG snapshots, paging, filters, the whole row
shown safely, marks and what each action would leave out; reads never block the UI."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace

import pytest
from helpers.pilot import until
from test_ui_palette import run_from_palette
from ui_snapshots import FixedBrowserSource, demo_spec, fixed_history

from dashboard.browse import PAGE_ROWS
from dashboard.ui.app import BROWSER_TAB, QueuetopApp
from dashboard.ui.jobs_tab import JobBrowser
from dashboard.ui.jobs_tab.screens import FilterInputScreen, JobRowScreen
from dashboard.ui.screens.help import binding_rows


def grouped_spec():
    """The demo spec with its queue column as the group (the demo's own preset has none)."""
    spec = demo_spec()
    return replace(spec, columns=replace(spec.columns, group="queue"))


def browser_app(source=None, spec=None) -> QueuetopApp:
    return QueuetopApp(
        spec or grouped_spec(),
        None,
        poll=False,
        snapshots=fixed_history(),
        browser_source=source or FixedBrowserSource(),
    )


def status(app) -> str:
    return str(app.query_one("#browser-status").render())


async def open_browser(pilot, loads: int = 1) -> JobBrowser:
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.press("b")
    browser = pilot.app.browser
    await until(pilot, lambda: browser.loads >= loads)
    return browser


async def open_and_mark(pilot) -> None:
    await open_browser(pilot)
    await pilot.press("down", "space", "space")
    await pilot.pause()


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
def test_browser_snapshot(snap_compare, size):
    assert snap_compare(browser_app(), terminal_size=size, run_before=open_and_mark)


def test_pages_roles_order_and_filters():
    async def go():
        source = FixedBrowserSource()
        app = browser_app(source)
        async with app.run_test(size=(120, 40)) as pilot:
            browser = await open_browser(pilot)
            assert app.query_one("TabbedContent").active == BROWSER_TAB
            table = browser.table
            assert table.row_count == PAGE_ROWS and browser.query.role == "failed"
            assert "page 1: rows 1-100, more after" in status(app)
            assert table.cell_text(table.cursor_key(), "id") == "5000"
            await pilot.press("right_square_bracket")
            await until(pilot, lambda: browser.loads >= 2)
            assert "page 2: rows 101-200" in status(app)
            assert table.cell_text(table.cursor_key(), "id") == "4900"
            assert source.reads[-1][1].sort_key == 4901  # just past the last row shown
            await pilot.press("right_square_bracket")
            await until(pilot, lambda: browser.loads >= 3)
            assert "page 3: rows 201-250, the last" in status(app)
            await pilot.press("left_square_bracket", "left_square_bracket")
            await until(pilot, lambda: browser.loads >= 5)
            assert "page 1" in status(app) and source.reads[-1][1] is None
            await pilot.press("o")
            await until(pilot, lambda: browser.loads >= 6)
            assert table.cell_text(table.cursor_key(), "id") == "4751"  # oldest first
            await pilot.press("slash")
            await until(pilot, lambda: isinstance(app.screen, FilterInputScreen))
            await pilot.press(*"keyerror", "enter")
            await until(pilot, lambda: browser.loads >= 7)
            assert browser.query.text == "keyerror" and "filter 'keyerror'" in status(app)
            assert {table.items[k].last_error for k in table.items} == {"KeyError: 'customer_id'"}
            await pilot.press("g")
            await until(pilot, lambda: isinstance(app.screen, FilterInputScreen))
            await pilot.press(*"sms", "enter")
            await until(pilot, lambda: browser.loads >= 8)
            assert {table.items[k].group for k in table.items} == {"sms"}
            await pilot.press("v")  # the next role: dead, the dead-letter table's rows
            await until(pilot, lambda: browser.loads >= 9)
            assert browser.query.role == "dead" and browser.query.text == "keyerror"
            await pilot.press("slash")
            await until(pilot, lambda: isinstance(app.screen, FilterInputScreen))
            await pilot.press("ctrl+u", "enter")  # an empty filter: none
            await pilot.press("g")
            await until(pilot, lambda: isinstance(app.screen, FilterInputScreen))
            await pilot.press("ctrl+u", "enter")
            await until(pilot, lambda: browser.query.group is None and not browser.loading)
            assert [table.cell_text(k, "state") for k in table.items] == ["dead-letter"] * 2
            assert "dead (in queuetop_demo.jobs and queuetop_demo.jobs_dead)" in status(app)

    asyncio.run(go())


def test_enter_shows_the_whole_row_escaped_and_cut():
    async def go():
        app = browser_app()
        async with app.run_test(size=(120, 40)) as pilot:
            browser = await open_browser(pilot)
            await pilot.press("down", "down", "enter")  # the job with an escape sequence
            await until(pilot, lambda: isinstance(app.screen, JobRowScreen))
            text = "\n".join(s.text for s in app.screen._compositor.render_strips())
            assert "\\n\\x1b[31mretrying\\x1b[0m" in text  # escaped, on one line
            assert "(46,213 more characters)" in text  # the payload, cut
            assert "Job 4998 in queuetop_demo.jobs" in text
            await pilot.press("escape")
            assert isinstance(app.screen.query_one(JobBrowser), JobBrowser)
            assert browser.table.has_focus

    asyncio.run(go())


def test_marks_and_what_each_action_leaves_out():
    async def go():
        app = browser_app()
        async with app.run_test(size=(120, 40)) as pilot:
            browser = await open_browser(pilot)
            await pilot.press("space", "space")
            assert len(browser.table.marked) == 2 and "2 marked" in status(app)
            jobs = browser.table.chosen()
            change, left = browser.split(jobs, "retry-dead", False)
            assert change == [] and {s.reason for s in left} == {"not in the dead-letter table"}
            change, left = browser.split(jobs, "requeue", False)
            assert [j.id for j in change] == ["5000", "4999"] and left == []
            await pilot.press("Y")  # nothing to retry here: said, nothing asked
            assert "retry: nothing to change" in "\n".join(str(n.title) for n in app._notifications)
            await pilot.press("v")
            await until(pilot, lambda: browser.loads >= 2)
            assert browser.table.marked == set()  # a new role starts unmarked
            await pilot.press("a")
            dead = browser.table.chosen()
            change, left = browser.split(dead, "requeue", True)
            assert change == [] and {s.reason for s in left} == {
                "already dead-lettered (Y retries it)"
            }
            change, left = browser.split(dead, "retry-dead", False)
            assert [j.id for j in change] == ["4990", "4989"] and left == []
            rows = binding_rows(app.binding_sections())
            assert (
                "job browser (b)",
                "Y",
                "Move the marked jobs back from the dead-letter table as ready",
            ) in rows

    asyncio.run(go())


class BlockedSource(FixedBrowserSource):
    """A page read that waits until released, as a slow database would."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def page(self, query, start=None):
        assert self.release.wait(30)
        return super().page(query, start)


def test_a_slow_read_never_blocks_the_dashboard():
    async def go():
        source = BlockedSource()
        app = browser_app(source)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("b")
            await until(pilot, lambda: app.browser.loading)
            assert "reading…" in status(app)
            await pilot.press("2")  # the UI answers while the read waits
            assert app.query_one("TabbedContent").active == "tab-waiting"
            await pilot.press("question_mark")
            await until(pilot, lambda: app.screen.__class__.__name__ == "HelpScreen")
            await pilot.press("escape")
            source.release.set()
            await until(pilot, lambda: app.browser.loads == 1)
            assert not app.browser.loading and app.browser.table.row_count == PAGE_ROWS

    asyncio.run(go())


def test_the_palette_runs_the_browser_keys():
    async def go():
        app = browser_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            titles = {c.title for c in app.get_system_commands(app.screen)}
            assert {
                "Retry dead (job browser)",
                "Requeue (job browser)",
                "Filter (job browser)",
                "Jobs",
            } <= titles, titles
            await open_browser(pilot)
            await pilot.press("1")  # elsewhere: the command opens the browser itself
            await run_from_palette(pilot, app, "Next (job browser")
            await until(pilot, lambda: app.browser.loads >= 2 and len(app.browser.starts) == 2)
            assert app.query_one("TabbedContent").active == BROWSER_TAB

    asyncio.run(go())


def test_a_click_on_the_tab_reads_the_first_page_once():
    async def go():
        source = FixedBrowserSource()
        app = browser_app(source)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            assert source.reads == []  # nothing is read until the tab is shown
            await pilot.click("#--content-tab-tab-jobs")
            await until(pilot, lambda: app.browser.loads == 1)
            await pilot.press("1", "b")
            await pilot.pause()
            assert len(source.reads) == 1  # shown again: the page it has, not read again

    asyncio.run(go())
