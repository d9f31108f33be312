"""The usual dashboard on one queue of the overview, with Escape back to it."""

from __future__ import annotations

from pathlib import Path

from textual.binding import Binding

from dashboard.ui import app as main_app
from dashboard.ui.app import QueuetopApp

BACK = "back"  # the return value of a dashboard left with Escape


class DrillDownApp(QueuetopApp):
    """QueuetopApp with one binding more: Escape returns to the overview (q still quits).

    App-level, so a dialog's or an input's own Escape (they are screens and widgets, which
    come first) keeps closing them."""

    CSS_PATH = Path(main_app.__file__).with_name("app.tcss")  # the dashboard's own, not ours
    BINDINGS = [
        Binding("escape", "back_to_overview", "Back", tooltip="Back to the overview of every queue")
    ]

    def action_back_to_overview(self) -> None:
        self.exit(BACK)
