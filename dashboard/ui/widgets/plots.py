"""History plots: each a PlotextPlot subclass that replots from the shared History."""

from __future__ import annotations

from textual_plotext import PlotextPlot

from dashboard.ui.history import History

DEPTH_ROLES = ("ready", "running", "failed", "dead")
ROLE_COLORS = {"ready": "cyan", "running": "yellow", "done": "green", "failed": "red",
               "dead": "magenta"}


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


class HistoryPlot(PlotextPlot):
    """A plot of one series of the History; subclasses say which."""

    TITLE = ""

    def __init__(self, history: History, **kwargs) -> None:
        super().__init__(**kwargs)
        self.history = history
        self.border_title = self.TITLE

    def on_mount(self) -> None:
        super().on_mount()
        self.replot()

    def on_resize(self) -> None:
        self.replot()  # the points kept depend on the width

    def replot(self) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.xlabel("")
        xs = list(self.history.times)
        if xs:
            top = self.draw(plt, xs)
            plt.ylim(0, max(top, 1) * 1.1)  # counts and ages are never negative
        else:
            plt.title("no data yet")
        self.refresh()

    def draw(self, plt, xs: list[float]) -> float:  # pragma: no cover - overridden
        """Plot the series; return the highest y value."""
        raise NotImplementedError

    def line(self, plt, xs: list[float], ys: list[float], color: str) -> float:
        """One series as a braille line, no more points than the plot has columns for."""
        # a hidden plot has no width: it keeps every point until a resize shows it
        plt.plot(*downsample(xs, ys, self.size.width), color=color, marker="braille")
        return max(ys)


class DepthPlot(HistoryPlot):
    TITLE = ("Jobs: [cyan]ready[/] [yellow]running[/] [red]failed[/] "
             "[magenta]dead[/]")

    def draw(self, plt, xs: list[float]) -> float:
        # done only grows: it would flatten the backlog lines, and throughput shows it
        top = 0.0
        for role in DEPTH_ROLES:
            ys = list(self.history.depth[role])
            if role in ("failed", "dead") and not any(ys):
                continue
            top = max(top, self.line(plt, xs, ys, ROLE_COLORS[role]))
        return top


class SeriesPlot(HistoryPlot):
    """One history series as one line."""

    SERIES = ""  # the History attribute to draw
    COLOR = ""

    def draw(self, plt, xs: list[float]) -> float:
        return self.line(plt, xs, list(getattr(self.history, self.SERIES)), self.COLOR)


class ThroughputPlot(SeriesPlot):
    TITLE = "Throughput (jobs done/s)"
    SERIES, COLOR = "throughput", "green"


class OldestReadyPlot(SeriesPlot):
    TITLE = "Oldest ready job (age, s)"
    SERIES, COLOR = "oldest_ready_s", "cyan"


class WaitingPlot(SeriesPlot):
    TITLE = "Sessions waiting on locks"
    SERIES, COLOR = "waiting", "red"
