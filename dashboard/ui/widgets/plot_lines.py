"""The lines of a history plot, drawn into a frame's cells as plotext draws them.

plotext builds a plot's frame (axes, ticks, labels) in a fraction of a millisecond, and
then spends ten times that on the data: its braille line drawing goes through generic
helpers (lists of markers and colours per point, set-based de-duplication, nested
flattening) that cost more than a refresh of the rest of the dashboard. The plots are
redrawn whenever their data moves, on every poll of a busy queue, so this module does
the same drawing directly: the same canvas coordinates (its get_matrix_data and its
rounding, written out), the same points between two data points (its get_line,
linspace and truncation), the same braille cells and dots (its hd_group), the same cut
at the canvas edge and the same order (a later series overwrites an earlier one's
cell). The frame is plot_frame's, kept while its axes do not change.
tests/test_ui_plots.py compares the result with plotext's own drawing of the same
series, cell by cell.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Series = tuple[Sequence[float], Sequence[float], object]  # xs, ys, colour
X_DOTS, Y_DOTS = 2, 4  # a braille cell: 2 dots wide, 4 high


def canvas_coords(data: Sequence[float], lim: Sequence[float], bins: int) -> list[int]:
    """plotext's get_matrix_data for numbers: 0.5 + (bins - 1) * (value - lo) / span,
    rounded at 8 decimals (its round(v, 8)) and floored; that rounding goes up exactly
    where the value is within half of 1e-8 below the next whole number, which is what the
    5e-9 added before the floor does. (As one product and sum per value: four times
    faster than the rounding written out, the same dots on plotext's own series in
    tests/test_ui_plots.py.)"""
    lo, hi = lim
    per = (bins - 1) / (hi - lo)
    offset = 0.5 - lo * per + ROUNDED_UP
    floor = math.floor
    return [floor(offset + per * value) for value in data]


ROUNDED_UP = 5e-9  # half of plotext's last decimal (round(v, 8))
Coords = tuple[list[int], list[int], object]  # a series' points as canvas dots, its colour


def _mask_chars() -> list[str]:
    """Braille character by dot mask: bit i is dot i of plotext's code for a cell (its dot
    rows top first, two dots a row), as Unicode numbers a braille cell's dots (1-2-3-7 down
    the left column, 4-5-6-8 down the right); no dot is a blank, as in plotext."""
    unicode_bit = [0x01, 0x08, 0x02, 0x10, 0x04, 0x20, 0x40, 0x80]  # by plotext's dot
    chars = [
        chr(0x2800 + sum(bit for i, bit in enumerate(unicode_bit) if mask >> i & 1))
        for mask in range(1 << (X_DOTS * Y_DOTS))
    ]
    chars[0] = " "
    return chars


BRAILLE = _mask_chars()


def series_coords(
    series: Sequence[Series],
    xlim: tuple[float, float],
    ylim: tuple[float, float],
    width: int,
    height: int,
) -> list[Coords]:
    """Each series' points as dots of a canvas of width x height cells: what its picture
    depends on (the same dots draw the same cells)."""
    return [
        (canvas_coords(xs, xlim, width * X_DOTS), canvas_coords(ys, ylim, height * Y_DOTS), color)
        for xs, ys, color in series
    ]


# a dot's bit in plotext's code for its cell, by (the dot's row in the cell) * 2 + (its
# column): plotext lists a cell's dot rows top first (row 3 ... row 0), two dots a row
_BIT = [1 << ((Y_DOTS - 1 - (i >> 1)) * X_DOTS + (i & 1)) for i in range(X_DOTS * Y_DOTS)]
# the dots of a cell's column (0 left, 1 right) from one dot row to another, both included
_COLUMN = [
    [
        [sum(_BIT[y << 1 | x] for y in range(lo, hi + 1)) for hi in range(Y_DOTS)]
        for lo in range(Y_DOTS)
    ]
    for x in range(X_DOTS)
]
_ROW = 1 << 20  # a cell's key: column * _ROW + row (rows below 0 or past _ROW: off the canvas)


def _run_end(x0: int, slope: float, x: int, start: int, stop: int) -> int:
    """Where the run of dots at column x, from dot `start`, ends (the first k < stop whose
    int(x0 + k * slope) is not x, else stop): guessed from the slope, then checked with
    the very expression that places each dot."""
    if not slope:
        return stop
    edge = x + 1 if slope > 0 else x - 1  # the next column, truncation toward 0 aside
    k = max(start + 1, min(stop, math.ceil((edge - x0) / slope)))
    while k > start + 1 and int(x0 + (k - 1) * slope) != x:
        k -= 1
    while k < stop and int(x0 + k * slope) == x:
        k += 1
    return k


Cells = dict[int, dict[int, tuple[str, object]]]  # row -> column -> (character, colour)


def cells_of(coords: Sequence[Coords], width: int, height: int) -> Cells:
    """The cells the lines cross on a canvas of width x height cells, row by row (rows
    counted from the bottom): row -> column -> (braille character, colour).

    Between two points, plotext's get_line: linspace(x0, x1, a) but its last point,
    truncated (int()), where a is one more than the longer side; then the last point
    itself. Along the longer side a step is exactly one dot, so only the other side is
    computed. The dots of one series are gathered per cell first (a later series
    overwrites an earlier one's cell, as in plotext). This runs for every plot on every
    redraw: written for speed (integer cell keys, the dots of a cell run gathered before
    they are stored; a steep stretch, where x stays put for several dots, stored a cell
    at a time)."""
    cells: Cells = {}
    bit, row_span, column_masks = _BIT, _ROW, _COLUMN
    for px, py, color in coords:
        dots: dict[int, int] = {}  # cell key -> its 8 dots, a bit each
        get = dots.get
        key, mask = None, 0  # the cell being filled, and its dots so far
        last = len(px) - 1
        for n in range(last):
            x0, y0, x1, y1 = px[n], py[n], px[n + 1], py[n + 1]
            dx, dy = x1 - x0, y1 - y0
            adx, ady = (dx if dx >= 0 else -dx), (dy if dy >= 0 else -dy)
            # two copies of one loop, x or y stepped exactly: one loop computing both (or
            # a branch per dot) gives back the whole gain of this function
            if adx >= ady:
                if not adx:
                    continue
                step, slope = (1 if dx > 0 else -1), dy / adx
                for k in range(adx):
                    x, y = x0 + step * k, int(y0 + k * slope)
                    here = (x >> 1) * row_span + (y >> 2)
                    if here != key:
                        if key is not None:
                            dots[key] = get(key, 0) | mask
                        key, mask = here, 0
                    mask |= bit[(y & 3) << 1 | (x & 1)]
            else:  # steep: x stays put for runs of dots, stored a cell at a time
                step, slope = (1 if dy > 0 else -1), dx / ady
                start = 0
                while start < ady:
                    x = int(x0 + start * slope)
                    end = _run_end(x0, slope, x, start, ady)
                    lo, hi = y0 + step * start, y0 + step * (end - 1)
                    start = end
                    if lo > hi:
                        lo, hi = hi, lo
                    column, masks = (x >> 1) * row_span, column_masks[x & 1]
                    first, final = lo >> 2, hi >> 2
                    here = column + first
                    if first == final:
                        dots[here] = get(here, 0) | masks[lo & 3][hi & 3]
                        continue
                    dots[here] = get(here, 0) | masks[lo & 3][3]
                    whole = masks[0][3]
                    for here in range(column + first + 1, column + final):
                        dots[here] = get(here, 0) | whole
                    here = column + final
                    dots[here] = get(here, 0) | masks[0][hi & 3]
        if last >= 0:  # the last point itself
            x, y = px[last], py[last]
            here = (x >> 1) * row_span + (y >> 2)
            if here != key and key is not None:
                dots[key] = get(key, 0) | mask
                key, mask = here, 0
            key = here
            mask |= bit[(y & 3) << 1 | (x & 1)]
        if key is not None:
            dots[key] = get(key, 0) | mask
        for here, cell_mask in dots.items():
            col, row = divmod(here, row_span)
            if 0 <= col < width and 0 <= row < height:
                line = cells.get(row)
                if line is None:
                    line = cells[row] = {}
                line[col] = (BRAILLE[cell_mask], color)
    return cells
