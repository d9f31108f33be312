"""A plot's rows as strips: its cells (plot_frame's, in plotext's colour vocabulary) in
Rich styles, the frame's rows kept, and the rows a line crosses drawn again at the cost of
their line cells."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from rich.color import Color
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from dashboard.ui.widgets.plot_frame import NO_COLOR

# plotext's colour names and their 256-colour numbers (plotext._dict.color_codes)
COLOR_CODES = {
    "black": 0,
    "white": 15,
    "gray": 8,
    "gray+": 7,
    "red": 1,
    "red+": 9,
    "green": 2,
    "green+": 10,
    "orange": 3,
    "orange+": 11,
    "blue": 4,
    "blue+": 12,
    "magenta": 5,
    "magenta+": 13,
    "cyan": 6,
    "cyan+": 14,
}


def rich_color(color: object) -> Color | None:
    """A plotext colour (a name, a 256-colour number, an RGB triple, "default") as Rich's:
    the colour plotext's ANSI code for it would give."""
    if color == NO_COLOR or color is None:
        return None
    if isinstance(color, str):
        return Color.from_ansi(COLOR_CODES[color])
    if isinstance(color, int):
        return Color.from_ansi(color)
    red, green, blue = color  # type: ignore[misc]
    return Color.from_rgb(red, green, blue)


@lru_cache(maxsize=256)
def _rich_style(fullground, style, background) -> Style:
    """A cell's colours (plotext's vocabulary; the style is "default") as a Rich style."""
    if style != NO_COLOR:  # pragma: no cover - the plots draw in the default style
        raise ValueError(f"unknown plot style {style!r}")
    return Style(color=rich_color(fullground), bgcolor=rich_color(background))


def line_style(color) -> Style:
    """The style a line of this plotext colour is drawn in (a legend uses it too)."""
    return _rich_style(color, "default", "default")


def _strip(marker, fullground, style, background, width: int) -> Strip:
    """One row of plotext cells as a strip: a segment per run of the same colours."""
    segments: list[Segment] = []
    run: list[str] = []
    look = None
    for char, *colors in zip(marker, fullground, style, background, strict=True):
        if colors != look:
            if run:
                segments.append(Segment("".join(run), _rich_style(*look)))
            run, look = [], colors
        run.append(char)
    if run:
        segments.append(Segment("".join(run), _rich_style(*look)))
    return Strip(segments).crop_extend(0, width, None)


class FrameRow:
    """One row of a plot's frame as plotext built it: its strip, and what a row with line
    cells on the canvas needs (the cells outside the canvas as segments, the canvas'
    blank cell), so that such a row costs its line cells, not its width."""

    def __init__(self, cells: tuple[list, list, list, list], canvas: range, width: int) -> None:
        self.cells = cells
        self.width = width
        self.strip = _strip(*cells, width)
        marker, fullground, style, background = cells
        inside = {(marker[x], fullground[x], style[x], background[x]) for x in canvas}
        self.canvas = canvas
        self.blank = next(iter(inside)) if len(inside) == 1 else None  # else: cell by cell
        if self.blank is not None:
            self.left = list(_strip(*(a[: canvas.start] for a in cells), canvas.start))
            self.right = list(_strip(*(a[canvas.stop :] for a in cells), width - canvas.stop))
            self.blank_style = _rich_style(*self.blank[1:])

    @classmethod
    def of(cls, frame, row: int, width: int) -> FrameRow:
        """Row `row` (from the bottom) of a plot_frame.Frame."""
        return cls(
            (frame.marker[row], frame.fullground[row], frame.style[row], frame.background[row]),
            frame.cols,
            width,
        )

    def with_cells(self, cells: Sequence[tuple[int, tuple[str, object]]]) -> Strip:
        """This row with line cells (column on the canvas, (braille character, colour); in
        column order) drawn on its canvas, as plotext's insert_element would: a marker,
        its colour, the default style, the background kept."""
        start = self.canvas.start
        if self.blank is None:
            marker, fullground, style, background = (list(a) for a in self.cells)
            for x, (char, color) in cells:
                x += start
                marker[x], fullground[x], style[x] = char, color, "default"
            return _strip(marker, fullground, style, background, self.width)
        blank, background = self.blank[0], self.blank[3]
        segments = list(self.left)
        x = start
        run: list[str] = []
        look = None
        for col, (char, color) in cells:
            col += start
            if col != x or color != look:  # a gap, or another colour: the run ends
                if run:
                    segments.append(Segment("".join(run), _rich_style(look, "default", background)))
                    run = []
                if col != x:
                    segments.append(Segment(blank * (col - x), self.blank_style))
                look = color
            run.append(char)
            x = col + 1
        if run:
            segments.append(Segment("".join(run), _rich_style(look, "default", background)))
        if x < self.canvas.stop:
            segments.append(Segment(blank * (self.canvas.stop - x), self.blank_style))
        segments += self.right
        return Strip(segments, self.width)
