"""The history plots: what they draw, that they draw it as plotext would, and only on change."""

from __future__ import annotations

import asyncio
import random

from latency_fixtures import latency_history
from rich.segment import Segment
from textual_plotext import PlotextPlot
from ui_snapshots import demo_spec, fixed_snapshot

from dashboard.ui.app import QueuetopApp
from dashboard.ui.forks import switched_off
from dashboard.ui.widgets.plots import HistoryPlot, downsample, nice_ticks


def run(body, size=(200, 50), theme=None, points=40):
    # with latency, so that the p95 wait plot draws a line too (not its message)
    app = QueuetopApp(demo_spec(), None, poll=False, snapshots=latency_history(points))

    async def go():
        async with app.run_test(size=size) as pilot:
            if theme:
                app.theme = theme
            await pilot.pause()
            await body(pilot)

    asyncio.run(go())


def cells(segments) -> list[tuple[str, object]]:
    return [(char, seg.style) for seg in segments for char in seg.text]


def test_plots_draw_the_cells_plotext_would_print():
    async def body(pilot):
        for plot in pilot.app.query(HistoryPlot):
            width = plot.size.width
            ours = [cells(plot.render_line(y)) for y in range(plot.size.height)]
            # what textual-plotext's own render() prints: plotext's ANSI string, every
            # series drawn by plotext itself, at this size and in this theme
            plot.plotext_figure()
            ansi = PlotextPlot.render(plot).split("\n", allow_blank=True)
            theirs = [
                cells(Segment.adjust_line_length(list(line.render(pilot.app.console)), width))
                for line in ansi
            ]
            if switched_off("plot_frame"):
                # the stock path: textual-plotext's own render, which Textual has already
                # styled (the widget's colours, offsets) by render_line: the same characters
                ours = [[(ch, None) for ch, _ in row] for row in ours]
                theirs = [[(ch, None) for ch, _ in row] for row in theirs]
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
        # the stock path (plot_frame off) keeps no strips: plotext draws each repaint
        frame = not switched_off("plot_frame")
        assert strips or not frame  # painted once
        app.apply_snapshot(fixed_snapshot(app.history.maxlen))
        await pilot.pause()
        assert flat._drawn == drawn and flat._strips is strips  # plotext not asked again
        assert depth._drawn != before and (depth._strips or not frame)  # a new point: drawn

    run(body, points=300)


def test_every_series_colour_is_one_plotext_draws():
    # an unknown name (plotext has no "yellow") is drawn silently in the axes' colour
    from plotext._utility import colors_to_ansi

    from dashboard.ui.widgets.plots import ROLE_COLORS, SeriesPlot

    colours = [*ROLE_COLORS.values(), *(c.COLOR for c in SeriesPlot.__subclasses__())]
    assert all(colors_to_ansi(c, "default", "default") for c in colours), colours


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
    cells = plot_lines.Cells.of(fig.monitor.matrix)
    if ours:
        plot_lines.draw(cells, series, xlim, ylim)
    return [cells.marker, cells.fullground, cells.style, cells.background]


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
        after = [list(plot.render_line(y)) for y in range(plot.size.height)]
        changed = [y for y, (was, now) in enumerate(zip(before, after, strict=True)) if was != now]
        if not switched_off("plot_frame"):  # the stock path repaints the plot whole
            assert changed and len(changed) < plot.size.height  # a line or two, not the plot
            assert None not in painted  # no whole repaint
            assert sorted(r.y for r in painted) == changed  # content lines
        else:
            assert painted == [None]
        await pilot.pause()
        # what the screen shows equals a repaint of every plot from scratch
        partly = app.export_screenshot()
        for each in app.query(HistoryPlot):
            each._strips = None
            repaint() if each is plot else each.refresh()
        await pilot.pause()
        assert app.export_screenshot() == partly

    run(body, points=300)


def test_the_stock_path_draws_the_ticks_of_the_plots_height(monkeypatch):
    """With plotext drawing the whole plot (the plot_frame piece off), a plot whose height
    settled after its first picture kept the first picture's ticks: the jobs plot spanning
    two rows showed 1500 and 0 and lost 1000 and 500 (caught by CI's stock-path run)."""
    from test_ui_pile_up import pile_up_app

    from dashboard.ui.widgets.plots import DepthPlot, tick_label

    monkeypatch.setenv("QUEUETOP_STOCK_UI", "plot_frame")

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
