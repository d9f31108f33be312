"""The header's parts drawn straight into a strip show what Rich draws for the same Text:
every width, from wider than the line down to one cell, with wide characters in the cut."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text
from textual.strip import Strip

from dashboard.ui.widgets.text_strip import parts_strip, parts_text

PARTS = [
    (" queuetop ", "bold reverse"),
    (" ● live ", "bold green"),
    (" at 12:03:04", "dim"),
    (" (5 ms", "dim"),
    (", db 0.6%", "dim"),
    (") ", "dim"),
    ("", "yellow"),  # an empty part draws nothing
    (" queue ", "dim"),
    ("ジョブ.キュー", "bold"),  # two cells per character: the cut may fall inside one
    (" on ", "dim"),
    ("app@db.internal:5432/prod", ""),
]


def rich_strip(text: Text, width: int, console: Console) -> Strip:
    """What Rich draws: `text` cut to `width` cells with an ellipsis, padded to `width`."""
    line = text.copy()
    line.truncate(width, overflow="ellipsis")
    return Strip(list(line.render(console, end=""))).crop_extend(0, width, None)


def cells(strip) -> list[tuple[str, object]]:
    return [(char, seg.style or None) for seg in strip for char in seg.text]


def test_parts_draw_as_rich_draws_their_text_at_every_width():
    console = Console(width=300)
    text = parts_text(PARTS)
    assert text.cell_len > 60
    for width in range(1, text.cell_len + 10):
        ours, rich = parts_strip(PARTS, width), rich_strip(text, width, console)
        assert ours.cell_length == rich.cell_length == width
        assert cells(ours) == cells(rich), f"width {width}"
