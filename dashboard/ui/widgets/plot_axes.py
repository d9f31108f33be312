"""The history plots' axes: windows and tops that rarely change, and round ticks.

A plot's frame (axes, ticks, labels) is built by plotext, at about a third of a
millisecond a plot, whenever its limits move. Limits that follow the data exactly
(the oldest point's age, the highest value) move on every poll while the history fills,
so here they come in steps: the x axis is a window that holds the whole history
(`-60s … now` from the start, then `-120s … now`), the data sliding inside it (a new
window every minute or two at first, then every few minutes), and the y axis goes up
to a round top that holds the highest value and is kept while the data still uses a
fair part of it.
"""

from __future__ import annotations

import math

# Seconds of history an x axis shows; past the last, whole hours.
WINDOWS_S = (60, 120, 180, 300, 600, 900, 1200, 1800, 3600)
# Tops of a y axis, times a power of ten: never more than a quarter above the data.
TOP_STEPS = (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10)
# A top is kept while the highest value is above this share of it.
KEEP_TOP_ABOVE = 0.4


def window_s(span: float) -> int:
    """The smallest window that shows `span` seconds of history."""
    for window in WINDOWS_S:
        if span <= window:
            return window
    return math.ceil(span / 3600) * 3600


def round_top(top: float, whole: bool) -> float:
    """The smallest round top at or above `top` (1 at least: a flat 0 keeps a scale)."""
    if top <= 1:
        return 1
    scale = 10 ** math.floor(math.log10(top))
    value = next(m * scale for m in TOP_STEPS if m * scale >= top * (1 - 1e-12))
    return math.ceil(value) if whole else round(value, 10)


def held_top(top: float, held: float | None, whole: bool) -> float:
    """The y axis' top for data that reaches `top`: the one held while it still fits the
    data well (above KEEP_TOP_ABOVE of it), else a new round one."""
    if held is not None and held * KEEP_TOP_ABOVE < top <= held:
        return held
    return round_top(top, whole)


def nice_ticks(top: float, whole: bool, rows: int = 8) -> list[float]:
    """Round ticks from 0 up to `top` (whole numbers for counts), about one every third
    row; a plot of 2 or 3 rows gets 0 and `top` itself (a round tick could share a row
    with 0 and mislabel it)."""
    if top <= 0:
        return [0]
    if rows < 4:
        return [0, round(top) if whole else round(top, 1)]
    raw = top / max(rows // 3, 1)  # a tick every third row or so: evenly placed
    scale = 10 ** math.floor(math.log10(raw))
    step = next(m * scale for m in (1, 2, 5, 10) if m * scale >= raw)
    if whole:
        step = max(1, round(step))
    if step > top:  # one tick a plot (5 rows or fewer): 0 alone would leave it without scale
        return [0, round(top) if whole else round(top, 1)]
    return [i * step for i in range(int(top // step) + 1)]


def tick_label(value: float) -> str:
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


def downsample(xs: list[float], ys: list[float], buckets: int) -> tuple[list, list]:
    """At most two points per bucket of consecutive points: its lowest and its highest.

    A line of 300 points on a plot some 70 columns wide draws many segments into the same
    braille cells, and the drawing's cost grows with the points; keeping each bucket's
    extremes (in time order) draws the same peaks and troughs.
    """
    n = len(xs)
    if buckets < 1 or n <= 2 * buckets:
        return xs, ys
    out_x: list[float] = []
    out_y: list[float] = []
    for b in range(buckets):
        lo, hi = b * n // buckets, (b + 1) * n // buckets
        part = ys[lo:hi]  # min, max and index at C speed: the first lowest, the first highest
        low, high = part.index(min(part)), part.index(max(part))
        if low > high:
            low, high = high, low
        out_x.append(xs[lo + low])
        out_y.append(part[low])
        if high != low:
            out_x.append(xs[lo + high])
            out_y.append(part[high])
    return out_x, out_y


def runs(xs: list[float], ys) -> list[tuple[list[float], list[float]]]:
    """The stretches of a series between its gaps (None: not measured at that poll), each
    drawn as a line of its own: a gap is never drawn as a value."""
    if None not in ys:  # the common case, at C speed: one stretch
        return [(xs, list(ys))] if xs else []
    out: list[tuple[list[float], list[float]]] = []
    run_x: list[float] = []
    run_y: list[float] = []
    for x, y in zip(xs, ys, strict=True):
        if y is None:
            if run_x:
                out.append((run_x, run_y))
                run_x, run_y = [], []
            continue
        run_x.append(x)
        run_y.append(y)
    if run_x:
        out.append((run_x, run_y))
    return out
