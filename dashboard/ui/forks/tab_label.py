"""The `tab_label` piece: a tab's count redrawn in place.

`tab.label = …` lays the whole screen out again (and moves the underline) on every poll, a
sixth of a refresh's cost at 1,000 rows a table (bench/render_main_screen.py). A label of
the same width is written into the tab's own `_label` and drawn with Static.update, no
layout. Off, a wider label, or a Textual whose Tab keeps its label elsewhere: `tab.label`.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual.content import Content
from textual.widgets import Static, Tab

from dashboard.ui.forks import use


def probe(tab: Tab | None = None) -> Content:
    label = (tab or Tab("x"))._label
    if not isinstance(label, Content):
        raise AttributeError("Tab._label is not a Content")
    return label


def relabel(tab: Tab, label: str) -> None:
    """Show `label` on `tab` (see the module docstring)."""
    if (
        cell_len(tab.label_text) == cell_len(label)
        and use("tab_label", lambda: probe(tab)) is not None
    ):
        tab._label = Content.from_text(label)
        Static.update(tab, tab._label, layout=False)  # Tab.update would relayout the row
    else:
        tab.label = label
