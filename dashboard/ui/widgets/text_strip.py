"""A line of text drawn straight into a strip, without a layout: how the header and the
state panel draw their lines (laying them out as a Static cost more than building them,
on every poll)."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text
from textual.strip import Strip


def text_strip(text: Text, width: int, console: Console) -> Strip:
    """`text` as a strip of exactly `width` cells, cut with an ellipsis."""
    line = text.copy()
    line.truncate(width, overflow="ellipsis")
    return Strip(list(line.render(console, end=""))).crop_extend(0, width, None)
