"""The `scroll` piece: a table's virtual size set without laying the screen out.

Setting `virtual_size` lays out the whole screen, but a table's size on screen does not
depend on its rows: only a scrollbar that appears or goes needs a layout, and Textual's
`Widget._scroll_update` asks for one then. Off, `virtual_size` is set as Textual's own
widgets set it.
"""

from __future__ import annotations

from textual.geometry import Size
from textual.widget import Widget

from dashboard.ui.forks import use


def probe() -> object:
    return Widget._scroll_update


def set_virtual_size(widget: Widget, size: Size, shown: bool) -> None:
    """`widget.virtual_size = size`, without a layout of the screen when the piece is on
    (a hidden widget gets its layout when it is shown)."""
    update = use("scroll", probe)
    if update is None:
        widget.virtual_size = size
        return
    widget.set_reactive(type(widget).virtual_size, size)
    if shown:
        update(widget, size)
