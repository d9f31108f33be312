"""The dashboard against a real server: staged lock waits, idle transactions, stale leases."""

from __future__ import annotations

import asyncio

import psycopg
from helpers import is_waiting_on_lock, restart_elsewhere, wait_until
from helpers.pilot import until  # noqa: F401 (other test modules import it from here)

from dashboard import config, db
from dashboard.setup import schema
from dashboard.ui.app import QueuetopApp

INTERVAL = 0.2


def demo_spec(dsn: str):
    with db.connect_admin(dsn) as conn:
        schema.init_demo(conn)
    with db.connect_monitor(dsn) as conn:
        return config.validate(conn, config.load_preset("demo"))


async def within_refreshes(pilot, app, fn, refreshes: int = 2):
    """fn() holds after at most `refreshes` snapshots applied from now."""
    start = app.snapshots_applied
    await until(pilot, lambda: fn() or app.snapshots_applied >= start + refreshes)
    assert fn(), f"not shown within {refreshes} refreshes"


def add_stale(conn: psycopg.Connection, n: int, overdue_s: int, worker: str = "w-gone") -> list:
    rows = conn.execute(
        "INSERT INTO queuetop_demo.jobs (status, worker, lease_token, attempts, started_at,"
        " leased_until) SELECT 'running', %s, 1, 1, now() - make_interval(secs => %s + 60),"
        " now() - make_interval(secs => %s) FROM generate_series(1, %s) RETURNING id",
        (worker, overdue_s, overdue_s, n),
    ).fetchall()
    return [r[0] for r in rows]


def test_staged_wait_idle_and_stale_lease_appear(dsn, connect, background):
    asyncio.run(_staged_wait_idle_and_stale_lease_appear(dsn, connect, background))


async def _staged_wait_idle_and_stale_lease_appear(dsn, connect, background):
    spec = demo_spec(dsn)
    setup = connect(autocommit=True)
    (job,) = setup.execute("INSERT INTO queuetop_demo.jobs DEFAULT VALUES RETURNING id").fetchone()
    stale_ids = add_stale(setup, 1, 120)

    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.snapshots_applied >= 1)
        holder = connect(application_name="holder")
        holder.execute("SELECT id FROM queuetop_demo.jobs WHERE id = %s FOR UPDATE", (job,))
        holder_pid = holder.info.backend_pid
        waiter = connect(application_name="waiter")
        waiter_pid = waiter.info.backend_pid
        wait = background(
            lambda: waiter.execute(
                "SELECT id FROM queuetop_demo.jobs WHERE id = %s FOR UPDATE", (job,)
            )
        )
        wait_until(lambda: is_waiting_on_lock(setup, waiter_pid))

        await within_refreshes(pilot, app, lambda: f"s{waiter_pid}" in app.table("waiting").items)
        waiting = app.table("waiting")
        assert list(waiting.items)[:2] == [f"s{holder_pid}", f"s{waiter_pid}"]  # blocker, waiter
        assert f"p{holder_pid}" in app.table("idle").items
        assert str(stale_ids[0]) in app.table("stale").items
        assert any(key[0] == waiter_pid for key in app.table("locks").items)  # (pid, ...)
        holder.rollback()
        wait.join()
        waiter.rollback()
        await within_refreshes(pilot, app, lambda: not app.table("waiting").items)


def test_stale_lease_selection_survives_refreshes(dsn, connect):
    asyncio.run(_stale_lease_selection_survives_refreshes(dsn, connect))


async def _stale_lease_selection_survives_refreshes(dsn, connect):
    spec = demo_spec(dsn)
    setup = connect(autocommit=True)
    ids = add_stale(setup, 5, 300)
    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: len(app.table("stale").items) == 5)
        await pilot.press("4")
        table = app.stale_table
        assert app.focused is table
        await pilot.press("down", "down")
        chosen = table.cursor_key()
        await pilot.press("space")  # mark it; the cursor moves on
        await pilot.press("up")
        assert table.cursor_key() == chosen

        # other rows change: more overdue ones sort above it, another stops being stale
        newer = add_stale(setup, 3, 900, worker="w-older")
        other = next(i for i in ids if str(i) != chosen)
        setup.execute("UPDATE queuetop_demo.jobs SET status = 'done' WHERE id = %s", (other,))
        await until(pilot, lambda: str(newer[0]) in table.items and str(other) not in table.items)
        applied = app.snapshots_applied
        await until(pilot, lambda: app.snapshots_applied >= applied + 2)
        assert table.cursor_key() == chosen
        assert table.get_row_index(chosen) >= 3  # it moved down; the cursor followed
        assert app.selected_job_ids() == [int(chosen)]
        assert table.cell_text(chosen, "mark") == "●"


def test_pause_stops_polling(dsn):
    asyncio.run(_pause_stops_polling(dsn))


async def _pause_stops_polling(dsn):
    spec = demo_spec(dsn)
    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.snapshots_applied >= 3)
        # one poll at a time: each starts after the last one ended
        assert app.source.polls_started <= app.snapshots_applied + app.source.failures + 1
        await pilot.press("p")
        assert app.paused and app.link.kind == "paused"
        await until(pilot, lambda: not app.source.in_flight)  # a poll already running may land
        started, applied = app.source.polls_started, app.snapshots_applied
        await pilot.pause(6 * INTERVAL)
        assert (app.source.polls_started, app.snapshots_applied) == (started, applied)
        await pilot.press("p")
        await until(pilot, lambda: app.snapshots_applied > applied)
        assert app.link.kind in ("live", "slow")


def test_locked_queue_table_degrades_only_its_sections(dsn, connect, background):
    asyncio.run(_locked_queue_table_degrades_only_its_sections(dsn, connect, background))


async def _locked_queue_table_degrades_only_its_sections(dsn, connect, background):
    spec = demo_spec(dsn)
    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.snapshots_applied >= 1)
        locker = connect(application_name="migration")
        locker.execute("LOCK TABLE queuetop_demo.jobs IN ACCESS EXCLUSIVE MODE")
        locker_pid = locker.info.backend_pid
        await until(pilot, lambda: app.link.kind == "blocked")
        # the blocker is named, and the polls keep landing: only the table's sections wait
        assert f"pid {locker_pid} (migration, holds AccessExclusiveLock)" in app.link.reason
        applied = app.snapshots_applied
        await until(pilot, lambda: app.snapshots_applied >= applied + 3)
        assert app.source.failures == 0
        assert app.source.polls_started <= app.snapshots_applied + app.source.failures + 1
        sections = {s.name: s for s in app.snapshot.sections}
        assert sections["counts"].error and sections["locks"].error is None
        # the locks are read on every poll meanwhile: a session that starts waiting for the
        # table now (as pg_stat_activity says) is on screen while the counts still wait
        late = connect(application_name="late-reader")
        late_pid, watcher = late.info.backend_pid, connect(autocommit=True)
        waits = background(
            lambda: late.execute("LOCK TABLE queuetop_demo.jobs IN ACCESS SHARE MODE")
        )
        await asyncio.to_thread(wait_until, lambda: is_waiting_on_lock(watcher, late_pid))
        await until(
            pilot, lambda: any(lk.pid == late_pid and not lk.granted for lk in app.snapshot.locks)
        )
        assert {s.name: s for s in app.snapshot.sections}["counts"].error
        # the locker's own lock is in the (fresh) locks table
        assert any(
            lk.pid == locker_pid and lk.mode == "AccessExclusiveLock" for lk in app.snapshot.locks
        )
        await pilot.press("4")  # the UI answers while the table does not
        assert app.focused is app.stale_table
        locker.rollback()
        waits.join()
        late.rollback()
        await until(pilot, lambda: app.link.kind in ("live", "slow"), timeout=30)
        assert {s.name: s for s in app.snapshot.sections}["counts"].error is None


def test_disconnected_then_back_without_restart(tmp_path):
    asyncio.run(_disconnected_then_back_without_restart(tmp_path))


async def _disconnected_then_back_without_restart(tmp_path):
    pgdata = tmp_path / "pgdata"
    dsn = await asyncio.to_thread(db.start_embedded, pgdata)
    try:
        spec = await asyncio.to_thread(demo_spec, dsn)
        app = QueuetopApp(spec, dsn, interval=INTERVAL)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.snapshots_applied >= 1)
            assert app.link.kind in ("live", "slow")
            await asyncio.to_thread(db.stop_embedded, pgdata)
            await until(pilot, lambda: app.link.kind == "disconnected")
            assert app.link.detail.startswith("retrying in") and app.link.reason
            header = str(app.query_one("#status").render())
            assert "disconnected, retrying in" in header and "last data" in header
            applied = app.snapshots_applied
            await asyncio.to_thread(restart_elsewhere, pgdata)
            await until(pilot, lambda: app.snapshots_applied > applied, timeout=40)
            assert app.link.kind in ("live", "slow")
            assert app.source.failures == 0
    finally:
        await asyncio.to_thread(db.stop_embedded, pgdata)


def test_retry_countdown_ticks_while_the_server_is_away(dsn):
    asyncio.run(_retry_countdown_ticks_while_the_server_is_away(dsn))


async def _retry_countdown_ticks_while_the_server_is_away(dsn):
    spec = await asyncio.to_thread(demo_spec, dsn)
    # nothing listens on port 1: every poll fails at once; backoff 2 s, 4 s, then 5 s
    app = QueuetopApp(spec, "postgresql://127.0.0.1:1/none?connect_timeout=2", interval=2.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.link.kind == "disconnected")
        details = set()
        # a frozen header would only ever say 2s, 4s or 5s
        await until(pilot, lambda: details.add(app.link.detail) or "retrying in 1s" in details)
        await pilot.press("p")
        assert app.link.kind == "paused" and not app.source.retrying
