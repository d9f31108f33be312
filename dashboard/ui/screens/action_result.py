"""The outcome of a recovery action: what changed, and what was skipped with its reason."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from dashboard.actions import ActionResult
from dashboard.ui.plain import plain
from dashboard.ui.screens.confirm import ids_text

MAX_SKIPPED = 200  # rows listed; the count says how many there were


def result_table(result: ActionResult) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    # every cell a plain Text: job ids and reasons come from the database (a str cell of
    # a Rich table would be parsed as markup)
    verb = result.summary().splitlines()[0].split(":")[0]
    table.add_row(
        Text(verb, style="green"),
        plain(
            f"{len(result.changed)}"
            + (f": {ids_text(list(result.changed), 50)}" if result.changed else "")
        ),
    )
    if result.writes:
        table.add_row(Text("writes"), plain(result.writes))
    table.add_row(
        Text("skipped", style="yellow" if result.skipped else ""), Text(str(len(result.skipped)))
    )
    for s in result.skipped[:MAX_SKIPPED]:
        table.add_row(plain(f"  {s.id}"), plain(s.reason))
    if len(result.skipped) > MAX_SKIPPED:
        table.add_row(Text("  ..."), Text(f"and {len(result.skipped) - MAX_SKIPPED} more"))
    return table


def result_title(result: ActionResult) -> str:
    """'requeue: done', or 'requeue: nothing changed' when every id was skipped."""
    return f"{result.action}: {'done' if result.changed else 'nothing changed'}"


class ActionResultScreen(ModalScreen[None]):
    """Shown after every action; Escape, Enter or q closes it."""

    BINDINGS = [Binding("escape,enter,q", "close", "Close")]

    def __init__(self, result: ActionResult) -> None:
        super().__init__()
        self.result = result

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="result-body") as body:
            body.border_title = plain(f"{result_title(self.result)} (Escape closes)")
            yield Static(result_table(self.result))
        yield Footer(compact=True, show_command_palette=False)  # this screen's keys only

    def action_close(self) -> None:
        self.dismiss(None)
