"""The demo's main screen at 80x24, read off the rendered screen as a person reads it: every
tab label whole, the footer whole, the strip's numbers of the `s` story, the throughput and
waiting plots; and the jobs plot's legend in its lines' own colours."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import pytest
from helpers.pilot import run_app
from textual.widgets import Footer, Tabs
from textual.widgets._footer import FooterKey
from ui_snapshots import FixedLoadGen, demo_spec, fixed_history, fixed_load_snapshot

from dashboard.ui.app import QueuetopApp
from dashboard.ui.widgets.loadgen_panel import LoadStrip
from dashboard.ui.widgets.plots import DEPTH_ROLES, HistoryPlot

BRAILLE = range(0x2801, 0x2900)  # a line's cells (0x2800 is the blank one)


def demo_app(snapshots=None) -> QueuetopApp:
    return QueuetopApp(
        demo_spec(),
        None,
        poll=False,
        snapshots=fixed_history() if snapshots is None else snapshots,
        loadgen=FixedLoadGen(replace(fixed_load_snapshot(), completions_per_s=175.0)),
    )


run = partial(run_app, size=(80, 24))  # tests/helpers/pilot.py


def screen_lines(app) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


def cells(strip, x0: int, x1: int) -> list[tuple[str, object]]:
    """(character, style) of each cell of a rendered line from column x0 to x1."""
    out, x = [], 0
    for seg in strip:
        for char in seg.text:
            if x0 <= x < x1:
                out.append((char, seg.style))
            x += 1
    return out


@pytest.mark.parametrize("tab", ["1", "2", "3", "4", "5", "b"])
def test_every_tab_label_reads_whole_at_80x24_whichever_tab_is_shown(tab):
    async def body(pilot):
        app = pilot.app
        await pilot.press(tab)
        await pilot.pause()
        tabs = app.query_one("#tables").query_one(Tabs)
        labels = [t.label_text.strip() for t in tabs.query("Tab")]
        row = screen_lines(app)[tabs.region.y]
        assert len(labels) == 6 and row.split() == " ".join(labels).split(), (labels, row)
        assert row.startswith(" " + labels[0]), row  # not scrolled: the first one whole
        assert tabs.max_scroll_x == 0

    run(demo_app(), body)


def footer_keys_whole(app, width: int) -> set[str]:
    """The footer's keys as drawn on the screen, each of them whole: their actions."""
    footer = app.query_one(Footer)
    bottom = screen_lines(app)[-1]
    # the palette key where there is room; on a narrow screen its room goes to j, A and L
    assert bottom.rstrip().endswith("^p palette") == (width >= 110), bottom
    assert footer.max_scroll_x == 0 or footer.scroll_x == 0, bottom
    keys = [k for k in footer.query(FooterKey) if k.display and all(a.display for a in k.ancestors)]
    assert keys
    for key in keys:  # each key and label inside the screen, drawn where it is
        assert key.region.area and key.region.right <= width, (key.key_display, bottom)
        drawn = bottom[key.region.x : key.region.right]
        assert key.key_display in drawn and key.description in drawn, (drawn, bottom)
    for label in footer.query("FooterLabel"):  # a group's name: whole, or gone with it
        if label.display:
            assert str(label.render()) in bottom[label.region.x : label.region.right]
    return {k.action for k in keys}


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 40)])
def test_the_footer_shows_each_of_its_keys_whole(size):
    async def body(pilot):
        shown = footer_keys_whole(pilot.app, size[0])
        # the knobs of the demo's story, and a way to every other key
        assert {"cycle_strategy", "toggle_hold_tx", "help"} <= shown, shown

    run(demo_app(), body, size=size)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_the_palette_opens_with_ctrl_p_where_the_footer_leaves_it_out(size):
    from textual.command import CommandPalette

    async def body(pilot):
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(pilot.app.screen, CommandPalette), pilot.app.screen

    run(demo_app(), body, size=size)


def test_the_footer_of_each_tab_keeps_its_keys_whole_at_80x24():
    async def body(pilot):
        for tab in ("1", "2", "3", "4", "5", "b", "1"):
            await pilot.press(tab)
            await pilot.pause()
            await pilot.pause()  # the footer fits itself after its keys are laid out
            shown = footer_keys_whole(pilot.app, 80)
            # the browser's own keys come first and fill it; elsewhere help stays in sight
            assert tab == "b" or "help" in shown, (tab, shown)

    run(demo_app(), body)


def test_the_strip_shows_the_s_storys_numbers_at_80x24():
    async def body(pilot):
        app = pilot.app
        strip = app.query_one(LoadStrip)
        line = screen_lines(app)[strip.region.y]
        waiting = len(app.snapshot.waiting)
        assert waiting == 3
        for text in ("for-update", "hold-tx on", "done 175/s", "claim p95 12.8 ms", "waiting 3"):
            assert text in line, line
        assert "…" not in line, line
        app.apply_snapshot(replace(app.snapshot, waiting=()))  # nobody waits any more
        await pilot.pause()
        assert "waiting 0" in screen_lines(app)[strip.region.y]

    run(demo_app(), body)


def test_throughput_and_waiting_plots_are_shown_smaller_at_80x24():
    async def body(pilot):
        app = pilot.app
        lines = screen_lines(app)
        shown = {}
        for plot in app.query(HistoryPlot):
            region = plot.region
            if not plot.display or not region.area:
                continue
            assert region.right <= 80 and region.bottom <= 24
            title = lines[region.y][region.x : region.right]
            body_cells = [
                char
                for y in range(region.y + 1, region.bottom - 1)
                for char in lines[y][region.x : region.right]
            ]
            assert any(ord(c) in BRAILLE for c in body_cells), plot.id  # a line is drawn
            shown[plot.id] = title
        assert set(shown) == {"plot-throughput", "plot-waiting"}, shown
        assert "Done/s" in shown["plot-throughput"] and "Waiting" in shown["plot-waiting"]

    run(demo_app(), body)


def spread_history():
    """Each role at its own height, so that each line has a row of its own."""
    snaps = fixed_history()
    counts = {"ready": 1000, "running": 600, "failed": 300, "dead": 60}
    return [replace(s, counts={**s.counts, **counts}) for s in snaps]


@pytest.mark.parametrize("theme", [None, "textual-light"])
def test_the_jobs_legend_is_drawn_in_its_lines_colours(theme):
    async def body(pilot):
        app = pilot.app
        if theme:
            app.theme = theme
            await pilot.pause()
        plot = app.query_one("#plot-depth", HistoryPlot)
        inner = plot.content_region
        strips = app.screen._compositor.render_strips()
        title = cells(strips[inner.y - 1], inner.x, inner.right)
        text = "".join(c for c, _ in title)
        legend = {}
        for role in DEPTH_ROLES:
            at = text.index(f" {role}") + 1
            styles = {style.color for _, style in title[at : at + len(role)]}
            assert len(styles) == 1, (role, styles)
            legend[role] = styles.pop()
        # each line's colour, as the screen draws its braille cells, top line first
        lines = []
        for y in range(inner.y, inner.bottom):
            row = {s.color for c, s in cells(strips[y], inner.x, inner.right) if ord(c) in BRAILLE}
            lines += [c for c in row if c not in lines]
        assert lines == [legend[r] for r in ("ready", "running", "failed", "dead")], (
            legend,
            lines,
        )
        assert len(set(legend.values())) == 4  # four roles, four colours

    run(demo_app(spread_history()), body, size=(160, 50))  # tall: a row for each line


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 40)])
def test_a_live_demos_footer_shows_the_lookup_the_audit_and_the_lab_whole(dsn, size):
    """At 80x24 the footer lost j, A and L (the palette key's room is theirs there); on a
    live dashboard they are shown whole at every size, with the demo's s and t and help."""
    from test_ui_live import demo_spec as live_demo_spec

    app = QueuetopApp(
        live_demo_spec(dsn),
        dsn,
        interval=5.0,
        loadgen=FixedLoadGen(replace(fixed_load_snapshot(), completions_per_s=175.0)),
    )

    async def body(pilot):
        for _ in range(3):
            await pilot.pause()
        shown = footer_keys_whole(pilot.app, size[0])
        wanted = {"cycle_strategy", "toggle_hold_tx", "help", "quit"}
        assert wanted | {"lookup_jobs", "show_audit", "open_lab"} <= shown, shown

    run(app, body, size=size)


def test_the_workers_table_keeps_pid_claimed_and_done_at_80x24():
    """Beside the counters 80 columns left the workers table a name and a state; on a narrow
    screen it goes above them, the width of the screen."""

    async def body(pilot):
        await pilot.press("5")
        await pilot.pause()
        await pilot.pause()
        app = pilot.app
        table = app.query_one("#loadgen-workers")
        header = screen_lines(app)[table.region.y]
        for name in ("worker", "state", "pid", "claimed", "done"):
            assert name in header.split(), header
        assert table.region.right <= 80 and table.region.width > 70, table.region

    run(demo_app(), body)
