"""Recovery from the dashboard against a real server: confirm, act, see the tables catch up."""

from __future__ import annotations

import asyncio

import psycopg
import pytest
from demo_queue import audit_rows, claim, job
from test_ui_live import INTERVAL, add_stale, demo_spec, until, within_refreshes

from dashboard.ui.app import QueuetopApp
from dashboard.ui.screens.action_result import ActionResultScreen
from dashboard.ui.screens.confirm import ConfirmScreen
from dashboard.ui.screens.job_lookup import JobListScreen, JobLookupScreen


def screen_text(screen) -> str:
    """Everything the modal shows, as plain text."""
    return "\n".join(str(w.render()) for w in screen.query("Static"))


def notices(app) -> str:
    return "\n".join(str(n.message) for n in app._notifications)


async def ready(pilot, app, stale: int = 0) -> None:
    """Wait for the first snapshots and the capability check, then focus the stale leases."""
    await until(pilot, lambda: len(app.stale_table.items) >= stale and app.snapshots_applied)
    await until(pilot, lambda: app.read_only or app.recovery.reasons.get("requeue", "?") is None)
    await pilot.press("4")


def test_requeue_a_marked_stale_lease(dsn, connect):
    asyncio.run(_requeue_a_marked_stale_lease(dsn, connect))


async def _requeue_a_marked_stale_lease(dsn, connect):
    spec = demo_spec(dsn)
    setup = connect(autocommit=True)
    [job_id] = add_stale(setup, 1, 120)
    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app, stale=1)
        await pilot.press("space", "R")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        text = screen_text(app.screen)
        assert "Requeue 1 job?" == app.screen.query_one("#confirm-body").border_title
        for shown in (
            str(job_id),
            "running",
            "w-gone",
            "token 1",
            "overdue 2m",
            "lease token (lease_token) advances",
            "skipped",
        ):
            assert shown in text, shown
        # the audit records a reason: the modal asks for one (optional here; it said
        # "your reason" and never asked)
        await pilot.press("tab", *"night shift", "enter")
        await until(pilot, lambda: isinstance(app.screen, ActionResultScreen))
        assert app.screen.result.changed == (str(job_id),)
        await within_refreshes(pilot, app, lambda: str(job_id) not in app.stale_table.items)
        await pilot.press("escape")
        assert not isinstance(app.screen, ActionResultScreen)
    after = job(setup, job_id)
    assert (after["status"], after["worker"], after["lease_token"]) == ("ready", None, 2)
    [row] = audit_rows(setup)
    assert (row["action"], row["target"], row["outcome"]) == ("requeue", str(job_id), "changed")
    assert row["reason"] == "night shift"


def test_select_all_states_the_count_and_escape_changes_nothing(dsn, connect):
    asyncio.run(_select_all_states_the_count_and_escape_changes_nothing(dsn, connect))


async def _select_all_states_the_count_and_escape_changes_nothing(dsn, connect):
    spec = demo_spec(dsn)
    setup = connect(autocommit=True)
    ids = add_stale(setup, 3, 300)
    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app, stale=3)
        await pilot.press("a", "R")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert app.screen.query_one("#confirm-body").border_title == "Requeue 3 jobs?"
        assert "3 jobs (all 3 stale leases shown)" in screen_text(app.screen)
        await pilot.press("escape")
        assert not isinstance(app.screen, ConfirmScreen)
        applied = app.snapshots_applied
        await until(pilot, lambda: app.snapshots_applied >= applied + 2)
        assert sorted(app.stale_table.items) == sorted(map(str, ids))
    assert {job(setup, i)["status"] for i in ids} == {"running"}
    assert audit_rows(setup) == []


def test_read_only_refuses_with_the_reason(dsn, connect):
    asyncio.run(_read_only_refuses_with_the_reason(dsn, connect))


async def _read_only_refuses_with_the_reason(dsn, connect):
    spec = demo_spec(dsn)
    setup = connect(autocommit=True)
    [job_id] = add_stale(setup, 1, 120)
    app = QueuetopApp(spec, dsn, interval=INTERVAL, read_only=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app, stale=1)
        await pilot.press("R")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        assert "read-only mode" in notices(app)
        assert "read-only" in str(app.query_one("#status").render())
        await pilot.press("question_mark")
        assert "requeue: disabled: read-only mode" in screen_text(app.screen)
    assert job(setup, job_id)["status"] == "running"
    assert audit_rows(setup) == []


def test_dead_letter_asks_for_a_reason_and_moves_the_job(dsn, connect):
    asyncio.run(_dead_letter_asks_for_a_reason_and_moves_the_job(dsn, connect))


async def _dead_letter_asks_for_a_reason_and_moves_the_job(dsn, connect):
    spec = demo_spec(dsn)
    setup = connect(autocommit=True)
    [job_id] = add_stale(setup, 1, 120)
    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app, stale=1)
        await pilot.press("D")  # nothing marked: the row under the cursor
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "moved to queuetop_demo.jobs_dead" in screen_text(app.screen)
        await pilot.press("enter")  # no reason yet: refused, the modal stays
        assert isinstance(app.screen, ConfirmScreen) and "reason is required" in notices(app)
        await pilot.press(*"poison payload", "enter")
        await until(pilot, lambda: isinstance(app.screen, ActionResultScreen))
        await within_refreshes(pilot, app, lambda: str(job_id) not in app.stale_table.items)
    assert job(setup, job_id) is None
    dead = setup.execute(
        "SELECT status, dead_reason FROM queuetop_demo.jobs_dead WHERE id = %s", (job_id,)
    ).fetchone()
    assert dead == ("running", "poison payload")


def test_terminate_the_idle_transaction_under_the_cursor(dsn, connect):
    asyncio.run(_terminate_the_idle_transaction_under_the_cursor(dsn, connect))


async def _terminate_the_idle_transaction_under_the_cursor(dsn, connect):
    spec = demo_spec(dsn)
    setup = connect(autocommit=True)
    idle = connect(application_name="forgot-to-commit")
    idle.execute("SELECT count(*) FROM queuetop_demo.jobs")  # a transaction left open
    pid = idle.info.backend_pid
    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app)
        await within_refreshes(pilot, app, lambda: f"p{pid}" in app.table("idle").items)
        await pilot.press("3")
        assert app.table("idle").cursor_key() == f"p{pid}"
        await pilot.press("T")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        text = screen_text(app.screen)
        assert f"pid {pid}" in text and "forgot-to-commit" in text and "rolls back" in text
        await pilot.press("y")
        await until(pilot, lambda: isinstance(app.screen, ActionResultScreen))
        assert app.screen.result.changed == (str(pid),)
        await within_refreshes(pilot, app, lambda: f"p{pid}" not in app.table("idle").items)
    gone = setup.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (pid,))
    assert gone.fetchone()[0] == 0
    assert [(r["action"], r["target"]) for r in audit_rows(setup)] == [("terminate", str(pid))]


def test_look_up_a_live_job_and_force_requeue_it(dsn, connect):
    asyncio.run(_look_up_a_live_job_and_force_requeue_it(dsn, connect))


async def _look_up_a_live_job_and_force_requeue_it(dsn, connect):
    spec = demo_spec(dsn)
    setup = connect(autocommit=True)
    setup.execute("INSERT INTO queuetop_demo.jobs DEFAULT VALUES")
    job_id, token = claim(setup, "w-slow", lease_s=600)  # alive as far as anyone knows
    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app)
        await pilot.press("j")
        await until(pilot, lambda: isinstance(app.screen, JobLookupScreen))
        await pilot.press(*f"{job_id}, 999999", "enter")
        await until(pilot, lambda: isinstance(app.screen, JobListScreen))
        text = screen_text(app.screen)
        assert "w-slow" in text and "lease ends in" in text and "999999" in text
        await pilot.press("F")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert app.screen.query_one("#confirm-body").border_title == "Force requeue 1 job?"
        assert "FORCE: 1 of these leases have not expired" in screen_text(app.screen)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ActionResultScreen))
    after = job(setup, job_id)
    assert (after["status"], after["lease_token"]) == ("ready", token + 1)


def test_without_an_audit_trail_actions_are_off_until_an_audit_file_is_given(
    dsn, connect, tmp_path
):
    asyncio.run(_without_an_audit_trail(dsn, connect, tmp_path))


async def _without_an_audit_trail(dsn, connect, tmp_path):
    spec = demo_spec(dsn)
    setup = connect(autocommit=True)
    setup.execute("DROP TABLE queuetop.audit_log")
    [job_id] = add_stale(setup, 1, 120)
    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(
            pilot,
            lambda: (
                app.snapshots_applied
                and app.recovery.reasons["requeue"]
                not in (None, "still checking permissions; try again in a moment")
            ),
        )
        assert "actions off" in str(app.query_one("#status").render())
        await pilot.press("4", "R")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        assert "no audit trail" in notices(app) and "--audit-file" in notices(app)
    assert job(setup, job_id)["status"] == "running"

    trail = tmp_path / "audit.jsonl"
    app = QueuetopApp(spec, dsn, interval=INTERVAL, audit_file=str(trail))
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app, stale=1)
        await pilot.press("R", "y")
        await until(pilot, lambda: isinstance(app.screen, ActionResultScreen))
    assert job(setup, job_id)["status"] == "ready"
    assert '"action": "requeue"' in trail.read_text() and '"committed"' in trail.read_text()


def test_cancel_the_waiting_session_under_the_cursor(dsn, connect, background):
    asyncio.run(_cancel_the_waiting_session_under_the_cursor(dsn, connect, background))


async def _cancel_the_waiting_session_under_the_cursor(dsn, connect, background):
    spec = demo_spec(dsn)
    setup = connect(autocommit=True)
    (row,) = setup.execute("INSERT INTO queuetop_demo.jobs DEFAULT VALUES RETURNING id").fetchone()
    holder = connect(application_name="holder")
    holder.execute("SELECT id FROM queuetop_demo.jobs WHERE id = %s FOR UPDATE", (row,))
    waiter = connect(application_name="stuck-waiter")
    pid = waiter.info.backend_pid
    wait = background(
        lambda: waiter.execute("SELECT id FROM queuetop_demo.jobs WHERE id = %s FOR UPDATE", (row,))
    )
    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app)
        await until(pilot, lambda: f"s{pid}" in app.table("waiting").items)
        await pilot.press("2", "down")  # the blocker first, its waiter below
        assert app.table("waiting").cursor_key() == f"s{pid}"
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert app.screen.query_one("#confirm-body").border_title == f"Cancel backend {pid}?"
        assert "stuck-waiter" in screen_text(app.screen)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ActionResultScreen))
        assert app.screen.result.changed == (str(pid),)
    with pytest.raises(psycopg.errors.QueryCanceled):
        wait.join()
    holder.rollback()
