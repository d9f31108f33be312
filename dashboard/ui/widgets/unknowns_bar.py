"""What the snapshot could not read or map, under the header, whole: never an all-clear.

Rows in a state no role claims, a mapping only guessed, a section not read: each line
names what to do at its end, so it wraps rather than being cut, and the bar takes the
height it needs (the tables below give it up). Hidden while there is nothing to say.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from dashboard.models import Snapshot
from dashboard.text.untrusted import shown


class UnknownsBar(Static):
    DEFAULT_CSS = """
    UnknownsBar {
        height: auto;
        background: $warning 25%;
        padding: 0 1;
        display: none;
    }
    UnknownsBar.-shown {
        display: block;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", markup=False, **kwargs)
        self._lines: tuple[str, ...] = ()

    def show(self, snap: Snapshot | None) -> None:
        lines = snap.unknowns if snap is not None else ()
        if lines == self._lines:
            return
        self._lines = lines
        text = Text()
        for i, line in enumerate(lines):
            if i:
                text.append("\n")
            text.append("UNKNOWN ", style="bold")
            text.append(shown(line))
        self.update(text)
        self.set_class(bool(lines), "-shown")
