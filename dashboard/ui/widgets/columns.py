"""Columns of the tables: what a column is, how a value fits its cell, which columns fit
a width; and the conventions the main screen's tables share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rich.cells import cell_len, set_cell_size

from dashboard.render.report import one_line
from dashboard.text.untrusted import escape_controls

QUERY_WIDTH = 28  # at least: the query column takes whatever width is left
R = "right"  # numbers and ages line up on their last digit
# dropped while the terminal is too narrow for every column, FIRST before LATER before
# the query (Enter still shows the whole row)
FIRST, LATER = {"drop": 3}, {"drop": 2}
QUERY = {"fill": True, "drop": 1}


@dataclass(frozen=True)
class Col:
    """A column. While the table is too narrow for every column, columns with a `drop`
    rank are left out, highest rank first (the rightmost of a rank first); the `fill`
    column (at most one) takes the width left over, `width` being its least."""

    key: str
    label: str
    width: int
    justify: Literal["left", "right"] = "left"
    drop: int = 0  # 0: always shown
    fill: bool = False
    middle: bool = False  # cut in the middle: names that differ in their tails (workers)


def fit(value: Any, width: int, middle: bool = False) -> str:
    """One line of at most `width` cells: cut with an ellipsis (at the end, or in the
    `middle`, keeping a name's head and its longer tail), whitespace folded, other control
    characters escaped (a query may hold anything; the terminal must only get text)."""
    text = "" if value is None else str(value)
    if not text.isprintable():  # newlines, tabs, escapes: a query as it was typed
        text = escape_controls(one_line(text, len(text)))  # one line, ESC shown as \x1b
    if cell_len(text) > width:
        if middle and width >= 5:
            head = (width - 1) // 3
            return set_cell_size(text, head) + "…" + _tail(text, width - 1 - head)
        text = set_cell_size(text, max(width - 1, 0)) + "…"
    return text


def _tail(text: str, cells: int) -> str:
    """The end of `text` that fits `cells` cells (a wide character is two)."""
    used, n = 0, len(text)
    while n and used + cell_len(text[n - 1]) <= cells:
        n -= 1
        used += cell_len(text[n])
    return text[n:]


def justify(text: str, col: Col, width: int) -> str:
    gap = " " * (width - cell_len(text))
    return gap + text if col.justify == "right" else text + gap


def fit_columns(columns: Sequence[Col], room: int, pad: int) -> list[tuple[int, int]]:
    """(column index, width) of the columns shown in `room` cells: columns dropped by
    rank until the rest fit, then the fill column widened to use what is left. A
    table still wider than the room scrolls sideways."""
    shown = list(range(len(columns)))
    total = sum(c.width + 2 * pad for c in columns)
    by_rank = sorted(
        (i for i, c in enumerate(columns) if c.drop), key=lambda i: (-columns[i].drop, -i)
    )
    for i in by_rank:
        if total <= room:
            break
        shown.remove(i)
        total -= columns[i].width + 2 * pad
    spare = max(room - total, 0)
    return [(i, columns[i].width + (spare if columns[i].fill else 0)) for i in shown]
