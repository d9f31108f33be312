"""Job look-up (`j`) on a real server: a typo keeps the dialog, a pointless action is not asked."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from demo_queue import audit_rows, claim, job
from test_ui_live import INTERVAL, demo_spec, until
from test_ui_recovery import notices, ready, screen_text

from dashboard import config, db
from dashboard.actions import ObservedJob, foresee, job_id_problem
from dashboard.ui.app import QueuetopApp
from dashboard.ui.screens.action_result import ActionResultScreen
from dashboard.ui.screens.confirm import ConfirmScreen
from dashboard.ui.screens.job_lookup import JobListScreen, JobLookupScreen


def add_job(conn, status: str) -> int:
    return conn.execute(
        "INSERT INTO queuetop_demo.jobs (status) VALUES (%s) RETURNING id", (status,)
    ).fetchone()[0]


def spy_lookups(app) -> list:
    """The ids of every look-up the app starts (it still runs, against the server)."""
    calls: list = []
    observe = app.recovery.observe

    def counted(ids):
        calls.append(ids)
        return observe(ids)

    app.recovery.observe = counted
    return calls


def error_line(screen) -> str:
    line = screen.query_one("#lookup-error")
    return str(line.render()) if line.display else ""


async def look_up(pilot, app, text: str) -> None:
    await pilot.press("j")
    await until(pilot, lambda: isinstance(app.screen, JobLookupScreen))
    await pilot.press(*text, "enter")


# --- a bad token keeps the dialog, with the input and an error line --------------------------


def test_a_bad_id_keeps_the_dialog_open_and_looks_nothing_up(dsn, connect):
    asyncio.run(_a_bad_id_keeps_the_dialog_open(dsn, connect))


async def _a_bad_id_keeps_the_dialog_open(dsn, connect):
    spec = demo_spec(dsn)
    job_id = add_job(connect(autocommit=True), "failed")
    typed = f"{job_id}, 999999 abc"
    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    lookups = spy_lookups(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app)
        await look_up(pilot, app, typed)
        await pilot.pause()
        assert isinstance(app.screen, JobLookupScreen)
        assert app.screen.query_one("#lookup-ids").value == typed
        error = error_line(app.screen)
        assert "'abc' (not a whole number)" in error and "bigint" in error, error
        assert str(job_id) not in error and "999999" not in error
        assert lookups == [] and "look-up failed" not in notices(app)

        await pilot.press("backspace", "backspace", "backspace")  # the error follows the edit
        assert error_line(app.screen) == ""
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, JobListScreen))
        assert lookups == [[str(job_id), "999999"]]
        text = screen_text(app.screen)
        assert str(job_id) in text and "999999  not found" in text


def test_an_id_the_server_refuses_reopens_the_dialog(dsn, connect):
    asyncio.run(_an_id_the_server_refuses_reopens_the_dialog(dsn, connect))


async def _an_id_the_server_refuses_reopens_the_dialog(dsn, connect):
    # a date id is not checked before the look-up: the server's refusal comes back the same way
    setup = connect(autocommit=True)
    setup.execute("CREATE TABLE dated (day date PRIMARY KEY, status text NOT NULL)")
    setup.execute("INSERT INTO dated VALUES ('2026-01-02', 'ready')")
    raw = config.spec_from_dict(
        {
            "queue": {
                "table": "dated",
                "id": "day",
                "states": {"ready": "ready", "running": "running"},
            }
        },
        "test",
    )
    with db.connect_monitor(dsn) as conn:
        spec = config.validate(conn, raw)
    app = QueuetopApp(spec, dsn, interval=INTERVAL, read_only=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.snapshots_applied)
        await look_up(pilot, app, "2026-01-02 someday")
        await until(
            pilot, lambda: isinstance(app.screen, JobLookupScreen) and error_line(app.screen)
        )
        assert app.screen.query_one("#lookup-ids").value == "2026-01-02 someday"
        assert "bad job id" in error_line(app.screen) and "someday" in error_line(app.screen)
        await pilot.press(*["backspace"] * len(" someday"), "enter")
        await until(pilot, lambda: isinstance(app.screen, JobListScreen))
        assert "1 job(s) found, 0 not found" in app.screen.query_one("#joblist-body").border_title


# --- the action is not asked when it would change nothing --------------------------------------


def test_requeue_of_a_done_job_is_not_asked(dsn, connect):
    asyncio.run(_requeue_of_a_done_job_is_not_asked(dsn, connect))


async def _requeue_of_a_done_job_is_not_asked(dsn, connect):
    spec = demo_spec(dsn)
    setup = connect(autocommit=True)
    done_id = add_job(setup, "done")
    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app)
        await look_up(pilot, app, str(done_id))
        await until(pilot, lambda: isinstance(app.screen, JobListScreen))
        for key in ("R", "F", "D"):
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, JobListScreen), key  # no question, the list stays
        titles = [n.title for n in app._notifications]
        assert {
            "requeue: nothing to change",
            "force requeue: nothing to change",
            "dead-letter: nothing to change",
        } <= set(titles)
        assert f"{done_id}: already done" in notices(app)
    assert job(setup, done_id)["status"] == "done"
    assert audit_rows(setup) == []


def test_a_live_lease_says_f_forces_it(dsn, connect):
    asyncio.run(_a_live_lease_says_f_forces_it(dsn, connect))


async def _a_live_lease_says_f_forces_it(dsn, connect):
    spec = demo_spec(dsn)
    setup = connect(autocommit=True)
    add_job(setup, "ready")
    job_id, _ = claim(setup, "w-busy", lease_s=600)
    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app)
        await look_up(pilot, app, str(job_id))
        await until(pilot, lambda: isinstance(app.screen, JobListScreen))
        await pilot.press("R")
        await pilot.pause()
        assert isinstance(app.screen, JobListScreen)
        assert f"{job_id}: lease not expired (F forces a requeue)" in notices(app)
        await pilot.press("F")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert app.screen.query_one("#confirm-body").border_title == "Force requeue 1 job?"


def test_mixed_choice_names_the_left_out_and_acts_on_the_rest(dsn, connect):
    asyncio.run(_mixed_choice_names_the_left_out(dsn, connect))


async def _mixed_choice_names_the_left_out(dsn, connect):
    spec = demo_spec(dsn)
    setup = connect(autocommit=True)
    done_id, failed_id = add_job(setup, "done"), add_job(setup, "failed")
    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app)
        await look_up(pilot, app, f"{done_id} {failed_id}")
        await until(pilot, lambda: isinstance(app.screen, JobListScreen))
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert app.screen.query_one("#confirm-body").border_title == "Requeue 1 job?"
        text = screen_text(app.screen)
        assert f"would skip them): {done_id} already done" in text, text
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ActionResultScreen))
        assert app.screen.result.changed == (str(failed_id),)
        assert app.screen.query_one("#result-body").border_title.startswith("requeue: done")
    assert (job(setup, done_id)["status"], job(setup, failed_id)["status"]) == ("done", "ready")
    assert [r["target"] for r in audit_rows(setup)] == [str(failed_id)]


def test_a_job_that_moved_on_is_skipped_by_the_guard_and_titled_so(dsn, connect):
    asyncio.run(_a_job_that_moved_on(dsn, connect))


async def _a_job_that_moved_on(dsn, connect):
    spec = demo_spec(dsn)
    setup = connect(autocommit=True)
    failed_id = add_job(setup, "failed")
    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app)
        await look_up(pilot, app, str(failed_id))
        await until(pilot, lambda: isinstance(app.screen, JobListScreen))
        # after the look-up, before the action: the SQL guard still decides
        setup.execute("UPDATE queuetop_demo.jobs SET status = 'done' WHERE id = %s", (failed_id,))
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ActionResultScreen))
        assert app.screen.result.changed == ()
        assert app.screen.query_one("#result-body").border_title == (
            "requeue: nothing changed (Escape closes)"
        )
        assert "requeue: nothing changed" in [n.title for n in app._notifications]
    assert job(setup, failed_id)["status"] == "done"


# --- the pure parts --------------------------------------------------------------------------


def test_job_id_problem_follows_the_id_type():
    spec = config.load_preset("demo")
    for kind, good, bad in (
        ("bigint", ["1", "-3", "+9223372036854775807"], ["abc", "1.5", "9223372036854775808"]),
        ("integer", ["2147483647"], ["2147483648"]),
        ("numeric(10,2)", ["1.25", ".5"], ["1e", "x"]),
        ("uuid", ["2f1c6f0e-8d7a-4a51-9f0e-3c2b1a090807"], ["2f1c"]),
        ("text", ["anything", "at all"], []),
    ):
        typed = replace(spec, column_types={"id": kind})
        assert job_id_problem(typed, good) is None, kind
        for token in bad:
            assert repr(token) in (job_id_problem(typed, [*good, token]) or ""), (kind, token)


def test_foresee_matches_the_guard_roles():
    spec = config.load_preset("demo")
    jobs = [
        ObservedJob("1", "done"),
        ObservedJob("2", "failed"),
        ObservedJob("3", "ready"),
        ObservedJob("4", "running", expired=False),
        ObservedJob("5", "running", expired=True),
        ObservedJob("6", "dead"),
        ObservedJob("7", "running"),
    ]
    change, skip = foresee(spec, jobs, "requeue", force=False)
    # a dead job is requeued too: a person's retry
    assert [j.id for j in change] == ["2", "5", "6"]
    assert [(s.id, s.reason) for s in skip] == [
        ("1", "already done"),
        ("3", "already ready"),
        ("4", "lease not expired"),
        ("7", "lease expiry unknown"),
    ]
    change, _ = foresee(spec, jobs, "requeue", force=True)
    assert [j.id for j in change] == ["2", "4", "5", "6", "7"]
    change, _ = foresee(spec, jobs, "dead-letter", force=False)
    assert [j.id for j in change] == ["2", "3", "5"]


# --- typed input that arrives in one burst (a paste, tmux send-keys, a fast typist) ------------


def test_ids_typed_in_one_burst_with_enter_are_looked_up_at_once(dsn, connect):
    asyncio.run(_ids_typed_in_one_burst(dsn, connect))


async def _ids_typed_in_one_burst(dsn, connect):
    from textual import events

    spec = demo_spec(dsn)
    job_id = add_job(connect(autocommit=True), "failed")
    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    lookups = spy_lookups(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app)
        # every key in the app's queue before the dialog exists: none may be lost or late
        for key in ["j", *str(job_id), "enter"]:
            app.post_message(events.Key(key, "\r" if key == "enter" else key))
        await until(pilot, lambda: isinstance(app.screen, JobListScreen))
        assert lookups == [[str(job_id)]]
        # and once the dialog is open, a burst of ids and Enter looks up what was typed
        await pilot.press("escape")
        await pilot.press("j")
        await until(pilot, lambda: isinstance(app.screen, JobLookupScreen))
        for key in [*f"{job_id} {job_id}0", "enter"]:
            app.post_message(
                events.Key(key if key != " " else "space", "\r" if key == "enter" else key)
            )
        await until(pilot, lambda: isinstance(app.screen, JobListScreen))
        assert lookups[-1] == [str(job_id), f"{job_id}0"]


def test_j_typed_into_a_dialog_is_text_not_a_look_up(dsn):
    asyncio.run(_j_typed_into_a_dialog(dsn))


async def _j_typed_into_a_dialog(dsn):
    from textual.command import CommandPalette
    from textual.widgets import Input

    app = QueuetopApp(demo_spec(dsn), dsn, interval=INTERVAL)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app)
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press("j", "o")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        assert app.screen.query_one(Input).value == "jo"
