"""The lines of a history plot, drawn into plotext's cell matrix as plotext draws them.

plotext builds a plot's frame (axes, ticks, labels) in a fraction of a millisecond, and
then spends ten times that on the data: its braille line drawing goes through generic
helpers (lists of markers and colours per point, set-based de-duplication, nested
flattening) that cost more than a refresh of the rest of the dashboard. The plots are
redrawn whenever their data moves, on every poll of a busy queue, so this module does
the same drawing directly: the same canvas coordinates (plotext's own
get_matrix_data), the same points between two data points (its get_line, linspace and
truncation), the same braille cells and dots (its hd_group), the same cut at the
canvas edge and the same order (a later series overwrites an earlier one's cell). The
frame still comes from plotext. tests/test_ui_plots.py compares the result with
plotext's own drawing of the same series, cell by cell.
"""

from __future__ import annotations

from collections.abc import Sequence

from plotext import _utility as ut

Series = tuple[Sequence[float], Sequence[float], object]  # xs, ys, colour
X_DOTS, Y_DOTS = 2, 4  # a braille cell: 2 dots wide, 4 high


def line_dots(xs: Sequence[int], ys: Sequence[int]) -> list[tuple[int, int]]:
    """The dots from each point to the next (plotext's get_lines over get_line)."""
    dots: list[tuple[int, int]] = []
    for n in range(len(xs) - 1):
        x0, x1, y0, y1 = xs[n], xs[n + 1], ys[n], ys[n + 1]
        a = max(abs(x1 - x0), abs(y1 - y0)) + 1
        sx = (x1 - x0) / (a - 1) if a > 1 else 0
        sy = (y1 - y0) / (a - 1) if a > 1 else 0
        # linspace(x0, x1, a) without its last point, each value truncated as int() does
        dots.extend((int(x0 + k * sx), int(y0 + k * sy)) for k in range(a - 1))
    if xs:
        dots.append((xs[-1], ys[-1]))
    return dots


def braille_cells(
    series: Sequence[Series],
    xlim: tuple[float, float],
    ylim: tuple[float, float],
    width: int,
    height: int,
) -> dict[tuple[int, int], tuple[str, object]]:
    """(column, row) on a canvas of width x height cells -> (braille character, colour)."""
    cells: dict[tuple[int, int], tuple[str, object]] = {}
    for xs, ys, color in series:
        px = ut.get_matrix_data(list(xs), list(xlim), width * X_DOTS)
        py = ut.get_matrix_data(list(ys), list(ylim), height * Y_DOTS)
        dots: dict[tuple[int, int], list[int]] = {}
        for x, y in line_dots(px, py):
            bits = dots.setdefault((x // X_DOTS, y // Y_DOTS), [0] * 8)
            # plotext's code for a cell lists its dot rows top first: row 3 ... row 0
            bits[(Y_DOTS - 1 - y % Y_DOTS) * X_DOTS + x % X_DOTS] = 1
        for (col, row), bits in dots.items():
            if 0 <= col < width and 0 <= row < height:
                cells[col, row] = (ut.braille_codes[tuple(bits)], color)
    return cells


def draw(matrix, series: Sequence[Series], xlim, ylim) -> None:
    """Draw `series` on the canvas of plotext's `matrix` (a frame plotext built)."""
    cols, rows = matrix.Cols_canvas, matrix.Rows_canvas
    cells = braille_cells(series, xlim, ylim, len(cols), len(rows))
    for (col, row), (marker, color) in cells.items():
        matrix.insert_element(col + cols.start, row + rows.start, marker, color, "default")
