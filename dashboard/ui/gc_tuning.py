"""Python's garbage collector, tuned for a dashboard that replaces thousands of rows on every
refresh (bench/render_main_screen.py measures the effect)."""

from __future__ import annotations

import gc

# Allocations between two young collections (Python's default: 700).
YOUNG_OBJECTS = 10_000


def settle() -> tuple[int, ...]:
    """Once startup is done: returns the thresholds to restore.

    Freeze what startup built (Textual, widgets, styles): each poll leaves thousands of new
    objects behind (rows, cells, caches), so full collections come every few polls, and each
    walked the whole heap: over 100 ms of CPU at 1,000 rows a table, paid in the middle of a
    repaint. Freezing halved their time.

    And a larger young generation: a refresh's rows die by reference count within a refresh
    or two, but with 700 allocations between young collections each was promoted first and
    swelled the old generation, bringing a full collection (~20 ms at 1,000 rows a table)
    every few refreshes. With 10,000 they die young: the benchmark's p95 fell from ~56-62 ms
    to ~46 ms, its median unchanged.
    """
    gc.freeze()
    old = gc.get_threshold()
    gc.set_threshold(YOUNG_OBJECTS, *old[1:])
    return old


def restore(old: tuple[int, ...] | None) -> None:
    """Once the app is gone: what it built may be collected again, as often as before."""
    gc.unfreeze()
    if old:
        gc.set_threshold(*old)
