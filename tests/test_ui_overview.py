"""`queuetop watch --dsn DSN` on a database with several queues and none named: the overview
(one row per queue, its numbers equal to what the table holds), Enter opening the usual
dashboard on the queue under the cursor, Escape back to the overview, q out. Driven through
the CLI's own loop (watch_overview.run_discovered), each screen under a Pilot."""

from __future__ import annotations

import asyncio

from helpers.pilot import until

from dashboard.cli import build_parser
from dashboard.cli.discover_command import discovered
from dashboard.cli.watch_overview import run_discovered
from dashboard.discover.found import FoundQueue
from dashboard.models import TableName
from dashboard.ui.overview import BACK, DrillDownApp, OverviewApp

QUEUES = """
CREATE TABLE public.email_outbox (
    id bigserial PRIMARY KEY, status text NOT NULL, locked_at timestamptz, locked_by text,
    created_at timestamptz NOT NULL DEFAULT now());
INSERT INTO public.email_outbox (status, locked_at, locked_by, created_at) VALUES
    ('queued', NULL, NULL, now() - interval '90 seconds'), ('queued', NULL, NULL, now()),
    ('processing', now(), 'mailer-1', now()), ('done', now(), 'mailer-1', now());
CREATE SCHEMA work;
CREATE TABLE work.tasks (
    id bigserial PRIMARY KEY, state text NOT NULL, started_at timestamptz, worker_id text,
    created_at timestamptz DEFAULT now());
INSERT INTO work.tasks (state, started_at, worker_id) VALUES
    ('pending', NULL, NULL), ('running', now() - interval '2 hours', 'w1'),
    ('running', now(), 'w2');
"""


def cells(app: OverviewApp, key: str) -> list[str]:
    table = app.query_one("DataTable")
    return [str(c) for c in table.get_row(key)]


def test_overview_drills_down_and_comes_back(dsn, connect):
    conn = connect(autocommit=True)
    conn.execute(QUEUES)
    truth = {
        "public.email_outbox": conn.execute(
            "SELECT count(*) FILTER (WHERE status = 'queued'), "
            "count(*) FILTER (WHERE status = 'processing') FROM public.email_outbox"
        ).fetchone(),
        "work.tasks": conn.execute(
            "SELECT count(*) FILTER (WHERE state = 'pending'), "
            "count(*) FILTER (WHERE state = 'running') FROM work.tasks"
        ).fetchone(),
    }
    args = build_parser().parse_args(
        ["watch", "--dsn", dsn, "--interval", "0.5", "--stale-after", "1h"]
    )
    found = discovered(args)
    assert [str(f.table) for f in found] == ["public.email_outbox", "work.tasks"]
    ran: list[tuple[str, object]] = []

    async def drive(app) -> None:
        async with app.run_test(size=(140, 40)) as pilot:
            if isinstance(app, DrillDownApp):
                await until(pilot, lambda: app.snapshots_applied >= 1)
                assert str(app.spec.table) == "work.tasks"
                # the user's --stale-after reached the queue picked: its 2-hour job is stale
                assert sorted(app.stale_table.items) == ["2"]
                await pilot.press("escape")
            elif not any(kind == "DrillDownApp" for kind, _ in ran):
                await until(pilot, lambda: app.polls_applied >= 1)
                for index, (table, (ready, running)) in enumerate(truth.items()):
                    row = cells(app, str(index))
                    assert row[0] == table and (row[2], row[3]) == (str(ready), str(running))
                assert cells(app, "0")[4] != "-"  # the oldest ready job's age
                assert cells(app, "1")[5] == "1"  # one stale lease (started 2 hours ago)
                await pilot.press("down", "enter")
            else:
                await pilot.press("q")

    def run_app(app) -> int:
        asyncio.run(drive(app))
        ran.append((type(app).__name__, app.return_value))
        return app.return_code or 0

    assert run_discovered(args, found, run_app) == 0
    assert ran == [
        ("OverviewApp", 1),  # Enter on the second row
        ("DrillDownApp", BACK),  # Escape
        ("OverviewApp", None),  # q
    ]


def test_one_queue_found_opens_its_dashboard_directly(dsn, connect):
    connect(autocommit=True).execute(QUEUES.split("CREATE SCHEMA work;")[0])
    args = build_parser().parse_args(["watch", "--dsn", dsn, "--interval", "0.5"])
    found = discovered(args)
    opened = []

    def run_app(app) -> int:
        opened.append((type(app).__name__, str(app.spec.table)))
        return 0

    assert run_discovered(args, found, run_app) == 0
    assert opened == [("QueuetopApp", "public.email_outbox")]


def test_enter_on_a_queue_whose_spec_is_broken_stays_and_says_why(dsn, connect):
    # Enter on such a queue ended queuetop (the spec's error on the shell)
    connect(autocommit=True).execute(QUEUES)
    args = build_parser().parse_args(["watch", "--dsn", dsn, "--interval", "0.5"])
    found = discovered(args)
    # a queue dropped after discovery listed it: its spec cannot be validated
    gone = FoundQueue(TableName("gone_jobs", "public"), "high", flags=("--table", "gone_jobs"))
    found = [gone, *found]
    ran: list[tuple[str, object]] = []
    said: list[str] = []

    async def drive(app) -> None:
        async with app.run_test(size=(140, 40)) as pilot:
            await until(pilot, lambda: app.polls_applied >= 1)
            await pilot.press("enter")  # the broken one, under the cursor
            await pilot.pause()
            assert app.is_running and app.return_value is None
            said.extend(str(n.message) for n in app._notifications)
            await pilot.press("q")

    def run_app(app) -> int:
        asyncio.run(drive(app))
        ran.append((type(app).__name__, app.return_value))
        return app.return_code or 0

    assert run_discovered(args, found, run_app) == 0
    assert ran == [("OverviewApp", None)]
    assert len(said) == 1 and said[0].startswith("public.gone_jobs cannot be opened: ")
