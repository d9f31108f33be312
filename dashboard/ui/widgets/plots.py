"""History plots: each a PlotextPlot subclass that replots from the shared History."""

from __future__ import annotations

from textual_plotext import PlotextPlot

from dashboard.ui.history import History

DEPTH_ROLES = ("ready", "running", "failed", "dead")
ROLE_COLORS = {"ready": "cyan", "running": "yellow", "done": "green", "failed": "red",
               "dead": "magenta"}


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
            plt.plot(xs, ys, color=ROLE_COLORS[role], marker="braille")
            top = max(top, *ys)
        return top


class SeriesPlot(HistoryPlot):
    """One history series as one line."""

    SERIES = ""  # the History attribute to draw
    COLOR = ""

    def draw(self, plt, xs: list[float]) -> float:
        ys = list(getattr(self.history, self.SERIES))
        plt.plot(xs, ys, color=self.COLOR, marker="braille")
        return max(ys)


class ThroughputPlot(SeriesPlot):
    TITLE = "Throughput (jobs done/s)"
    SERIES, COLOR = "throughput", "green"


class OldestReadyPlot(SeriesPlot):
    TITLE = "Oldest ready job (age, s)"
    SERIES, COLOR = "oldest_ready_s", "cyan"


class WaitingPlot(SeriesPlot):
    TITLE = "Sessions waiting on locks"
    SERIES, COLOR = "waiting", "red"
