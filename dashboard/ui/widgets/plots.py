"""History plots: each a widget that replots from the shared History, drawn cell by cell
as plotext 5 would draw it (plot_frame, plot_lines, plot_rows; plotext itself is the
reference in tests/test_ui_plots.py, not on the drawing path)."""

from __future__ import annotations

from rich.text import Text
from textual.color import Color
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from dashboard.text.untrusted import shown
from dashboard.ui.history import History
from dashboard.ui.widgets import plot_frame, plot_lines
from dashboard.ui.widgets.plot_axes import (
    downsample,
    held_top,
    nice_ticks,
    runs,
    tick_label,
    window_s,
)
from dashboard.ui.widgets.plot_rows import FrameRow, line_style
from dashboard.ui.widgets.state_panel import wrap
from dashboard.ui.widgets.text_strip import parts_strip

__all__ = ["DepthPlot", "HistoryPlot", "P95WaitPlot", "downsample", "nice_ticks"]

DEPTH_ROLES = ("ready", "running", "failed", "dead")
# plotext colours (names it knows, or 256-colour numbers): it has no "yellow", and an
# unknown name silently draws in the axes' colour. 3 is the terminal's yellow, the one
# Rich's "yellow" (the titles, the state panel) uses. Dead is 135 (a violet of the fixed
# 256 colours), not magenta: Textual's dark theme draws magenta in its red, failed's.
ROLE_COLORS = {"ready": "cyan", "running": 3, "done": "green", "failed": "red", "dead": 135}
SHORT_ROLES = {"running": "run", "failed": "fail"}
# A plot is drawn again when its data has moved by a cell column of its picture (the
# window's seconds over its columns: 5 s for a 5-minute window 62 columns wide), and at
# most every REDRAW_EVERY_S seconds of its data (a short window), to the nearest poll. The
# header, the state panel and the tables show every poll; a line that moves by less than
# a column moves by braille dots, a column is the finest step a line of min/max buckets
# two columns wide can show, and the plots' redraws were the largest share of the
# client's CPU (docs/development.md, "The floor under queuetop's CPU").
REDRAW_EVERY_S = 3.0


def redraw_after(times: list[float], every_s: float = REDRAW_EVERY_S) -> float:
    """Seconds of data after which a plot is drawn again: every_s to the nearest poll, the
    polls `times` apart (the last two). With 3 s: every third poll at a 1 s interval,
    every poll at 2 s and above, every sixth at 0.5 s."""
    gap = times[-1] - times[-2] if len(times) > 1 else 0.0
    return every_s - max(gap, 0.0) / 2


class HistoryPlot(Widget):
    """A plot of History series against seconds ago (0 = the latest poll).

    replot() works out what the plot would draw (points at the plot's resolution, axes);
    if that is what it drew last time, nothing is drawn and nothing repaints: a flat line
    (no waiting sessions, no failures) costs nothing from one poll to the next. The axes
    come in steps (plot_axes), so the frame is kept from one poll to the next, and only
    the rows the lines cross are drawn again.
    """

    DEFAULT_CSS = """
    HistoryPlot {
        width: 1fr;
        height: 1fr;
    }
    """

    TITLE = ""
    SHORT_TITLE = ""  # when TITLE does not fit the border
    WHOLE = True  # the series counts things: whole-number ticks

    def __init__(self, history: History, **kwargs) -> None:
        super().__init__(**kwargs)
        self.history = history
        self._title: Text | str | None = None  # what the border shows
        self._drawn: tuple | None = None
        self._top: float | None = None  # the y axis' top, held while it fits the data
        self._strips: list[Strip] | None = None
        self._strips_size = Size(0, 0)  # the size they were drawn for
        self._on_screen: list[Strip] | None = None  # the strips last painted
        self._frame_key: tuple | None = None  # what the frame's rows were built for
        self._frame_rows: list[FrameRow] = []  # top row first
        self._coords: list[plot_lines.Coords] = []  # the lines as canvas dots
        self._canvas: tuple[range, range] = (range(0), range(0))  # plotext's canvas cells
        self._rows: dict[tuple, Strip] = {}  # the last picture's rows the lines crossed
        self._lines: list[plot_lines.Series] = []  # what replot() chose to draw
        self._lims: tuple | None = None  # (xlim, ylim) of those lines
        self._ticks: list[float] = []  # the y ticks
        self._drawn_at: tuple[float, Size] | None = None  # the data's time and the size
        self._show_title()

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._redraw())
        self.replot(now=True)

    def _redraw(self) -> None:
        self._strips = None  # the same data in the new theme's colours
        self._rows = {}
        self.refresh()

    def on_resize(self) -> None:
        self._show_title()
        self.replot(now=True)  # the points kept depend on the width

    def on_show(self) -> None:
        self.replot(now=True)  # shown again (a larger terminal): what it skipped while hidden

    # --- the border's title ------------------------------------------------------------------

    def title(self, room: int) -> Text | str:
        """The border's title for `room` cells."""
        return self.TITLE if len(self.TITLE) <= room or not self.SHORT_TITLE else self.SHORT_TITLE

    def _show_title(self, size: Size | None = None) -> None:
        width = (size or self.size).width
        title = self.title(max(width - 4, 0) if width else 999)
        if title != self._title:  # setting it repaints the plot
            self._title = title
            self.border_title = title

    # --- what to draw ------------------------------------------------------------------------

    def replot(self, now: bool = False) -> None:
        """Draw the history again if it moved the picture and, unless `now`, if the picture
        is a column's seconds old (REDRAW_EVERY_S at least) to the nearest poll (a history
        that starts again, as a replay's, is drawn)."""
        if not self.display:  # hidden on a small terminal: drawn when it is shown again
            return
        times = self.history.times
        size = self.size  # a walk to the screen's map: read once
        if not now and times and self._drawn_at is not None:
            at, drawn_size = self._drawn_at
            if drawn_size == size and 0 <= times[-1] - at < redraw_after(times, self._column_s()):
                return
        self._drawn_at = (times[-1], size) if times else None
        if not times:
            self._lines, self._lims, self._ticks, self._coords = [], None, [], []
            self._draw(("no data yet", size), size)
            return
        latest = times[-1]
        ages = [t - latest for t in times]  # <= 0: seconds before the latest poll
        buckets = max(size.width // 2, 1)
        lines = [  # a series with gaps (None) is drawn as the stretches between them
            (*downsample(xs, ys, buckets), color)
            for values, color in self.series()
            for xs, ys in runs(ages, values)
        ]
        top = max((max(ys) for _, ys, _ in lines), default=0.0)
        self._top = held_top(top, self._top, self.WHOLE)
        self._ticks = nice_ticks(self._top, self.WHOLE, rows=size.height - 2)
        # counts and ages are never negative; a little room above the top
        self._lims = ((-window_s(-ages[0]), 0), (0, self._top * 1.1))
        self._lines = lines
        self._frame_now(size)
        # the lines as canvas dots: the same dots on the same frame draw the same picture
        cols, rows = self._canvas
        self._coords = plot_lines.series_coords(lines, *self._lims, len(cols), len(rows))
        self._draw(
            (self._frame_key, tuple((tuple(px), tuple(py), c) for px, py, c in self._coords)),
            size,
        )

    def _column_s(self) -> float:
        """How often the picture is drawn again: the seconds a cell column stands for in
        the picture drawn last, REDRAW_EVERY_S at least."""
        columns = len(self._canvas[0])
        if self._lims is None or not columns:
            return REDRAW_EVERY_S
        return max(REDRAW_EVERY_S, -self._lims[0][0] / columns)

    def _draw(self, drawing: tuple, size: Size) -> None:
        """Draw the picture `drawing` stands for (at `size`, the plot's now), unless it is
        the one drawn last."""
        if drawing == self._drawn:
            return
        self._drawn = drawing
        self._show_title(size)
        self._repaint(size)

    def _repaint(self, size: Size) -> None:
        """Paint the lines whose cells changed: a new point or label moves one or two lines
        of a plot, and the rest of it is not sent to the terminal again."""
        old, self._strips = self._strips, None
        # only lines known to be on screen, at this size, are compared: anything else (the
        # first layout, a resize, strips never painted) is repainted whole
        if not old or old is not self._on_screen or self._strips_size != size:
            self.refresh()
            return
        new = self._matrix_strips(size)
        self._strips = new
        if len(new) != len(old):
            self.refresh()
            return
        width = self._strips_size.width
        changed = [  # content coordinates
            Region(0, y, width, 1)
            for y, (was, now) in enumerate(zip(old, new, strict=True))
            if was is not now and list(was) != list(now)
        ]
        if changed:
            self.refresh(*changed)

    def x_ticks(self) -> list[tuple[float, str]]:
        """The x axis' ticks: the window's start, now, and half way (placed in that order:
        where they do not all fit, the ends stay)."""
        assert self._lims is not None
        start = self._lims[0][0]
        return [(start, f"-{-start}s"), (0, "now"), (start // 2, f"-{-(start // 2)}s")]

    # --- drawing: the frame, the lines drawn into it -----------------------------------------

    def render_line(self, y: int) -> Strip:
        """One line of the plot: the frame's row, with the cells the lines cross drawn in
        (plot_rows); rows become strips once per change."""
        if self._strips is None:
            self._strips = self._matrix_strips()
        self._on_screen = self._strips
        if y < len(self._strips):
            return self._strips[y]
        return Strip.blank(self.size.width, self.rich_style)

    def _colors(self) -> tuple[object, object, object]:
        """The canvas', the axes' and the ticks' colours: textual-plotext's theme for the
        app's (its surface behind, its foreground for the axes)."""
        variables = self.app.theme_variables
        surface = Color.parse(variables.get("surface", "black")).rgb
        return surface, surface, Color.parse(variables.get("foreground", "white")).rgb

    def _frame_now(self, size: Size) -> bool:
        """The frame's rows, built at `size` and this theme when its limits, ticks, size or
        theme changed, and kept until they change again. True: built now."""
        width, height = size
        colors = self._colors()
        key = (size, colors, self._lims, tuple(self._ticks))
        if key == self._frame_key:
            return False
        if self._lims is None:
            frame = plot_frame.build(width, height, colors, title="no data yet")
        else:
            xlim, ylim = self._lims
            frame = plot_frame.build(
                width,
                height,
                colors,
                xlim=xlim,
                ylim=ylim,
                xticks=self.x_ticks(),
                yticks=[(t, tick_label(t)) for t in self._ticks],
            )
        self._canvas = (frame.cols, frame.rows)
        self._frame_rows = [
            FrameRow.of(frame, r, width)
            for r in reversed(range(height))  # plot_frame counts rows from the bottom
        ]
        self._frame_key = key
        self._rows = {}
        return True

    def _matrix_strips(self, size: Size | None = None) -> list[Strip]:
        """The frame's strips at `size` (read here if not given: a paint), with the rows the
        lines cross drawn again; a row whose line cells are the ones it had last time keeps
        its strip."""
        size = size or self.size  # a walk to the screen's map: read once
        self._strips_size = size
        rebuilt = self._frame_now(size)
        strips = [row.strip for row in self._frame_rows]
        if not self._lines:
            return strips
        cols, rows = self._canvas
        if rebuilt or not self._coords:  # another canvas than replot() placed the lines on
            self._coords = plot_lines.series_coords(self._lines, *self._lims, len(cols), len(rows))
        bottom = len(self._frame_rows) - 1
        made: dict[tuple, Strip] = {}
        for row, line in plot_lines.cells_of(self._coords, len(cols), len(rows)).items():
            y = bottom - (row + rows.start)  # canvas rows count from the bottom
            key = (y, tuple(sorted(line.items())))
            strip = self._rows.get(key)
            if strip is None:
                strip = self._frame_rows[y].with_cells(key[1])
            strips[y] = made[key] = strip
        self._rows = made
        return strips

    def series(self) -> list[tuple[list[float], str | int]]:  # pragma: no cover - overridden
        """The (values, colour) pairs to draw."""
        raise NotImplementedError


class DepthPlot(HistoryPlot):
    """Jobs per role; the title is the legend, each role in its line's own colour."""

    def _roles(self) -> list[str]:
        # failed and dead only while they have jobs: their lines are not drawn otherwise
        return [
            role
            for role in DEPTH_ROLES
            if role not in ("failed", "dead") or any(self.history.depth[role])
        ]

    def title(self, room: int) -> Text:
        legend = Text("Jobs:")
        for role in self._roles():
            legend.append(" ")
            legend.append(role, line_style(ROLE_COLORS[role]))
        if len(legend) > room:  # a narrow plot: the legend alone
            legend = legend[len("Jobs: ") :]
        if len(legend) > room:  # narrower still: the roles' short names, in their colours
            legend = Text(" ").join(
                Text(SHORT_ROLES.get(role, role), line_style(ROLE_COLORS[role]))
                for role in self._roles()
            )
        return legend

    def series(self) -> list[tuple[list[float], str | int]]:
        # done only grows: it would flatten the backlog lines, and throughput shows it
        return [(list(self.history.depth[role]), ROLE_COLORS[role]) for role in self._roles()]


class SeriesPlot(HistoryPlot):
    """One history series as one line."""

    SERIES = ""  # the History attribute to draw
    COLOR: str | int = ""

    def series(self) -> list[tuple[list[float], str | int]]:
        return [(list(getattr(self.history, self.SERIES)), self.COLOR)]


class ThroughputPlot(SeriesPlot):
    TITLE = "Throughput (jobs done/s)"
    SHORT_TITLE = "Done/s"
    SERIES, COLOR = "throughput", "green"
    WHOLE = False


class OldestReadyPlot(SeriesPlot):
    TITLE = "Oldest ready job (age, s)"
    SHORT_TITLE = "Oldest ready, s"
    SERIES, COLOR = "oldest_ready_s", "cyan"
    WHOLE = False


class WaitingPlot(SeriesPlot):
    TITLE = "Sessions waiting on locks"
    SHORT_TITLE = "Waiting"
    SERIES, COLOR = "waiting", "red"


class P95WaitPlot(SeriesPlot):
    """The queue's p95 wait over the latency window, poll by poll; where no poll has one,
    what the latest said instead (the spec cannot measure it, no job started lately)."""

    TITLE = "Wait p95 (ready→started, s)"
    SHORT_TITLE = "Wait p95, s"
    SERIES, COLOR = "p95_wait_s", "orange"
    WHOLE = False
    _message: str | None = None

    def message(self) -> str | None:
        """What to show instead of a line: None while any poll of the history has a p95."""
        if not self.history.times or any(v is not None for v in self.history.p95_wait_s):
            return None
        return shown(self.history.p95_wait_note or "no p95 wait yet")  # names from the spec

    def replot(self, now: bool = False) -> None:
        message = self.message() if self.display else self._message
        if message != self._message:  # a message, or a line again: painted whole
            self._message = message
            self._drawn = self._strips = self._on_screen = None
            self._rows = {}
            self.refresh()
            now = True
        if message is None:
            super().replot(now)

    def render_line(self, y: int) -> Strip:
        if self._message is None:
            return super().render_line(y)
        lines = wrap(self._message, max(self.size.width - 2, 10))
        text = f" {lines[y]}" if y < len(lines) else ""
        return parts_strip(((text, "yellow"),), self.size.width).apply_style(self.rich_style)
