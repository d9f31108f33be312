"""Tab labels that change on every refresh (row counts) without laying the screen out."""

from __future__ import annotations

from rich.cells import cell_len
from textual.content import Content
from textual.widgets import Static, Tab


def counted_label(title: str, count: str, widths: dict[str, int], key: str) -> str:
    """`title count`, the count keeping the widest width it has had under `key` (blank cells
    after it), so that the tab row only moves when a count gains a digit: a moved tab lays
    the row out again and slides the underline."""
    widths[key] = max(widths.get(key, 1), len(count))
    return f"{title} {count:<{widths[key]}}"


def relabel(tab: Tab, label: str) -> None:
    """A new count of the same width is drawn in place: `tab.label = …` lays the whole screen
    out again (and moves the underline) on every poll, a sixth of a refresh's cost at 1,000
    rows a table (bench/render_main_screen.py). A wider label, or a Textual whose Tab keeps
    its label elsewhere, goes through `tab.label`."""
    if cell_len(tab.label_text) == cell_len(label) and isinstance(
        getattr(tab, "_label", None), Content
    ):
        tab._label = Content.from_text(label)
        Static.update(tab, tab._label, layout=False)  # Tab.update would relayout the row
    else:
        tab.label = label
