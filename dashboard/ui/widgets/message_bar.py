"""The main screen's notifications, on a line of their own above the footer.

Textual shows a notification as a toast over the screen's corner; on the dashboard that
corner is data (three stacked toasts hid half the locks table at 120x40, one covered the
`on` and `waiting` columns at 80x24). Here the newest notification takes a line (two at
most) that the tables give up while it shows, and leaves when it times out. Modal screens
keep Textual's toasts: they cover no data there.
"""

from __future__ import annotations

from rich.text import Text
from textual.content import Content
from textual.notifications import Notification
from textual.timer import Timer
from textual.widgets import Static

from dashboard.text.untrusted import escape_controls


def plain_message(note: Notification) -> str:
    """The words of a notification (its markup, where it has any, taken off)."""
    if not note.markup:
        return note.message
    try:
        return Content.from_markup(note.message).plain
    except Exception:  # markup that does not parse is shown as it came
        return note.message


class MessageBar(Static):
    DEFAULT_CSS = """
    MessageBar {
        height: auto;
        max-height: 2;
        padding: 0 1;
        display: none;
        background: $success 20%;
    }
    MessageBar.-shown { display: block; }
    MessageBar.-warning { background: $warning 30%; }
    MessageBar.-error { background: $error 35%; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", markup=False, **kwargs)
        self.shown: Notification | None = None
        self._timer: Timer | None = None

    def show(self, note: Notification) -> None:
        """The newest notification replaces the one shown."""
        text = Text(f"{escape_controls(note.title)}: ", style="bold") if note.title else Text()
        text.append(escape_controls(plain_message(note)))
        self.update(text)
        for severity in ("information", "warning", "error"):
            self.set_class(note.severity == severity, f"-{severity}")
        self.add_class("-shown")
        self.shown = note
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(note.timeout, self.clear)

    def clear(self) -> None:
        self.shown = None
        self.remove_class("-shown")
