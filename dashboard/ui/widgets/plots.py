"""History plots: each a PlotextPlot subclass that replots from the shared History."""

from __future__ import annotations

import math
from functools import lru_cache

from plotext._utility import colors_to_ansi
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Region, Size
from textual.strip import Strip
from textual_plotext import PlotextPlot
from textual_plotext.plot import Plot

from dashboard.ui.history import History
from dashboard.ui.widgets import plot_lines

_CONSOLE = Console()
DEPTH_ROLES = ("ready", "running", "failed", "dead")
# plotext colours (names it knows, or 256-colour numbers): it has no "yellow", and an
# unknown name silently draws in the axes' colour. 3 is the terminal's yellow, the one
# Rich's "yellow" (the titles, the state panel) uses.
ROLE_COLORS = {"ready": "cyan", "running": 3, "done": "green", "failed": "red", "dead": "magenta"}


def downsample(xs: list[float], ys: list[float], buckets: int) -> tuple[list, list]:
    """At most two points per bucket of consecutive points: its lowest and its highest.

    A line of 300 points on a plot some 70 columns wide draws many segments into the same
    braille cells, and plotext's cost grows with the points; keeping each bucket's extremes
    (in time order) draws the same peaks and troughs.
    """
    n = len(xs)
    if buckets < 1 or n <= 2 * buckets:
        return xs, ys
    out_x: list[float] = []
    out_y: list[float] = []
    for b in range(buckets):
        lo, hi = b * n // buckets, (b + 1) * n // buckets
        low = min(range(lo, hi), key=ys.__getitem__)
        high = max(range(lo, hi), key=ys.__getitem__)
        for i in sorted({low, high}):
            out_x.append(xs[i])
            out_y.append(ys[i])
    return out_x, out_y


def nice_ticks(top: float, whole: bool, rows: int = 8) -> list[float]:
    """Round ticks from 0 up to `top` (whole numbers for counts), about one every third
    row; a plot of 2 or 3 rows gets 0 and `top` itself (a round tick could share a row
    with 0 and mislabel it)."""
    if top <= 0:
        return [0]
    if rows < 4:
        return [0, round(top) if whole else round(top, 1)]
    raw = top / max(rows // 3, 1)  # a tick every third row or so: evenly placed
    scale = 10 ** math.floor(math.log10(raw))
    step = next(m * scale for m in (1, 2, 5, 10) if m * scale >= raw)
    if whole:
        step = max(1, round(step))
    if step > top:  # one tick a plot (5 rows or fewer): 0 alone would leave it without scale
        return [0, round(top) if whole else round(top, 1)]
    return [i * step for i in range(int(top // step) + 1)]


def tick_label(value: float) -> str:
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


@lru_cache(maxsize=256)
def _rich_style(fullground, style, background) -> Style:
    """A plotext cell's colours as a Rich style, by way of plotext's own ANSI code."""
    return Text.from_ansi(colors_to_ansi(fullground, style, background) + "x").get_style_at_offset(
        _CONSOLE, 0
    )


class HistoryPlot(PlotextPlot):
    """A plot of History series against seconds ago (0 = the latest poll).

    replot() works out what the plot would draw (points at the plot's resolution, axes);
    if that is what it drew last time, plotext is not called and nothing repaints: a
    flat line (no waiting sessions, no failures) costs nothing from one poll to the next.
    """

    TITLE = ""
    WHOLE = True  # the series counts things: whole-number ticks

    def __init__(self, history: History, **kwargs) -> None:
        super().__init__(**kwargs)
        self.history = history
        self.border_title = self.TITLE
        self._drawn: tuple | None = None
        self._strips: list[Strip] | None = None
        self._strips_size = Size(0, 0)  # the size they were drawn for
        self._on_screen: list[Strip] | None = None  # the strips last painted
        self._frame_key: tuple | None = None  # what _frame_cells were built for
        self._frame_cells: plot_lines.Cells | None = None
        self._rows: dict[tuple, Strip] = {}  # the last picture's rows, by their cells
        self._frame = Plot()  # axes and labels only: see _matrix_strips
        self._lines: list[plot_lines.Series] = []  # what replot() chose to draw
        self._lims: tuple | None = None  # (xlim, ylim) of those lines
        self._ticks: list[float] = []  # the y ticks
        self._plotted = False  # self.plt holds this picture

    def on_mount(self) -> None:
        super().on_mount()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._redraw())
        self.replot()

    def _redraw(self) -> None:
        self._strips = None  # the same data in the new theme's colours
        self._rows = {}
        self.refresh()

    def on_resize(self) -> None:
        self.replot()  # the points kept depend on the width

    def on_show(self) -> None:
        self.replot()  # shown again (a larger terminal): what it skipped while hidden

    def replot(self) -> None:
        if not self.display:  # hidden on a small terminal: drawn when it is shown again
            return
        times = self.history.times
        if not times:
            drawing: tuple = ("no data yet", self.size)
        else:
            now = times[-1]
            ages = [t - now for t in times]  # <= 0: seconds before the latest poll
            lines = [
                (downsample(ages, list(ys), max(self.size.width // 2, 1)), color)
                for ys, color in self.series()
            ]
            top = max((max(ys) for (_, ys), _ in lines), default=0.0)
            span = max(round(-ages[0]), 1)
            # what the picture depends on, at the precision it can show
            drawing = (
                tuple((tuple(map(round, xs)), tuple(ys), color) for (xs, ys), color in lines),
                span,
                top,
                self.size,
            )
        if drawing == self._drawn:
            return
        self._drawn = drawing
        self._plotted = False  # self.plt holds an older picture (see plotext_figure)
        if not times:
            self._lines, self._lims, self._ticks = [], None, []
        else:
            self._ticks = nice_ticks(top, self.WHOLE, rows=self.size.height - 2) if top else [0, 1]
            # counts and ages are never negative
            self._lims = ((-span, 0), (0, max(top, self._ticks[-1], 1) * 1.1))
            self._lines = [(xs, ys, color) for (xs, ys), color in lines]
        # the frame alone: the lines are drawn by plot_lines. One point far off the canvas
        # stands for them, so that plotext draws the axes as it does for data.
        stand_in = [([self._lims[0][1] + 1e9], [0], None)] if self._lines else []
        self._configure(self._frame, stand_in)
        self._repaint()

    def plotext_figure(self):  # -> the Plot (self.plt), holding the whole picture
        """This picture drawn by plotext alone (the lines too): for the ANSI path."""
        if not self._plotted:
            self._configure(self.plt, self._lines)
            self._plotted = True
        return self.plt

    def _repaint(self) -> None:
        """Paint the lines whose cells changed: a new point or label moves one or two lines
        of a plot, and the rest of it is not sent to the terminal again."""
        old, self._strips = self._strips, None
        # only lines known to be on screen, at this size, are compared: anything else (the
        # first layout, a resize, strips never painted) is repainted whole
        if not old or old is not self._on_screen or self._strips_size != self.size:
            self.refresh()
            return
        try:
            new = self._matrix_strips()
        except (AttributeError, IndexError, TypeError):  # the ANSI path: see render_line
            self.refresh()
            return
        self._strips = new
        if len(new) != len(old):
            self.refresh()
            return
        for y, (was, now) in enumerate(zip(old, new, strict=True)):
            if was is not now and list(was) != list(now):
                self.refresh(Region(0, y, self.size.width, 1))  # content coordinates

    def _configure(self, plt, lines: list) -> None:
        plt.clear_data()
        plt.xlabel("")
        if self._lims is None:
            plt.title("no data yet")
            return
        (xlo, xhi), (ylo, yhi) = self._lims
        ticks = self._ticks
        plt.title("")
        for xs, ys, color in lines:
            plt.plot(xs, ys, color=color, marker="braille")
        plt.ylim(ylo, yhi)
        plt.yticks(ticks, [tick_label(t) for t in ticks])
        plt.xlim(xlo, xhi)
        xticks = [xlo, xlo // 2, 0]
        plt.xticks(xticks, [f"-{-x}s" if x else "now" for x in xticks])

    # --- drawing: plotext's cell matrix straight into strips ---------------------------------

    def render_line(self, y: int) -> Strip:
        """One line of the plot.

        PlotextPlot.render() asks plotext for an ANSI string, which Rich parses back into
        styled text and Textual converts again: that round trip cost more than plotext's
        own drawing. The cells plotext drew (character, colours, style per cell) are read
        here instead and turned into strips once per change; each distinct colour triple is
        translated by plotext's own ANSI code and Rich's decoder, so the colours are the
        ones the string would have had. Should plotext's internals change, the widget falls
        back to the ANSI string.
        """
        if self._strips is None:
            try:
                self._strips = self._matrix_strips()
            except (AttributeError, IndexError, TypeError):
                self._strips = []
        if not self._strips:
            self.plotext_figure()
            return super().render_line(y)
        self._on_screen = self._strips
        if y < len(self._strips):
            return self._strips[y]
        return Strip.blank(self.size.width, self.rich_style)

    def _matrix_strips(self) -> list[Strip]:
        """The frame from plotext, the lines drawn into it here (plot_lines), as strips."""
        return self._strips_of(self._frame, self._lines)

    def _cells_of(self, plot) -> plot_lines.Cells:
        """`plot` built by plotext at this size and theme. The frame's cells are kept: until
        its limits, ticks, size or theme change, the next lines are drawn on a copy."""
        width, height = self.size
        theme = self._get_plotext_theme_name(self.app.theme)
        key = (self.size, theme, self._lims, tuple(self._ticks), bool(self._lines))
        if plot is self._frame and self._frame_cells is not None and self._frame_key == key:
            return self._frame_cells.copy()
        plot.plotsize(width, height)
        plot._set_size(width, height)
        plot.theme(theme)
        plot._set_sizes()
        plot._build_matrix()
        cells = plot_lines.Cells.of(plot.monitor.matrix)
        if plot is self._frame:
            self._frame_key, self._frame_cells = key, cells.copy()
        return cells

    def _strips_of(self, plot, lines: list) -> list[Strip]:
        """Build `plot` at this size and theme, draw `lines` on its canvas, read its cells."""
        width, _ = self._strips_size = self.size
        matrix = self._cells_of(plot)
        if lines:
            plot_lines.draw(matrix, lines, *self._lims)
        strips = []
        made: dict[tuple, Strip] = {}  # this picture's rows, by their cells
        for row in reversed(range(len(matrix.marker))):  # plotext counts rows from the bottom
            key = (
                width,
                tuple(matrix.marker[row]),
                tuple(matrix.fullground[row]),
                tuple(matrix.style[row]),
                tuple(matrix.background[row]),
            )
            if (strip := self._rows.get(key)) is not None:  # the same row as last time
                strips.append(made.setdefault(key, strip))
                continue
            cells = zip(*key[1:], strict=True)
            segments: list[Segment] = []
            run: list[str] = []
            look = None
            for char, *colors in cells:
                if colors != look:
                    if run:
                        segments.append(Segment("".join(run), _rich_style(*look)))
                    run, look = [], colors
                run.append(char)
            if run:
                segments.append(Segment("".join(run), _rich_style(*look)))
            strip = made[key] = Strip(segments).crop_extend(0, width, None)
            strips.append(strip)
        self._rows = made
        return strips

    def series(self) -> list[tuple[list[float], str | int]]:  # pragma: no cover - overridden
        """The (values, colour) pairs to draw."""
        raise NotImplementedError


class DepthPlot(HistoryPlot):
    TITLE = "Jobs: [cyan]ready[/] [yellow]running[/] [red]failed[/] [magenta]dead[/]"

    def series(self) -> list[tuple[list[float], str | int]]:
        # done only grows: it would flatten the backlog lines, and throughput shows it
        out = []
        for role in DEPTH_ROLES:
            ys = list(self.history.depth[role])
            if role in ("failed", "dead") and not any(ys):
                continue
            out.append((ys, ROLE_COLORS[role]))
        return out


class SeriesPlot(HistoryPlot):
    """One history series as one line."""

    SERIES = ""  # the History attribute to draw
    COLOR: str | int = ""

    def series(self) -> list[tuple[list[float], str | int]]:
        return [(list(getattr(self.history, self.SERIES)), self.COLOR)]


class ThroughputPlot(SeriesPlot):
    TITLE = "Throughput (jobs done/s)"
    SERIES, COLOR = "throughput", "green"
    WHOLE = False


class OldestReadyPlot(SeriesPlot):
    TITLE = "Oldest ready job (age, s)"
    SERIES, COLOR = "oldest_ready_s", "cyan"
    WHOLE = False


class WaitingPlot(SeriesPlot):
    TITLE = "Sessions waiting on locks"
    SERIES, COLOR = "waiting", "red"
