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


class ThroughputPlot(HistoryPlot):
    TITLE = "Throughput (jobs done/s)"

    def draw(self, plt, xs: list[float]) -> float:
        ys = list(self.history.throughput)
        plt.plot(xs, ys, color="green", marker="braille")
        return max(ys)


class OldestReadyPlot(HistoryPlot):
    TITLE = "Oldest ready job (age, s)"

    def draw(self, plt, xs: list[float]) -> float:
        ys = list(self.history.oldest_ready_s)
        plt.plot(xs, ys, color="cyan", marker="braille")
        return max(ys)


class WaitingPlot(HistoryPlot):
    TITLE = "Sessions waiting on locks"

    def draw(self, plt, xs: list[float]) -> float:
        ys = list(self.history.waiting)
        plt.plot(xs, ys, color="red", marker="braille")
        return max(ys)
