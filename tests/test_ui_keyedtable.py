"""The line-drawn table behind the four panels: navigation, laziness, what reaches the terminal."""

from __future__ import annotations

from dataclasses import replace

from helpers.pilot import run_app
from rich.cells import cell_len
from ui_snapshots import demo_spec, fixed_snapshot, with_idle

from dashboard.ui.app import QueuetopApp
from dashboard.ui.screens.detail import DetailScreen
from dashboard.ui.widgets.keyedtable import Col, fit, fit_columns
from dashboard.ui.widgets.tables import IdleTable


def run(snapshots, body, size=(120, 40)):
    run_app(QueuetopApp(demo_spec(), None, poll=False, snapshots=snapshots), body, size)


def idle_of(rows: int):
    """`rows` sessions idle in a transaction."""
    return fixed_snapshot(0, rows=rows).idle_in_transaction


async def idle_tab(pilot):
    """The idle-in-transaction tab shown, painted: its table."""
    await pilot.press("3")
    await pilot.pause()
    return pilot.app.table("idle")


def shown_pids(table) -> list[str]:
    """The first cell of every row line on screen (the header is line 0)."""
    lines = [table.render_line(y).text for y in range(1, table.page_rows + 1)]
    return [line.split()[0] for line in lines if line.strip()]


def test_keys_move_the_cursor_and_the_view_follows_it():
    async def body(pilot):
        idle = pilot.app.table("idle")
        await pilot.press("3", "end")
        assert idle.cursor_row == idle.row_count - 1 == 39
        await pilot.pause()
        assert shown_pids(idle)[-1] == idle.cursor_key()[1:]
        await pilot.press("home", "pagedown")
        assert idle.cursor_row == idle.page_rows
        await pilot.press("pageup", "up")
        assert idle.cursor_row == 0
        await pilot.press("down", "down")
        await pilot.pause()
        assert idle.cursor_row == 2 and shown_pids(idle)[0] == list(idle.items)[0][1:]

    run([fixed_snapshot(0, rows=40)], body)


def test_a_click_moves_the_cursor_and_a_second_click_opens_the_row():
    async def body(pilot):
        app = pilot.app
        await pilot.press("3")
        idle = app.table("idle")
        await pilot.click(idle, offset=(3, 3))  # line 3: the third row
        assert idle.cursor_row == 2 and not isinstance(app.screen, DetailScreen)
        await pilot.click(idle, offset=(3, 3))
        assert isinstance(app.screen, DetailScreen)
        assert app.screen.item is idle.cursor_item()

    run([fixed_snapshot(0, rows=40)], body)


def test_a_refresh_formats_only_the_rows_on_screen():
    formatted: list[str] = []

    class CountingIdle(IdleTable):
        def values(self, key, item):
            formatted.append(key)
            return super().values(key, item)

    async def body(pilot):
        app = pilot.app
        await pilot.press("3")
        idle = app.table("idle")
        counting = CountingIdle(id="counting")
        await idle.parent.mount(counting)
        idle.display = False
        await pilot.pause()
        counting.update_from(fixed_snapshot(1, rows=1000))
        await pilot.pause()
        formatted.clear()
        counting.update_from(fixed_snapshot(2, rows=1000))
        await pilot.pause()
        assert counting.row_count == 1000
        # every line of the widget is painted, the one under the horizontal scrollbar too
        assert 0 < len(set(formatted)) <= counting.size.height - 1

    run([fixed_snapshot(0, rows=40)], body)


def test_cells_reach_the_terminal_as_plain_text_of_their_column_width():
    assert fit("SELECT 1 \x1b[2J\x07;", 30) == "SELECT 1 \\x1b[2J\\x07;"  # shown, not run
    assert fit("select\n\t  *\n from jobs", 30) == "select * from jobs"
    assert fit("  └ 5002", 20) == "  └ 5002"  # a tree keeps its indentation
    wide = fit("SELECT '日本語のテキスト'", 12)
    assert cell_len(wide) == 12 and wide.endswith("…")
    assert cell_len(fit("日本語", 4)) == 4  # a wide character never half-drawn past the edge

    snap = fixed_snapshot(0, rows=5)
    first = replace(
        snap.idle_in_transaction[0],
        query="UPDATE \x1b[31mjobs\x1b[0m SET note = '長い説明文がここに入ります'",
    )
    snap = replace(snap, idle_in_transaction=(first, *snap.idle_in_transaction[1:]))

    async def body(pilot):
        await pilot.press("3")
        idle = pilot.app.table("idle")
        row = idle.get_row_index(f"p{first.pid}")
        idle.scroll_to(x=40, animate=False)  # the query column, cut at the widget's edge
        await pilot.pause()
        line = idle.render_line(row + 1)
        assert "\x1b" not in line.text and line.cell_length == idle.size.width

    run([snap], body)


def test_columns_give_way_by_rank_and_the_query_takes_the_rest():
    cols = (
        Col("pid", "pid", 5),
        Col("app", "app", 6, drop=2),
        Col("user", "user", 4, drop=3),
        Col("query", "query", 10, fill=True, drop=1),
    )
    # widths with one cell of padding each side: 7 + 8 + 6 + 12 = 33
    assert fit_columns(cols, 40, 1) == [(0, 5), (1, 6), (2, 4), (3, 17)]
    assert fit_columns(cols, 30, 1) == [(0, 5), (1, 6), (3, 13)]  # user first
    assert fit_columns(cols, 20, 1) == [(0, 5), (3, 11)]  # then the application
    assert fit_columns(cols, 6, 1) == [(0, 5)]  # the query last; pid never


def test_at_80_columns_every_table_fits_without_scrolling_sideways():
    async def body(pilot):
        app = pilot.app
        for key, table_id in (("1", "locks"), ("2", "waiting"), ("3", "idle"), ("4", "stale")):
            await pilot.press(key)
            table = app.table(table_id)
            assert table.virtual_size.width <= table.scrollable_content_region.width, table_id
            assert table.shown_columns()[0] == table.COLUMNS[0].key
        locks = app.table("locks").shown_columns()
        assert {"pid", "granted", "mode", "relation", "wait"} <= set(locks)

    run([fixed_snapshot(0, rows=40)], body, size=(80, 24))


def test_a_refresh_repaints_only_the_rows_in_view_that_changed():
    async def body(pilot):
        app = pilot.app
        await pilot.press("3")
        idle = app.table("idle")
        await pilot.pause()
        painted: list = []
        repaint = idle.refresh

        def counted(*regions, **kwargs):
            painted.append(regions)
            return repaint(*regions, **kwargs)

        idle.refresh = counted
        snap = app.snapshot
        idle.update_from(snap)  # the same rows: nothing to paint
        assert painted == []
        order = list(idle.items)
        second = idle.items[order[1]]
        others = [i for i in snap.idle_in_transaction if i is not second]
        changed = replace(second, query="SELECT 'changed'")  # not a sort key: rows stay put
        idle.update_from(replace(snap, idle_in_transaction=(*others, changed)))
        assert list(idle.items) == order
        [(region,)] = painted  # one line: the second row's (the header is line 0)
        assert (region.y, region.height) == (2, 1)
        await pilot.pause()
        assert "SELECT 'changed'" in idle.render_line(2).text

    run([fixed_snapshot(0, rows=40)], body)


def test_rows_coming_and_going_lay_out_the_screen_only_when_the_scrollbar_changes():
    """A table's place on screen does not depend on its rows: a new row count costs no layout
    of the whole screen unless the scrollbar appears or goes, and the view stays right."""

    async def body(pilot):
        app = pilot.app
        idle = await idle_tab(pilot)
        layouts: list[int] = []
        lay_out = app.screen._refresh_layout

        def counted(*args, **kwargs):
            layouts.append(1)
            return lay_out(*args, **kwargs)

        app.screen._refresh_layout = counted
        snap = app.snapshot

        async def show(rows: int):
            bare = replace(snap, idle_in_transaction=())
            idle.update_from(with_idle(bare, idle_of(rows)))  # each on the queue table
            await pilot.pause()
            await pilot.pause()
            return shown_pids(idle)

        assert idle.page_rows > 8
        assert len(await show(8)) == 8 and not idle.show_vertical_scrollbar
        layouts.clear()
        assert len(await show(3)) == 3 and len(await show(7)) == 7  # they fit: no layout
        assert not layouts and not idle.show_vertical_scrollbar
        shown = await show(40)
        assert idle.show_vertical_scrollbar and len(shown) == idle.page_rows
        assert layouts, "the scrollbar appeared without a layout"
        await pilot.press("end")
        await pilot.pause()
        assert shown_pids(idle)[-1] == idle.cursor_key()[1:]
        layouts.clear()
        shown = await show(5)  # scrolled to the end, then the rows shrink: the view comes back
        assert not idle.show_vertical_scrollbar and layouts
        assert shown == [key[1:] for key in idle.items] and len(shown) == 5
        layouts.clear()
        assert len(await show(1)) == 1 and not layouts

    run([fixed_snapshot(0, rows=5)], body)


def test_rows_that_come_and_go_repaint_what_changes_not_the_blank_lines_under_them():
    """The demo's locks table, its rows coming and going every few seconds, sent its whole
    page to the terminal each time, blank lines and all. Now the lines repainted are those
    that change, and the screen (the compositor's own strips, cached lines included) is
    what the table draws afresh."""

    async def body(pilot):
        app = pilot.app
        idle = await idle_tab(pilot)
        painted: set[int] = set()  # lines of the table asked to repaint
        repaint = idle.refresh

        def counted(*regions, **kwargs):
            whole = [idle.region.reset_offset] if not regions else regions
            for region in whole:
                painted.update(range(region.y, region.y + region.height))
            return repaint(*regions, **kwargs)

        idle.refresh = counted
        snap = replace(app.snapshot, idle_in_transaction=())

        def on_screen() -> list[str]:
            strips = app.screen._compositor.render_strips()
            box = idle.region
            return [
                strips[y].crop(box.x, box.right).text.rstrip() for y in range(box.y, box.bottom)
            ]

        def afresh() -> list[str]:
            return [idle.render_line(y).text.rstrip() for y in range(idle.region.height)]

        assert idle.page_rows > 8
        idle.update_from(with_idle(snap, idle_of(8)))  # past the focus and the first size
        await pilot.pause()
        await pilot.pause()
        before = on_screen()
        for rows in (3, 7, 2, 9, 2, 2):
            painted.clear()
            idle.update_from(with_idle(snap, idle_of(rows)))
            await pilot.pause()
            await pilot.pause()
            after = on_screen()
            assert after == afresh()
            assert len([line for line in after[1:] if line]) == rows
            blank_both = {y for y in range(1, len(after)) if not before[y] and not after[y]}
            assert not painted & blank_both, (rows, sorted(painted & blank_both))
            assert 0 not in painted  # the header
            before = after
        assert painted == set()  # the same two rows again: nothing to paint

    run([fixed_snapshot(0, rows=5)], body)
