"""A line of (text, style) parts drawn straight into a strip, without a Rich Text or a
layout: how the header and the state panel draw their lines (laying them out as a Static
cost more than building them, on every poll)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.cells import set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

Part = tuple[str, str]  # text and its style, as given to Text.append

_styles: dict[str, Style | None] = {}


def parts_strip(parts: Iterable[Part], width: int) -> Strip:
    """(text, style) parts as a strip of exactly `width` cells, cut with an ellipsis as
    Rich cuts the Text they make, without laying that Text out (the header and the state
    panel change on every poll). The text must be shown-safe already (no control
    characters)."""
    segments = []
    for text, style in parts:
        if text:
            if style not in _styles:
                _styles[style] = Style.parse(style) if style else None
            segments.append(Segment(text, _styles[style]))
    strip = Strip(segments)
    if strip.cell_length > width:
        if width <= 0:
            return Strip([])
        # the ellipsis takes the style of the character it replaces, counted in characters
        # as Text.truncate counts them (a cut wide character leaves a space behind)
        kept = len(set_cell_size("".join(seg.text for seg in segments), width - 1))
        at, style = 0, None
        for segment in segments:
            at += len(segment.text)
            if at > kept:
                style = segment.style
                break
        strip = Strip([*strip.crop(0, width - 1), Segment("…", style)])
    return strip.crop_extend(0, width, None)


def parts_text(parts: Iterable[Part]) -> Text:
    """The parts as one Text (what `parts_strip` draws)."""
    text = Text(no_wrap=True, overflow="ellipsis")
    for part, style in parts:
        text.append(part, style)
    return text
