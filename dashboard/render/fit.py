"""Fitting one line of labelled numbers into a width: the least needed go first.

Used by `queuetop load`'s live line and the dashboard's load strip, so that a narrow
terminal drops whole numbers (the least needed first) instead of cutting the line, or
wrapping it, in the middle of the ones that matter.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len

GAP = "  "


def kept(
    widths: Sequence[int], ranks: Sequence[int], room: int, gap: int = len(GAP), whole: bool = False
) -> list[int]:
    """Indices of the parts shown in `room` cells, in their order.

    Parts leave highest rank first, and among equals the rightmost first. Parts of rank 0
    stay (the caller cuts the line if they do not fit) unless `whole`: then they leave
    too, rightmost first, so that no part is ever cut (the first one always stays).
    """
    shown = list(range(len(widths)))

    def total() -> int:
        return sum(widths[i] for i in shown) + gap * max(len(shown) - 1, 0)

    for i in sorted(shown, key=lambda i: (-ranks[i], -i)):
        if total() <= room or (ranks[i] == 0 and not whole) or len(shown) == 1:
            break
        shown.remove(i)
    return shown


def fit_line(parts: Sequence[tuple[str, int]], room: int | None) -> str:
    """`parts` are (text, rank) in display order; None room: every part."""
    texts = [t for t, _ in parts]
    if room is None:
        return GAP.join(texts)
    keep = kept([cell_len(t) for t in texts], [r for _, r in parts], room)
    return GAP.join(texts[i] for i in keep)
