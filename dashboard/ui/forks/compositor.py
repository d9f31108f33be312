"""The `compositor` piece's switch: the screen class queuetop's apps draw with."""

from __future__ import annotations

from textual.screen import Screen

from dashboard.ui.forks import use


def probe() -> type[Screen]:
    """LineScreen, if the Compositor it extends still has what it reads."""
    from textual._compositor import Compositor

    from dashboard.ui.forks.line_compositor import LineScreen

    Compositor._regions_to_spans  # noqa: B018 (AttributeError: gone)
    Compositor()._dirty_regions  # noqa: B018
    return LineScreen


def screen_class() -> type[Screen]:
    """LineScreen (forks/line_compositor.py) when the piece is on, else Textual's Screen."""
    return use("compositor", probe) or Screen
