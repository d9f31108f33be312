"""The `plot_frame` and `plot_colors` pieces: plotext's cell matrix and colour code.

`plot_frame`: ui/widgets/plots.py has plotext build a plot's frame (axes, ticks, labels)
with its private `_set_size`, `_set_sizes` and `_build_matrix`, and reads the cells from
`plot.monitor.matrix` (textual-plotext's `_get_plotext_theme_name` names the theme:
`theme_name`);
ui/widgets/plot_lines.py draws the lines into them. Off, `frame_matrix` raises
FrameUnavailable (an AttributeError, which the plot catches) and the plot takes
textual-plotext's stock path: plotext's ANSI string, parsed by Rich.

`plot_colors`: a cell's (foreground, style, background) as plotext's own ANSI code
(`plotext._utility.colors_to_ansi`). Off, the public `plotext.colorize` paints a character
with the same colours instead.
"""

from __future__ import annotations

from typing import Any

from dashboard.ui.forks import use


class FrameUnavailable(AttributeError):
    """The `plot_frame` piece is off: draw through plotext's ANSI string."""


def probe_frame() -> bool:
    from textual_plotext import PlotextPlot
    from textual_plotext.plot import Plot

    PlotextPlot._get_plotext_theme_name  # noqa: B018 (AttributeError: gone)
    for name in ("_set_size", "_set_sizes", "_build_matrix"):
        getattr(Plot, name)
    return True


def theme_name(widget: Any) -> str:
    """The plotext theme `widget` (a PlotextPlot) draws in for its app's theme. Raises
    FrameUnavailable when the piece is off."""
    if not use("plot_frame", probe_frame):
        raise FrameUnavailable("plot_frame is off")
    return widget._get_plotext_theme_name(widget.app.theme)


def frame_matrix(plot: Any, width: int, height: int, theme: str) -> Any:
    """plotext's cell matrix for `plot` (its data and axes set by the caller) at this size
    and theme. Raises FrameUnavailable when the piece is off."""
    if not use("plot_frame", probe_frame):
        raise FrameUnavailable("plot_frame is off")
    plot.plotsize(width, height)
    plot._set_size(width, height)
    plot.theme(theme)
    plot._set_sizes()
    plot._build_matrix()
    return plot.monitor.matrix


def probe_colors() -> Any:
    from plotext._utility import colors_to_ansi

    return colors_to_ansi


def colored(fullground: object, style: object, background: object) -> str:
    """An "x" in plotext's colours, as ANSI (what Rich reads the cell's style from)."""
    to_ansi = use("plot_colors", probe_colors)
    if to_ansi is not None:
        return to_ansi(fullground, style, background) + "x"
    import plotext

    return plotext.colorize("x", fullground, style, background)
