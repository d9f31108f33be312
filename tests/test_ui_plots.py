"""The history plots: what they draw, that they draw it as plotext would, and only on change.

plotext (with textual-plotext's theme for the app's) is the reference here: the plots
draw their cells themselves (plot_frame, plot_lines, plot_rows), and these tests compare
them with plotext's own output, cell by cell, colours included.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace
from datetime import timedelta

import pytest
from helpers.pilot import run_app
from latency_fixtures import latency_history
from rich.segment import Segment
from rich.text import Text
from ui_snapshots import T0, demo_spec, fixed_snapshot

from dashboard.ui.app import QueuetopApp
from dashboard.ui.widgets import plot_frame
from dashboard.ui.widgets.plot_axes import tick_label
from dashboard.ui.widgets.plots import HistoryPlot, downsample, nice_ticks


@pytest.fixture(autouse=True)
def plotext_keeps_tick_order(monkeypatch):
    """plotext drops duplicate ticks through a set, so the order it places x labels in
    (and which survive where they do not all fit) changes with the process' hash seed;
    the plots place them in the order given. With duplicates dropped in order (the way
    plotext's own comment beside it gives), plotext is comparable run after run."""
    import plotext._utility as plotext_utility

    monkeypatch.setattr(plotext_utility, "no_duplicates", lambda data: list(dict.fromkeys(data)))


def run(body, size=(200, 50), theme=None, points=40):
    # with latency, so that the p95 wait plot draws a line too (not its message)
    app = QueuetopApp(demo_spec(), None, poll=False, snapshots=latency_history(points))

    async def in_theme(pilot):
        if theme:
            app.theme = theme
            await pilot.pause()

    run_app(app, body, size, before=in_theme)


def cells(segments) -> list[tuple[str, object]]:
    return [(char, seg.style) for seg in segments for char in seg.text]


def plotext_theme(app) -> tuple:
    """What textual-plotext registers for the app's theme: canvas and axes in its surface
    colour, ticks in its foreground (PlotextPlot._register_theme)."""
    from textual.color import Color

    surface = Color.parse(app.theme_variables.get("surface")).rgb
    return surface, surface, Color.parse(app.theme_variables.get("foreground")).rgb


def plotext_prints(plot: HistoryPlot, app) -> list[list[tuple[str, object]]]:
    """What textual-plotext's render() printed for this picture: plotext's ANSI string,
    every series drawn by plotext itself, at this size and in this theme."""
    from textual_plotext.plot import Plot

    fig = Plot()
    (xlo, xhi), (ylo, yhi) = plot._lims
    fig.clear_data()
    fig.xlabel("")
    fig.title("")
    for xs, ys, color in plot._lines:
        fig.plot(xs, ys, color=color, marker="braille")
    fig.ylim(ylo, yhi)
    fig.yticks(plot._ticks, [tick_label(t) for t in plot._ticks])
    fig.xlim(xlo, xhi)
    xticks = plot.x_ticks()
    fig.xticks([x for x, _ in xticks], [label for _, label in xticks])
    canvas, axes, ticks = plotext_theme(app)
    fig.canvas_color(canvas)
    fig.axes_color(axes)
    fig.ticks_color(ticks)
    width, height = plot.size
    fig.plotsize(width, height)
    lines = Text.from_ansi(fig.build()).split("\n", allow_blank=True)
    return [
        cells(Segment.adjust_line_length(list(line.render(app.console)), width)) for line in lines
    ]


def test_plots_draw_the_cells_plotext_would_print():
    async def body(pilot):
        for plot in pilot.app.query(HistoryPlot):
            ours = [cells(plot.render_line(y)) for y in range(plot.size.height)]
            theirs = plotext_prints(plot, pilot.app)
            assert ours == theirs[: len(ours)], plot.id
            assert any(ch not in " ─│┌┐└┘┬┴┤├" for row in ours for ch, _ in row)  # a line

    run(body)
    run(body, theme="textual-light")


def test_an_unchanged_picture_is_not_drawn_again():
    async def body(pilot):
        app = pilot.app
        assert len(app.history) == app.history.maxlen  # full: the window slides
        flat = app.query_one("#plot-waiting", HistoryPlot)  # 3 waiting, poll after poll
        depth = app.query_one("#plot-depth", HistoryPlot)  # the backlog shrinks every poll
        drawn, strips, before = flat._drawn, flat._strips, depth._drawn
        assert strips  # painted once
        for n in range(5):  # 10 s of data: a column of the 600 s window, due for a redraw
            app.apply_snapshot(fixed_snapshot(app.history.maxlen + n))
            await pilot.pause()
        assert flat._drawn == drawn and flat._strips is strips  # not drawn again
        assert depth._drawn != before and depth._strips  # new points: drawn

    run(body, points=300)


@pytest.mark.parametrize(
    ("points", "apart_s", "drawn_at"),
    [
        # 40 s of history: a 60 s window, a column about 1 s, so every 3 s of data
        (20, 1, [3, 6, 9, 12, 15, 18]),
        (20, 2, list(range(1, 21))),
        # 600 s (300 polls 2 s apart) on 61 canvas columns at 200x50: a column is 9.8 s
        (300, 1, [10, 20]),
        (300, 2, [5, 10, 15, 20]),
    ],
)
def test_a_plot_is_drawn_again_every_column_of_data_3_s_at_least_to_the_nearest_poll(
    points, apart_s, drawn_at
):
    """Snapshots `apart_s` seconds apart, each with a deeper backlog (a new picture every
    poll): the depth plot repaints when the data has moved by a cell column of its window,
    3 s at least, to the nearest poll."""

    async def body(pilot):
        app = pilot.app
        plot = app.query_one("#plot-depth", HistoryPlot)
        repaint, painted = plot.refresh, []

        def counted(*regions, **kwargs):
            painted.append(n)
            return repaint(*regions, **kwargs)

        plot.refresh = counted
        last = app.history.times[-1]
        start = T0 + timedelta(seconds=last)
        for n in range(1, 21):
            snap = fixed_snapshot(0, rows=3 + n)
            counts = {**snap.counts, "ready": snap.counts["ready"] + 40 * n}
            app.apply_snapshot(
                replace(snap, taken_at=start + timedelta(seconds=apart_s * n), counts=counts)
            )
            await pilot.pause()
        assert sorted(set(painted)) == drawn_at

    run(body, points=points)


def test_every_series_colour_is_one_plotext_draws():
    # an unknown name (plotext has no "yellow") is drawn silently in the axes' colour
    from plotext._utility import colors_to_ansi

    from dashboard.ui.widgets.plots import ROLE_COLORS, SeriesPlot

    colours = [*ROLE_COLORS.values(), *(c.COLOR for c in SeriesPlot.__subclasses__())]
    assert all(colors_to_ansi(c, "default", "default") for c in colours), colours


def test_a_cells_colours_are_the_ones_plotexts_ansi_code_gives():
    """plot_rows reads plotext's colour vocabulary itself; Rich, reading plotext's own ANSI
    code for the same colours, gets the same style."""
    from plotext._dict import color_codes
    from plotext._utility import colors_to_ansi
    from rich.console import Console

    from dashboard.ui.widgets.plot_rows import COLOR_CODES, _rich_style

    assert color_codes == COLOR_CODES
    console = Console()
    colours = [*color_codes, "default", 0, 3, 15, 135, 255, (12, 200, 31), (255, 255, 255)]
    for fg in colours:
        for bg in ("default", (30, 30, 40), 236, "cyan"):
            ansi = colors_to_ansi(fg, "default", bg) + "x"
            theirs = Text.from_ansi(ansi).get_style_at_offset(console, 0)
            assert _rich_style(fg, "default", bg) == theirs, (fg, bg)


def plotext_frame(width, height, colors, **axes):
    """plotext's own cells for a frame (its figure, no data but one point off the canvas,
    as the plots' frames were built before plot_frame)."""
    from textual_plotext.plot import Plot

    fig = Plot()
    fig.clear_data()
    fig.xlabel("")
    fig.canvas_color(colors[0])
    fig.axes_color(colors[1])
    fig.ticks_color(colors[2])
    if "title" in axes:
        fig.title(axes["title"])
    else:
        fig.title("")
        fig.plot([axes["xlim"][1] + 1e9], [0], marker="braille")
        fig.ylim(*axes["ylim"])
        fig.yticks([y for y, _ in axes["yticks"]], [label for _, label in axes["yticks"]])
        fig.xlim(*axes["xlim"])
        fig.xticks([x for x, _ in axes["xticks"]], [label for _, label in axes["xticks"]])
    fig.plotsize(width, height)
    fig._set_size(width, height)
    fig._set_sizes()
    fig._build_matrix()
    m = fig.monitor.matrix
    return (m.marker, m.fullground, m.style, m.background, m.Cols_canvas, m.Rows_canvas)


def test_the_frame_is_the_one_plotext_builds_at_any_size():
    """plot_frame against plotext's own figure: 1,500 frames from 1x1 to 90x30, counts and
    rates, every window, crowded labels, and "no data yet"."""
    rng = random.Random(5)
    compared = 0
    for trial in range(1500):
        width, height = rng.randint(1, 90), rng.randint(1, 30)
        colors = rng.choice(
            [((30, 30, 40), (30, 30, 40), (220, 220, 220)), ("default", "default", "cyan")]
        )
        if rng.random() < 0.1:
            axes = {"title": "no data yet"}
        else:
            window = rng.choice([60, 120, 300, 3600, 7200])
            top = rng.choice([1, 1.2, 5, 12, 150, 2500, 40000])
            ticks = nice_ticks(top, rng.random() < 0.5, rows=max(height - 2, 1))
            xs = [-window, 0, -window // 2]
            axes = {
                "xlim": (-window, 0),
                "ylim": (0, top * 1.1),
                "xticks": [(x, f"-{-x}s" if x else "now") for x in xs],
                "yticks": [(t, tick_label(t)) for t in ticks],
            }
        try:
            theirs = plotext_frame(width, height, colors, **axes)
        except (IndexError, ValueError, ZeroDivisionError):
            continue  # sizes plotext itself cannot draw
        frame = plot_frame.build(width, height, colors, **axes)
        ours = (frame.marker, frame.fullground, frame.style, frame.background)
        assert ours + (frame.cols, frame.rows) == theirs, (trial, width, height, axes)
        compared += 1
    assert compared > 1200


def test_ticks_are_round_and_counts_get_whole_numbers():
    assert nice_ticks(0, True) == [0]
    assert nice_ticks(1.1, True) == [0, 1]
    assert nice_ticks(910, True, rows=8) == [0, 500]
    assert nice_ticks(1364, True, rows=8) == [0, 1000]
    assert nice_ticks(1364, True, rows=16) == [0, 500, 1000]
    assert nice_ticks(3.3, True, rows=6) == [0, 2]  # not 0 1 2 3 crowded onto 6 rows
    assert nice_ticks(0.9, False) == [0, 0.5]
    assert nice_ticks(3, True, rows=2) == [0, 3]  # two rows: 0 and the top, nothing between
    assert nice_ticks(2.26, False, rows=3) == [0, 2.3]
    # 5 rows (the jobs chart at 80x24): a round step above the top left 0 alone, no scale
    assert nice_ticks(215, True, rows=5) == [0, 215]
    assert nice_ticks(0.7, False, rows=5) == [0, 0.7]
    assert nice_ticks(500, True, rows=5) == [0, 500]


def test_the_plots_keep_their_scale_at_80x24():
    async def body(pilot):
        shown = [p for p in pilot.app.query(HistoryPlot) if p.display]
        assert {p.id for p in shown} == {"plot-throughput", "plot-waiting"}
        for plot in shown:
            labels = {
                line.text.split("┤")[0].strip()
                for line in (plot.render_line(y) for y in range(plot.size.height))
                if "┤" in line.text
            }
            assert len(labels - {""}) >= 2, (plot.id, labels)  # 0 and a tick above it

    run(body, size=(80, 24))


def test_plots_keep_each_buckets_lowest_and_highest_point_in_time_order():
    xs = list(range(300))
    ys = [(i * 37) % 101 for i in xs]
    ys[123] = 1000  # a spike must survive
    dx, dy = downsample(xs, ys, 70)
    assert len(dx) <= 140 and dx == sorted(dx) and 1000 in dy
    assert min(dy) == min(ys) and all(ys[x] == y for x, y in zip(dx, dy, strict=True))
    assert downsample(xs[:100], ys[:100], 70) == (xs[:100], ys[:100])
    assert downsample(xs, ys, 0) == (xs, ys)


def _matrix(series, xlim, ylim, size, ours: bool):
    """plotext's cells for `series`: drawn by plotext, or its frame with plot_lines' lines."""
    from plotext._figure import _figure_class

    from dashboard.ui.widgets import plot_lines

    fig = _figure_class()
    fig.plotsize(*size)
    fig._set_size(*size)
    for xs, ys, color in [([1e12], [0], None)] if ours else series:
        fig.plot(xs, ys, color=color, marker="braille")
    fig.ylim(*ylim)
    fig.yticks([ylim[0], ylim[1] / 2], ["0", "half"])
    fig.xlim(*xlim)
    fig.xticks([xlim[0], 0], ["then", "now"])
    fig._set_sizes()
    fig._build_matrix()
    m = fig.monitor.matrix
    cells = [[r[:] for r in rows] for rows in (m.marker, m.fullground, m.style, m.background)]
    if ours:  # the lines drawn on the canvas as plotext's insert_element would
        marker, fullground, style, _ = cells
        cols, rows = m.Cols_canvas, m.Rows_canvas
        coords = plot_lines.series_coords(series, xlim, ylim, len(cols), len(rows))
        for row, line in plot_lines.cells_of(coords, len(cols), len(rows)).items():
            for col, (char, color) in line.items():
                x, y = col + cols.start, row + rows.start
                marker[y][x], fullground[y][x], style[y][x] = char, color, "default"
    return cells


def test_the_lines_are_the_cells_plotext_itself_draws():
    rng = random.Random(17)
    for trial in range(60):
        size = (rng.randint(20, 90), rng.randint(5, 14))
        span = rng.choice([1, 7, 60, 300])
        top = rng.choice([1.0, 3.0, 97.5, 12000.0])
        series = []
        for color in rng.sample(["cyan", 3, "green", "red", "magenta"], rng.randint(1, 4)):
            n = rng.randint(1, 160)
            xs = sorted(rng.uniform(-span * 1.05, 0.02 * span) for _ in range(n))
            # counts and ages, flat runs, spikes, and values past the top (cut off)
            ys = [rng.choice([0, top, top * 1.2, rng.uniform(0, top)]) for _ in range(n)]
            series.append((xs, ys, color))
        xlim, ylim = (-span, 0), (0, top * 1.1)
        assert _matrix(series, xlim, ylim, size, True) == _matrix(
            series, xlim, ylim, size, False
        ), (trial, size, span, top)


def test_a_new_point_repaints_only_the_lines_it_changed():
    async def body(pilot):
        app = pilot.app
        plot = app.query_one("#plot-depth", HistoryPlot)
        before = [list(plot.render_line(y)) for y in range(plot.size.height)]
        painted: list = []
        repaint = plot.refresh

        def counted(*regions, **kwargs):
            painted.extend(regions or [None])
            return repaint(*regions, **kwargs)

        plot.refresh = counted
        app.apply_snapshot(fixed_snapshot(app.history.maxlen))
        plot.replot(now=True)  # a poll apart: drawn now, not a column of data later
        after = [list(plot.render_line(y)) for y in range(plot.size.height)]
        changed = [y for y, (was, now) in enumerate(zip(before, after, strict=True)) if was != now]
        assert changed and len(changed) < plot.size.height  # a line or two, not the plot
        assert None not in painted  # no whole repaint
        assert sorted(r.y for r in painted) == changed  # content lines
        await pilot.pause()
        # what the screen shows equals a repaint of every plot from scratch
        partly = app.export_screenshot()
        for each in app.query(HistoryPlot):
            each._strips = None
            repaint() if each is plot else each.refresh()
        await pilot.pause()
        assert app.export_screenshot() == partly

    run(body, points=300)


def test_a_plot_draws_the_ticks_of_its_settled_height():
    """A plot whose height settled after its first picture must draw the ticks of the
    height it has: when plotext drew the plots, the jobs plot spanning two rows kept its
    first picture's and showed 1500 and 0 but lost 1000 and 500 (caught by CI)."""
    from test_ui_pile_up import pile_up_app

    from dashboard.ui.widgets.plots import DepthPlot

    async def go():
        app = pile_up_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.pause()
            plot = app.query_one(DepthPlot)
            region = plot.content_region
            rows = [s.text for s in app.screen._compositor.render_strips()]
            drawn = [r[region.x : region.right] for r in rows[region.y : region.bottom]]
            return plot._ticks, drawn

    ticks, drawn = asyncio.run(go())
    assert len(ticks) >= 4, ticks
    for tick in ticks:
        assert any(line.lstrip().startswith(f"{tick_label(tick)}┤") for line in drawn), (
            tick,
            drawn,
        )
