"""The main screen fed fixed snapshots: SVG snapshots, bindings, diffing, marks, details."""

from __future__ import annotations

from dataclasses import replace

import pytest
from helpers.pilot import run_app
from ui_snapshots import demo_spec, fixed_history, fixed_snapshot, with_idle

from dashboard.ui.app import QueuetopApp
from dashboard.ui.history import History
from dashboard.ui.screens.detail import DetailScreen
from dashboard.ui.screens.help import HelpScreen, binding_rows


def fixed_app(snapshots=None) -> QueuetopApp:
    return QueuetopApp(
        demo_spec(), None, poll=False, snapshots=fixed_history() if snapshots is None else snapshots
    )


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
def test_main_screen_snapshot(snap_compare, size):
    assert snap_compare(fixed_app(), terminal_size=size)


run = run_app  # tests/helpers/pilot.py


def test_history_throughput_is_done_delta_per_second():
    history = History(maxlen=5)
    for snap in fixed_history(8):
        history.add(snap)
    assert len(history) == 5
    assert list(history.throughput) == [22.5] * 5  # 45 done every 2 s
    fresh = History()
    for snap in fixed_history(2):
        fresh.add(snap)
    assert list(fresh.throughput) == [22.5, 22.5]  # the first poll: no ramp up from 0
    assert list(history.times)[-1] == 14.0
    assert list(history.waiting) == [3] * 5


def test_cursor_follows_its_row_when_rows_are_inserted_above():
    async def body(pilot):
        app = pilot.app
        table = app.table("idle")
        await pilot.press("3", "down", "down")
        assert table.cursor_key() == "p4202"
        older = replace(app.snapshot.idle_in_transaction[0], pid=4999, xact_age_s=9999.0)
        app.apply_snapshot(with_idle(app.snapshot, [older]))
        await pilot.pause()
        assert list(table.items)[0] == "p4999"
        assert table.cursor_key() == "p4202" and table.cursor_row == 3

    run(fixed_app(), body)


def test_marks_and_selected_job_ids_follow_job_ids():
    async def body(pilot):
        app = pilot.app
        await pilot.press("4", "space", "space")
        assert app.selected_job_ids() == [1000, 1001]
        assert [s.lease_token for s in app.stale_table.selected_leases()] == [1, 2]
        app.apply_snapshot(replace(app.snapshot, stale_leases=app.snapshot.stale_leases[1:]))
        await pilot.pause()
        assert app.selected_job_ids() == [1001]  # a job no longer stale loses its mark
        await pilot.press("u")
        assert app.selected_job_ids() == []
        await pilot.press("a")
        assert app.selected_job_ids() == [1001, 1002]

    run(fixed_app(), body)


def test_enter_shows_the_whole_query():
    async def body(pilot):
        app = pilot.app
        await pilot.press("1", "enter")
        assert isinstance(app.screen, DetailScreen)
        assert app.screen.item.query == app.snapshot.locks[1].query
        assert len(app.screen.item.query) > 60
        # its own footer: the main screen's keys (Mark, Requeue…) do nothing here
        keys = {b.binding.action for b in app.screen.active_bindings.values()}
        assert "dismiss" in keys and "app.requeue_stale" not in keys
        assert app.screen.query_one("Footer")
        await pilot.press("escape")
        assert not isinstance(app.screen, DetailScreen)

    run(fixed_app(), body)


def test_lock_filter_toggles_between_queue_table_and_database():
    # a wait and an idle transaction on another table: not the queue's sessions (the
    # waiting and idle tabs listed them beside the queue's, without saying so)
    snap = fixed_snapshot(0, rows=9)
    other = replace(snap.waiting[0], pid=7001, blocked_by=(7000,), chain=(7000, 7001), job_id=None)
    elsewhere = replace(snap.idle_in_transaction[0], pid=7000, application_name="billing")
    snap = replace(
        snap,
        waiting=(*snap.waiting, other),
        idle_in_transaction=(*snap.idle_in_transaction, elsewhere),
    )

    async def body(pilot):
        app = pilot.app
        locks, waiting, idle = app.table("locks"), app.table("waiting"), app.table("idle")
        tabs = app.query_one("#tables")
        assert all(lk.on_queue_table for lk in locks.items.values())
        queue_rows = locks.row_count
        assert "s7001" not in waiting.items and "p7000" not in idle.items
        for tab in ("tab-locks", "tab-waiting", "tab-idle"):
            assert "(queue" in str(tabs.get_tab(tab).label), tab
        await pilot.press("l")
        assert locks.row_count > queue_rows
        assert "s7001" in waiting.items and "p7000" in idle.items
        for tab in ("tab-locks", "tab-waiting", "tab-idle"):
            assert "(all)" in str(tabs.get_tab(tab).label), tab

    run(fixed_app([snap]), body)


def test_queue_view_shows_every_lock_of_the_sessions_on_the_queue_table():
    snap = fixed_snapshot(0, rows=3)  # 4101 and 4102 lock the queue table, 4100 does not
    row_wait = replace(
        snap.locks[1],
        locktype="transactionid",
        mode="ShareLock",
        granted=False,
        relation=None,
        on_queue_table=False,
        wait_s=0.4,
    )
    snap = replace(snap, locks=(*snap.locks, row_wait))

    async def body(pilot):
        locks = pilot.app.table("locks")
        shown = [(lk.pid, lk.locktype, lk.granted) for lk in locks.items.values()]
        # the wait for another worker's row comes first, then its place in the row's queue;
        # the ordinary table locks last, one line per session (the workers' lines here)
        assert shown[:2] == [(4101, "transactionid", False), (4101, "tuple", True)]
        assert [row for row in shown if row[0] in (4101, 4102)] == [
            (4101, "transactionid", False),
            (4101, "tuple", True),
            (4102, "folded", True),
        ]
        assert locks.row_texts(0)[1] == "WAIT" and locks.row_texts(0)[7] == "0.4s"
        await pilot.press("l")
        assert 4100 in {lk.pid for lk in locks.items.values()}

    run(fixed_app([snap]), body)


def test_waiting_tab_counts_waiting_sessions_not_their_blockers():
    async def body(pilot):
        table = pilot.app.table("waiting")
        assert table.row_count == 5 and table.count() == 3  # 2 blockers, 3 waiters
        tab = pilot.app.query_one("#tables").get_tab("tab-waiting")
        assert str(tab.label).endswith(" 3")

    run(fixed_app([fixed_snapshot(0)]), body)


def test_a_waiter_whose_blocker_just_left_is_not_shown_as_a_blocker():
    snap = fixed_snapshot(0)
    alone = replace(snap.waiting[0], pid=5500, blocked_by=(), chain=(5500,))
    snap = replace(snap, waiting=(*snap.waiting, alone))

    async def body(pilot):
        table = pilot.app.table("waiting")
        labels = [table.row_texts(i)[0] for i in range(table.row_count)]
        assert "5500 (blocker left)" in labels and table.count() == 4
        assert not any(label.startswith("5500 blocks") for label in labels)

    run(fixed_app([snap]), body)


def test_waiting_tree_lists_blockers_then_their_waiters():
    async def body(pilot):
        await pilot.press("2")
        table = pilot.app.table("waiting")
        labels = [table.row_texts(i)[0] for i in range(table.row_count)]
        assert labels == ["4200 blocks 1", "└ 5001", "  └ 5002", "4300 blocks 1", "└ 6000"]

    run(fixed_app([fixed_snapshot(0)]), body)


def test_help_lists_every_binding_and_speed_keys_change_interval():
    async def body(pilot):
        app = pilot.app
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        described = {text for _, _, text in binding_rows(app.binding_sections())}
        for binding in app.BINDINGS:  # the load generator's keys only exist in `demo`
            assert binding.tooltip in described or app.check_action(binding.action, ()) is False
        await pilot.press("escape")
        await pilot.press("minus")
        assert app.interval == 5.0
        await pilot.press("plus", "plus")
        assert app.interval == 1.0

    run(fixed_app(), body)


def test_bindings_are_in_the_command_palette():
    app = fixed_app()

    async def body(pilot):
        titles = {c.title for c in app.get_system_commands(app.screen)}
        for binding in app.BINDINGS:
            assert (
                binding.description in titles
                or binding.action == "quit"
                or app.check_action(binding.action, ()) is False
            )

    run(app, body)


def test_hidden_tables_are_current_and_bulk_removal_keeps_order_and_cursor():
    async def body(pilot):
        app = pilot.app
        idle = app.table("idle")
        assert len(idle.items) == 40 and idle.row_count == 40  # hidden, yet current
        await pilot.press("3")
        await pilot.press("down", "down", "down")
        kept = idle.cursor_key()
        snap = app.snapshot
        survivors = tuple(i for n, i in enumerate(snap.idle_in_transaction) if n % 3 != 1)
        app.apply_snapshot(replace(snap, idle_in_transaction=survivors))
        await pilot.pause()
        expected = [f"p{i.pid}" for i in sorted(survivors, key=lambda i: -i.xact_age_s)]
        shown = [idle.row_texts(n)[0] for n in range(idle.row_count)]
        assert shown == [k[1:] for k in expected]
        assert idle.cursor_key() == kept

    run(fixed_app([fixed_snapshot(0, rows=40)]), body)


def test_missing_ages_from_pg_stat_activity_do_not_break_the_tables():
    snap = fixed_snapshot(0)
    racy = replace(snap.idle_in_transaction[0], xact_age_s=None, idle_s=None)
    snap = replace(snap, idle_in_transaction=(racy, *snap.idle_in_transaction[1:]))

    async def body(pilot):
        await pilot.press("3")
        table = pilot.app.table("idle")
        assert table.row_count == 3
        assert table.row_texts(2)[1] == "-"  # shown last, age unknown

    run(fixed_app([snap]), body)


def test_cells_kept_across_refreshes_render_like_fresh_ones_and_click_where_they_are():
    async def body(pilot):
        app = pilot.app
        idle = app.table("idle")
        await pilot.press("3", "down")
        # ages tick, and rows leave the top: two (stripes stay), then one (stripes swap)
        for step, gone in ((1, 2), (2, 4), (3, 6), (4, 7), (5, 8)):
            snap = fixed_snapshot(step, rows=40)
            rest = snap.idle_in_transaction[gone:]
            app.apply_snapshot(replace(snap, idle_in_transaction=rest))
            await pilot.pause()
            kept = [list(idle.render_line(y)) for y in range(idle.size.height)]
            idle._lines.clear()  # what a table drawn from scratch shows
            assert kept == [list(idle.render_line(y)) for y in range(idle.size.height)]
        await pilot.click(idle, offset=(3, 4))  # below the header: the fourth row
        assert idle.cursor_row == 3

    run(fixed_app([fixed_snapshot(0, rows=40)]), body)


def test_a_table_filled_while_hidden_scrolls_to_its_end_once_shown_and_counts_in_place():
    async def body(pilot):
        app = pilot.app
        idle = app.table("idle")
        app.apply_snapshot(fixed_snapshot(1, rows=300))  # tab 1 shown; tab 3 grows unseen
        await pilot.pause()
        assert not idle.shown and idle.virtual_size.height == 301  # header + rows
        await pilot.press("3", "end")
        await pilot.pause()
        assert idle.shown and idle.cursor_row == 299
        assert idle.max_scroll_y > 0 and idle.scroll_y == idle.max_scroll_y
        last_pid = idle.cursor_key()[1:]  # keyed p<pid>: the last row is on the screen
        assert any(
            line.text.split()[:1] == [last_pid] for line in app.screen._compositor.render_strips()
        )
        # a count of the same width is redrawn where it was
        tabs = app.query_one("#tables")
        before = tabs.get_tab("tab-idle").region
        app.apply_snapshot(
            replace(
                fixed_snapshot(2, rows=300),
                idle_in_transaction=app.snapshot.idle_in_transaction[:200],
            )
        )
        await pilot.pause()
        tab = tabs.get_tab("tab-idle")
        assert tab.label_text == "Idle in transaction (queue) 200" and tab.region == before
        assert any(
            "Idle in transaction (queue) 200" in line.text
            for line in app.screen._compositor.render_strips()
        )

    run(fixed_app([fixed_snapshot(0)]), body)
