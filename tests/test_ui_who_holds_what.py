"""Who holds what, on screen: the locks, waiting and idle tables name the jobs a session
holds row-locked or waits for, and a row lock reads as a row lock; and the stale-lease tab
says in full when the spec cannot tell a stale lease (`watch --table` without a lease)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from demo_queue import setup_demo
from helpers import is_waiting_on_lock, wait_until
from test_ui_live import INTERVAL, until
from ui_snapshots import T0, demo_spec, fixed_history, fixed_snapshot

from dashboard.cli import build_parser
from dashboard.cli.watch_commands import watch_app
from dashboard.models import LockInfo, RowLockHolder
from dashboard.render.who_holds import describe_lock, jobs_text
from dashboard.ui.app import QueuetopApp


def cells(table, key) -> dict[str, str]:
    index = table.get_row_index(key)
    return dict(zip([c.key for c in table.COLUMNS], table.row_texts(index), strict=True))


def test_holders_and_waiters_name_their_jobs_on_screen(dsn, connect, background):
    async def go():
        spec = setup_demo(dsn, jobs=4)
        holder = connect(application_name="holder")
        holder.execute("SELECT id FROM queuetop_demo.jobs WHERE id IN (1, 2) FOR UPDATE")
        waiter = connect(application_name="waiter")
        wait = background(
            lambda: waiter.execute(
                "SELECT id FROM queuetop_demo.jobs WHERE id = 2 FOR UPDATE"
            ).fetchall()
        )
        wait_until(lambda: is_waiting_on_lock(holder, waiter.info.backend_pid))
        hpid, wpid = holder.info.backend_pid, waiter.info.backend_pid
        app = QueuetopApp(spec, dsn, interval=INTERVAL)
        async with app.run_test(size=(160, 40)) as pilot:
            waiting, idle, locks = app.table("waiting"), app.table("idle"), app.table("locks")
            await until(
                pilot,
                lambda: f"s{wpid}" in waiting.items and any(k[1] == "rows" for k in locks.items),
            )
            assert cells(waiting, f"s{wpid}")["jobs"] == "waits 2"
            assert cells(waiting, f"s{hpid}")["jobs"] == "holds 1,2"
            assert cells(idle, f"p{hpid}")["jobs"] == "1,2"
            shown = {k: cells(locks, k) for k in locks.items}
            [row] = [c for k, c in shown.items() if k[0] == wpid and k[1] == "tuple"]
            assert (row["mode"], row["type"], row["relation"], row["granted"]) == (
                "wants FOR UPDATE",
                "row queue",
                "queued for job 2",
                "first",
            )  # a place in the row's queue: neither "AccessExclusive app.jobs" nor a holder
            [xact] = [c for k, c in shown.items() if k[0] == wpid and k[1] == "transactionid"]
            assert (xact["granted"], xact["relation"]) == ("WAIT", "holder of job 2")
            [held] = [c for k, c in shown.items() if k[0] == hpid and k[1] == "rows"]
            assert (held["type"], held["relation"], held["n"]) == ("row locks", "jobs 1,2", "2")
        holder.rollback()
        wait.join()

    asyncio.run(go())


def test_a_row_lock_reads_as_one():
    lock = LockInfo(
        pid=7,
        backend_start=T0,
        application_name="w",
        locktype="tuple",
        mode="AccessExclusiveLock",
        granted=False,
        relation="app.jobs",
        on_queue_table=True,
        wait_s=3.0,
        state="active",
        query="SELECT …",
        page=0,
        tuple_index=5,
        job_id="42",
    )
    assert describe_lock(lock) == "queued for job 42 (wants FOR UPDATE, waiting behind the first)"
    assert (
        describe_lock(replace(lock, mode="ExclusiveLock", job_id=None, granted=True))
        == "queued for row (0,5) of app.jobs (wants FOR NO KEY UPDATE, first in line)"
    )
    table_lock = replace(lock, locktype="relation", mode="RowExclusiveLock")
    assert describe_lock(table_lock) == "RowExclusive lock on app.jobs"
    assert jobs_text(("1", "2", "3"), 3) == "1,2,3"
    assert jobs_text(("10001", "10002", "10003"), 40) == "10001 +39"
    assert jobs_text(("123456789012345",), 1) == "1 rows"

    async def go():
        snap = fixed_snapshot(rows=3)
        snap = replace(
            snap,
            locks=(lock,),
            row_lock_holders=(RowLockHolder(4200, "ready", 2, "psql", ("8", "9")),),
            held_jobs={4200: ("8", "9")},
        )
        app = QueuetopApp(demo_spec(), None, poll=False, snapshots=[snap])
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            locks = app.table("locks")
            row = cells(locks, next(k for k in locks.items if k[0] == 7))
            assert (row["mode"], row["granted"]) == ("wants FOR UPDATE", "WAIT")
            assert cells(app.table("idle"), "p4200")["jobs"] == "8,9"

    asyncio.run(go())


TABLE = """
CREATE TABLE jobs (id bigserial PRIMARY KEY, status text NOT NULL, started_at timestamptz,
                   worker_id text);
INSERT INTO jobs (status, started_at, worker_id)
VALUES ('running', now() - interval '2 hours', 'w-1'), ('running', now(), 'w-2'),
       ('ready', NULL, NULL);
"""


def _watch(dsn: str, *flags: str) -> QueuetopApp:
    args = build_parser().parse_args(["watch", "--dsn", dsn, "--interval", str(INTERVAL), *flags])
    return watch_app(args)


def test_watch_table_finds_started_at_and_shows_the_stale_job(dsn, connect):
    """Fix 1: `watch --table T --stale-after D` on a table with started_at and a job running
    for 2 h shows it stale (it showed `Stale leases 0`)."""
    connect(autocommit=True).execute(TABLE)

    async def stale_ids(*flags: str) -> list[str]:
        app = _watch(dsn, "--table", "jobs", *flags)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.snapshots_applied >= 2)
            assert not app.query("#stale-unknown")
            return sorted(app.stale_table.items)

    assert asyncio.run(stale_ids("--stale-after", "1h")) == ["1"]
    assert asyncio.run(stale_ids("--stale-after", "3h")) == []  # the flag is what decides


def test_the_stale_tab_says_in_full_when_stale_leases_cannot_be_known(dsn, connect):
    connect(autocommit=True).execute(
        # `touched` says nothing of a claim (a `claimed` column would be understood as one)
        "CREATE TABLE jobs (id bigserial PRIMARY KEY, status text NOT NULL, "
        "touched timestamptz, worker_id text); INSERT INTO jobs (status, touched) "
        "VALUES ('running', now() - interval '2 hours')"
    )

    async def go():
        app = _watch(dsn, "--table", "jobs", "--stale-after", "1h")
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.snapshots_applied >= 1)
            await pilot.press("4")
            text = str(app.query_one("#stale-unknown").render())
            assert app.query_one("#stale-unknown").region.height >= 4  # in sight, not cut
            assert "STALE LEASES CANNOT BE COMPUTED for public.jobs" in text
            assert "--started-at-column COLUMN" in text and "--lease-until-column" in text
            assert "Timestamp columns of public.jobs: touched" in text
            assert (
                app.query_one("TabbedContent")
                .get_tab("tab-stale")
                .label_text.startswith("Stale leases ?")
            )
        app = _watch(
            dsn, "--table", "jobs", "--stale-after", "1h", "--started-at-column", "touched"
        )
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.stale_table.items)
            assert not app.query("#stale-unknown")

    asyncio.run(go())


def test_fixed_history_has_no_stale_unknown_message():
    async def go():
        app = QueuetopApp(demo_spec(), None, poll=False, snapshots=fixed_history())
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            return bool(app.query("#stale-unknown"))

    assert asyncio.run(go()) is False
