"""The hostile-text matrix over every screen (Pilot): the hostile values planted in every
field (tests/hostile.py), real rows and real sessions; on each screen the characters the
terminal would get hold no control, the markup shows as text, no cell carries a click
action, and clicking the planted `Z` writes no file, the planted `Q` quits nothing."""

from __future__ import annotations

import argparse
import asyncio

import pytest
from helpers.pilot import until
from hostile import QUIT, TABLE_NAME, assert_inert, plant
from psycopg import sql
from rich.segment import Segment
from textual.widgets import Input

from dashboard import config, db
from dashboard.cli import main
from dashboard.cli.replay_command import replay_app
from dashboard.ui.app import QueuetopApp
from dashboard.ui.jobs_tab.screens import JobRowScreen
from dashboard.ui.screens.action_result import ActionResultScreen
from dashboard.ui.screens.audit import AuditScreen
from dashboard.ui.screens.confirm import ConfirmScreen
from dashboard.ui.screens.detail import DetailScreen
from dashboard.ui.screens.job_lookup import JobListScreen, JobLookupScreen
from dashboard.ui.screens.lab import LabScreen, default_runner
from dashboard.ui.widgets.unknowns_bar import UnknownsBar

SIZE = (160, 50)


@pytest.fixture
def hostile(dsn, connect, background, tmp_path, capsys):
    planted = plant(dsn, connect, background, tmp_path)
    capsys.readouterr()
    return planted


def hostile_spec(h):
    with db.connect_monitor(h.dsn) as conn:
        return config.validate(conn, config.load_file(h.spec_file))


def rendered(app) -> tuple[list[str], list[Segment]]:
    """What the terminal would get for the whole screen (modals over what is under them):
    its lines of characters, and every segment with its style."""
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    lines, segments = [], []
    for line in update.strips:
        text = []
        for strip in line:
            for segment in strip:
                segments.append(segment)
                text.append(segment.text)
        lines.append("".join(text))
    return lines, segments


def check(app, where: str, shows=()) -> list[str]:
    """The screen shows no control, the markup as text, and no click action of ours."""
    lines, segments = rendered(app)
    assert_inert("\n".join(lines), where, shows)
    actions = [
        s.style.meta["@click"]
        for s in segments
        if s.style is not None and s.style.meta and "@click" in s.style.meta
    ]
    planted = [a for a in actions if "screenshot" in str(a) or "quit" in str(a)]
    assert not planted, f"{where}: planted markup became click actions {planted}"
    return lines


async def click_each(pilot, lines: list[str], target: str, letter: str) -> int:
    """Click the `letter` of every `target` ('Z[/]') shown; how many were clicked."""
    clicked = 0
    for y, line in enumerate(lines):
        x = line.find(target)
        while x >= 0:
            await pilot.click(offset=(x + target.index(letter), y))
            await pilot.pause()
            clicked += 1
            x = line.find(target, x + 1)
    return clicked


async def opened(pilot, app, kind, key: str | None = None):
    if key is not None:
        await pilot.press(key)
    await until(pilot, lambda: isinstance(app.screen, kind))
    await pilot.pause()


async def closed(pilot, app, kind, key: str = "escape"):
    await pilot.press(key)
    await until(pilot, lambda: not isinstance(app.screen, kind))


def test_every_screen_of_the_dashboard(hostile):
    asyncio.run(_every_screen(hostile))


async def _every_screen(h):
    app = QueuetopApp(hostile_spec(h), h.dsn, interval=0.5)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await until(
            pilot,
            lambda: (
                h.stale_id in app.stale_table.items
                and app.table("waiting").count()
                and app.table("idle").row_count
                and app.recovery.reasons.get("requeue", "?") is None
            ),
        )
        # the status value no role claims, whole in the bar under the header
        await until(
            pilot,
            lambda: "which no role claims" in str(app.screen.query_one(UnknownsBar).render()),
        )
        await pilot.pause()
        # the header (the table's name), the state panel (groups, row-lock holders), the
        # locks tab, and the bar naming the status value no role claims
        lines = check(app, "main screen", shows=["[@click=app.quit]T[/]", MARKUP])
        assert await click_each(pilot, lines, "Z[/]", "Z") >= 1
        assert not h.pwned.exists() and not list(h.pwn_dir.iterdir())
        for tab in ("1", "2", "3", "4"):
            await pilot.press(tab)
            await pilot.pause()
            check(app, f"tab {tab}")
            await opened(pilot, app, DetailScreen, "enter")
            check(app, f"tab {tab}, a row in full", shows=["[@click="])
            await closed(pilot, app, DetailScreen)
        # the confirmation of a terminate: the session's name and its last query
        await pilot.press("3")
        await opened(pilot, app, ConfirmScreen, "T")
        check(app, "terminate confirmation", shows=["last query: SELECT", MARKUP])
        await closed(pilot, app, ConfirmScreen, "n")
        # requeue the stale lease whose text id holds markup: confirmation and result
        await pilot.press("4")
        await opened(pilot, app, ConfirmScreen, "R")
        check(app, "requeue confirmation", shows=[QUIT, "status: running -> ready"])
        await opened(pilot, app, ActionResultScreen, "enter")
        lines = check(app, "action result", shows=[QUIT])
        assert await click_each(pilot, lines, QUIT, "Q") >= 1
        assert app.is_running and isinstance(app.screen, ActionResultScreen)
        await closed(pilot, app, ActionResultScreen)
        # the audit trail: targets and reasons, a record whole
        await opened(pilot, app, AuditScreen, "A")
        await until(pilot, lambda: app.screen.loads >= 1)
        check(app, "audit", shows=[MARKUP])
        await opened(pilot, app, DetailScreen, "enter")
        check(app, "audit record", shows=[MARKUP])
        await closed(pilot, app, DetailScreen)
        await closed(pilot, app, AuditScreen)
        # the job browser (failed jobs first): the page, then a row whole and its title
        await pilot.press("b")
        await until(pilot, lambda: app.browser.loads >= 1 and app.browser.table.row_count)
        check(app, "job browser")
        await opened(pilot, app, JobRowScreen, "enter")
        check(app, "job row", shows=["Job [@click=app.quit]", MARKUP])
        await closed(pilot, app, JobRowScreen)
        # the look-up of a job by its (hostile) id, and the list it shows
        await pilot.press("4")
        await opened(pilot, app, JobLookupScreen, "j")
        app.screen.query_one(Input).value = h.lookup_id  # as a paste would put it
        await opened(pilot, app, JobListScreen, "enter")
        check(app, "job list", shows=["[@click=app.quit]L[/]", "w[@click="])
        await opened(pilot, app, ConfirmScreen, "D")
        check(app, "dead-letter confirmation", shows=["failed -> dead"])
        await closed(pilot, app, ConfirmScreen)
        await closed(pilot, app, JobListScreen)
        assert app.is_running
    assert not list(h.pwn_dir.iterdir())


MARKUP = "[@click=app.screenshot("


def test_the_replay_of_a_hostile_recording(hostile, tmp_path, capsys):
    h = hostile
    out = tmp_path / "r.qtr"
    assert main(["record", "--out", str(out), "--frames", "2", "--interval", "0.2",
                 "--dsn", h.dsn, "--queue", str(h.spec_file)]) == 0  # fmt: skip
    capsys.readouterr()
    app = replay_app(argparse.Namespace(file=str(out), at=None))

    async def go():
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await until(pilot, lambda: app.snapshot is not None)
            await pilot.pause()
            check(app, "replay", shows=["[@click=app.quit]T[/]"])
            await pilot.press("4")
            await opened(pilot, app, DetailScreen, "enter")
            check(app, "replay, a stale lease whole", shows=[MARKUP])
            await closed(pilot, app, DetailScreen)
            await opened(pilot, app, AuditScreen, "A")
            await until(pilot, lambda: app.screen.loads >= 1)
            check(app, "replay audit")

    try:
        asyncio.run(go())
    finally:
        app.replay.close()


def test_the_overview_of_queues_with_hostile_names(dsn, connect, capsys):
    from dashboard.cli import build_parser
    from dashboard.cli.discover_command import discovered
    from dashboard.discover.overview import Overview
    from dashboard.ui.overview import OverviewApp

    setup = connect(autocommit=True)
    # two schemas: discovery takes a second hand-rolled table in one schema for a part of
    # the first (discover/libraries.owned_by), which is not what this test is about
    for schema, name in (("app", TABLE_NAME), ("work", "tasks[@click=app.quit]O[/]\x1b]2;x\x07")):
        setup.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        table = sql.Identifier(schema, name).as_string(setup)
        setup.execute(
            f"CREATE TABLE {table} (id bigserial PRIMARY KEY, status text NOT NULL, "
            "worker_id text, started_at timestamptz, created_at timestamptz DEFAULT now())"
        )
        setup.execute(f"INSERT INTO {table} (status) VALUES ('pending'), ('running')")
    found = discovered(build_parser().parse_args(["watch", "--dsn", dsn]))
    assert found and len(found) == 2
    with db.connect_monitor(dsn) as conn:
        from dashboard.cli.discover_command import spec_of

        overview = Overview.open(conn, found, 0.5, spec_of(argparse.Namespace()))
    app = OverviewApp(overview, dsn, interval=0.5)

    async def go():
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await until(pilot, lambda: app.polls_applied >= 1)
            check(app, "overview", shows=["[@click=app.quit]T[/]", "[@click=app.quit]O[/]"])

    asyncio.run(go())


def test_the_lab_screen_shows_the_servers_hostile_error(dsn, connect):
    """The lab's error is the server's text: an event trigger refuses its DDL with the
    hostile text (event triggers need a superuser: the test server's role is one)."""
    from hostile import CONTROLS

    setup = connect(autocommit=True)
    if not setup.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[
        0
    ]:
        pytest.skip("an event trigger needs a superuser; QUEUETOP_TEST_DSN's role is none")
    message = QUIT + CONTROLS
    setup.execute(
        "CREATE FUNCTION refuse_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN "
        f"RAISE EXCEPTION USING MESSAGE = '{message}'; END $$"
    )
    setup.execute("CREATE EVENT TRIGGER refuse ON ddl_command_start EXECUTE FUNCTION refuse_ddl()")
    app = QueuetopApp(poll=False)

    async def go():
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            app.push_screen(LabScreen(default_runner(dsn, workers=1, seconds=0.5)))
            status = lambda: [str(w.render()) for w in app.screen.query("#lab-status")]  # noqa: E731
            await until(pilot, lambda: any("stopped" in line for line in status()))
            await pilot.pause()
            check(app, "lab", shows=[QUIT])

    asyncio.run(go())
