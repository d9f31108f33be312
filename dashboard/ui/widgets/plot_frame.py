"""A history plot's frame (box, ticks, labels), drawn here as plotext 5 lays it out.

plotext is not on the drawing path any more: its figure cost more than the rest of the
dashboard (2.71x the client CPU with it, bench/vs_pg_activity.py --pieces) and the fast
way round it read its private matrix. The layout below is plotext's own, written out
for the one kind of figure the plots are (a box, labelled y ticks on the left, labelled
x ticks below, no title but "no data yet"): the same canvas, the same tick rows and
columns (its get_matrix_data: plot_lines.canvas_coords), the same x label placement
(its "dynamic" alignment and its check for room) and the same colours
(textual-plotext's theme for the app's: `surface` behind, `foreground` for the axes).
tests/test_ui_plots.py compares these cells with plotext's own, at many sizes, cell by
cell.

Cells come as plotext holds them, bottom row first, four parallel arrays (character,
foreground, style, background), colours in its vocabulary (a name, a 256-colour number,
an RGB triple, "default"); plot_rows turns them into strips.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dashboard.ui.widgets.plot_lines import canvas_coords

SPACE = " "
NO_COLOR = "default"

Tick = tuple[float, str]  # a value and its label


@dataclass
class Frame:
    """A frame's cells (bottom row first, as plotext counts rows) and its canvas."""

    marker: list[list[str]]
    fullground: list[list[object]]
    style: list[list[object]]
    background: list[list[object]]
    cols: range  # the canvas' columns
    rows: range  # the canvas' rows, counted from the bottom


def _dynamic_col(row: list[str], label: str, coord: int) -> int:
    """plotext's correct_coord: where a label centred on `coord` starts, moved off the
    row's ends."""
    n = len(label)
    b, e = max(coord - n + 1, 0), min(coord + n, len(row) - 1)
    free = [i for i in range(b, e) if row[i] == SPACE]
    b, e = min(free, default=coord - n + 1), max(free, default=coord + n)
    b, e = e - n + 1, b + n
    return (b + e - n) // 2


class _Cells:
    def __init__(self, width: int, height: int, canvas: tuple[range, range], colors) -> None:
        canvas_color, axes_color = colors
        self.width, self.height = width, height
        cols, rows = canvas
        self.marker = [[SPACE] * width for _ in range(height)]
        self.fullground: list[list[object]] = [[NO_COLOR] * width for _ in range(height)]
        self.style: list[list[object]] = [[NO_COLOR] * width for _ in range(height)]
        self.background: list[list[object]] = [
            [canvas_color if (c in cols and r in rows) else axes_color for c in range(width)]
            for r in range(height)
        ]

    def put(self, col: int, row: int, char: str, color: object) -> None:
        if 0 <= col < self.width and 0 <= row < self.height:
            self.marker[row][col] = char
            self.fullground[row][col] = color

    def text(self, col: int, row: int, text: str, color: object) -> None:
        for i, char in enumerate(text):
            self.put(col + i, row, char, color)

    def label(self, col: int, row: int, text: str, color: object, how: str) -> bool:
        """A label placed as plotext's add_horizontal_string with check_space: only where
        it and a cell either side are blank; True if it was placed."""
        n = len(text)
        if how == "center":
            col -= n // 2
        elif how == "dynamic":
            col = _dynamic_col(self.marker[row], text, col)
        b, e = max(col - 1, 0), min(col + n + 1, self.width)
        if not (
            all(self.marker[row][c] == SPACE for c in range(b, e)) and 0 <= col <= self.width - n
        ):
            return False
        self.text(col, row, text, color)
        return True


def build(
    width: int,
    height: int,
    colors: tuple[object, object, object],
    *,
    xlim: tuple[float, float] | None = None,
    ylim: tuple[float, float] | None = None,
    xticks: Sequence[Tick] = (),
    yticks: Sequence[Tick] = (),
    title: str | None = None,
) -> Frame:
    """The frame of a width x height plot: with limits, its box, y tick labels on the left
    and x tick labels below; without (`title`, as "no data yet"), the title above a box.
    `colors`: the canvas', the axes' and the ticks' (plotext's theme)."""
    canvas_color, axes_color, ticks_color = colors
    ylabels = [label for _, label in yticks]
    label_width = max((len(label) for label in ylabels), default=0)
    ylabels = [SPACE * (label_width - len(label)) + label for label in ylabels]
    xlabels = [label for _, label in xticks]
    xlabel_rows = 1 if xlabels else 0
    title_rows = 1 if title is not None else 0
    canvas_width = width - 2 - label_width
    canvas_height = height - 2 - xlabel_rows - title_rows
    col_start, row_start = label_width + 1, xlabel_rows + 1
    col_end, row_end = col_start + canvas_width, row_start + canvas_height
    canvas = (range(col_start, col_end), range(row_start, row_end))
    cells = _Cells(width, height, canvas, (canvas_color, axes_color))

    if title and height > 0:
        cells.label(col_start + canvas_width // 2, row_end + 1, title, ticks_color, "center")
    cticks: list[int] = []
    if xlim is not None and xticks:
        cols = canvas_coords([x for x, _ in xticks], xlim, canvas_width)
        row = min(row_start - 2, height - 1)
        cticks = [
            c
            for c, label in zip(cols, xlabels, strict=True)
            if height > 0 and cells.label(col_start + c, row, label, ticks_color, "dynamic")
        ]
    if canvas_height >= -1:  # the box's top
        cells.text(col_start, row_end, "─" * max(canvas_width, 0), ticks_color)
    rticks: list[int] = []
    if ylim is not None and yticks:
        rticks = canvas_coords([y for y, _ in yticks], ylim, canvas_height)
        if width >= label_width:
            for r, label in zip(rticks, ylabels, strict=True):
                cells.text(0, r + row_start, label, ticks_color)
    if width >= label_width + 1:  # the y axis, a tick where a label is
        for i in range(canvas_height):
            cells.put(label_width, row_start + i, "┤" if i in rticks else "│", ticks_color)
    if width >= label_width + 2:  # the box's right side
        for i in range(canvas_height):
            cells.put(col_end, row_start + i, "│", ticks_color)
    if canvas_height >= 0 and canvas_width >= 0:
        cells.put(col_start - 1, row_start - 1, "└", ticks_color)
        cells.put(col_end, row_start - 1, "┘", ticks_color)
        cells.put(col_start - 1, row_end, "┌", ticks_color)
        cells.put(col_end, row_end, "┐", ticks_color)
    if canvas_height >= -1:  # the x axis, a tick where a label went
        axis = "".join("┬" if i in cticks else "─" for i in range(max(canvas_width, 0)))
        cells.text(col_start, row_start - 1, axis, ticks_color)
    return Frame(cells.marker, cells.fullground, cells.style, cells.background, *canvas)
