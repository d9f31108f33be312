"""Tab labels that change on every refresh (row counts) without laying the screen out."""

from __future__ import annotations

from dashboard.ui.forks.tab_label import relabel

__all__ = ["counted_label", "relabel"]


def counted_label(title: str, count: str, widths: dict[str, int], key: str) -> str:
    """`title count`, the count keeping the widest width it has had under `key` (blank cells
    after it), so that the tab row only moves when a count gains a digit: a moved tab lays
    the row out again and slides the underline."""
    widths[key] = max(widths.get(key, 1), len(count))
    return f"{title} {count:<{widths[key]}}"
