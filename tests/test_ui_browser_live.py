"""The job browser against a real server: paging 100k jobs one statement a page, acting on
marked rows, retry from the dead-letter table from the browser and from `j`."""

from __future__ import annotations

import asyncio
from contextlib import closing

from demo_queue import audit_rows, job
from test_browse_pages import CountingCursor, _fill
from test_ui_live import INTERVAL, add_stale, demo_spec, until

from dashboard import db
from dashboard.browse.source import DatabaseSource
from dashboard.ui.app import QueuetopApp
from dashboard.ui.screens.action_result import ActionResultScreen
from dashboard.ui.screens.confirm import ConfirmScreen
from dashboard.ui.screens.job_lookup import JobListScreen, JobLookupScreen


class CountingSource(DatabaseSource):
    """The dashboard's own source, its statements counted per page read."""

    def __init__(self, dsn, spec):
        super().__init__(dsn, spec)
        self.per_page: list[int] = []

    def page(self, query, start=None):
        with closing(db.connect_monitor(self.dsn, timeout_ms=self.timeout_ms)) as conn:
            conn.cursor_factory = CountingCursor
            CountingCursor.executed = []
            page = self.reader.read(conn, query, start)
            self.per_page.append(len(CountingCursor.executed))
            return page


def screen_text(screen) -> str:
    return "\n".join(str(w.render()) for w in screen.query("Static"))


async def ready(pilot, app) -> None:
    await until(
        pilot, lambda: app.snapshots_applied and app.recovery.reasons.get("requeue", "?") is None
    )


def test_paging_100k_jobs_is_one_statement_a_page(dsn, connect):
    async def go():
        spec = demo_spec(dsn)
        setup = connect(autocommit=True)
        _fill(setup, 100_000)
        setup.execute("VACUUM ANALYZE queuetop_demo.jobs")
        source = CountingSource(dsn, spec)
        app = QueuetopApp(spec, dsn, interval=INTERVAL, browser_source=source)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("b")
            browser = app.browser
            await until(pilot, lambda: browser.loads == 1)
            for n in range(2, 6):
                await pilot.press("right_square_bracket")
                await until(pilot, lambda n=n: browser.loads == n)
            table = browser.table
            assert table.cell_text(table.cursor_key(), "id") == str(100_000 - 4 * 100)
            assert source.per_page == [1] * 5
            await pilot.press("left_square_bracket")
            await until(pilot, lambda: browser.loads == 6)
            assert table.cell_text(table.cursor_key(), "id") == str(100_000 - 3 * 100)

    asyncio.run(go())


def test_requeue_marked_failed_jobs_from_the_browser(dsn, connect):
    async def go():
        spec = demo_spec(dsn)
        setup = connect(autocommit=True)
        _fill(setup, 5)
        app = QueuetopApp(spec, dsn, interval=INTERVAL)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot, app)
            await pilot.press("b")
            browser = app.browser
            await until(pilot, lambda: browser.loads == 1)
            assert list(browser.table.items) == [f"queue:{i}" for i in (5, 4, 3, 2, 1)]
            await pilot.press("space", "space", "R")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            assert app.screen.query_one("#confirm-body").border_title == "Requeue 2 jobs?"
            assert "2 jobs: 5, 4" in screen_text(app.screen)
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, ActionResultScreen))
            assert app.screen.result.changed == ("5", "4")
            await until(pilot, lambda: browser.loads == 2)  # the page, read again
            assert list(browser.table.items) == [f"queue:{i}" for i in (3, 2, 1)]
        assert (job(setup, 5)["status"], job(setup, 4)["status"]) == ("ready", "ready")
        assert sorted((r["action"], r["target"]) for r in audit_rows(setup)) == [
            ("requeue", "4"),
            ("requeue", "5"),
        ]

    asyncio.run(go())


def test_retry_from_the_dead_letter_table_in_the_browser(dsn, connect):
    async def go():
        spec = demo_spec(dsn)
        setup = connect(autocommit=True)
        [moved, kept] = add_stale(setup, 2, 120)
        setup.execute(
            "WITH m AS (DELETE FROM queuetop_demo.jobs WHERE id IN (%s, %s) "
            "RETURNING *) INSERT INTO queuetop_demo.jobs_dead SELECT *, 'poison' "
            "FROM m",
            (moved, kept),
        )
        app = QueuetopApp(spec, dsn, interval=INTERVAL)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot, app)
            await pilot.press("b")
            browser = app.browser
            await until(pilot, lambda: browser.loads == 1)
            # no failed job: it opens on the first role that has jobs, the dead-letter table's
            assert browser.query.role == "dead"
            table = browser.table
            assert [table.cell_text(k, "state") for k in table.items] == ["dead-letter"] * 2
            assert table.cell_text(f"dead-letter table:{kept}", "error") == "poison"
            await pilot.press("down", "R")  # not a requeue: it is not in the queue
            assert not isinstance(app.screen, ConfirmScreen)
            await pilot.press("Y")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            title = app.screen.query_one("#confirm-body").border_title
            assert title == "Retry 1 job from the dead-letter table?"
            assert "moved from queuetop_demo.jobs_dead back into queuetop_demo.jobs" in screen_text(
                app.screen
            )
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, ActionResultScreen))
            assert app.screen.result.changed == (str(moved),)
            await until(pilot, lambda: browser.loads == 2)
            assert list(table.items) == [f"dead-letter table:{kept}"]
        back = job(setup, moved)
        assert (back["status"], back["worker"], back["lease_token"]) == ("ready", None, 2)
        [row] = audit_rows(setup)
        assert (row["action"], row["target"], row["to_state"]) == (
            "retry-dead",
            str(moved),
            "ready",
        )

    asyncio.run(go())


def test_j_finds_a_moved_job_in_the_dead_table_and_offers_the_retry(dsn, connect):
    async def go():
        spec = demo_spec(dsn)
        setup = connect(autocommit=True)
        [moved] = add_stale(setup, 1, 120)
        setup.execute(
            "WITH m AS (DELETE FROM queuetop_demo.jobs WHERE id = %s RETURNING *) "
            "INSERT INTO queuetop_demo.jobs_dead SELECT *, 'poison' FROM m",
            (moved,),
        )
        app = QueuetopApp(spec, dsn, interval=INTERVAL)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot, app)
            await pilot.press("j")
            await until(pilot, lambda: isinstance(app.screen, JobLookupScreen))
            await pilot.press(*f"{moved} 424242", "enter")
            await until(pilot, lambda: isinstance(app.screen, JobListScreen))
            text = screen_text(app.screen)
            assert "already dead-lettered: in queuetop_demo.jobs_dead" in text
            assert "424242  not found" in text
            assert (
                "Y retry from the dead-letter table"
                in app.screen.query_one("#joblist-body").border_subtitle
            )
            await pilot.press("Y")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, ActionResultScreen))
            assert app.screen.result.changed == (str(moved),)
        assert job(setup, moved)["status"] == "ready"

    asyncio.run(go())


def test_a_read_the_table_lock_holds_up_says_so_and_the_dashboard_goes_on(dsn, connect):
    async def go():
        spec = demo_spec(dsn)
        setup = connect(autocommit=True)
        _fill(setup, 3)
        locker = connect(application_name="migration")
        app = QueuetopApp(
            spec, dsn, interval=INTERVAL, browser_source=DatabaseSource(dsn, spec, timeout_ms=300)
        )
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.snapshots_applied)
            locker.execute("LOCK TABLE queuetop_demo.jobs IN ACCESS EXCLUSIVE MODE")
            await pilot.press("b")
            await until(pilot, lambda: app.browser.error)
            assert "lock timeout" in app.browser.error
            assert "lock timeout" in str(app.query_one("#browser-status").render())
            locker.rollback()
            await pilot.press("r")
            await until(pilot, lambda: app.browser.loads == 1 and not app.browser.error)
            assert app.browser.table.row_count == 3

    asyncio.run(go())
