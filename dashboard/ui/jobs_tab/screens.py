"""The browser's two dialogs: a filter's input, and a job's whole row."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Static

from dashboard.browse import BrowsedJob, JobRow
from dashboard.ui.plain import plain


class FilterInputScreen(ModalScreen[str | None]):
    """One line of input: Enter gives it (empty clears the filter), Escape changes nothing."""

    BINDINGS = [
        Binding(
            "enter",
            "submit",
            "Apply",
            key_display="Enter",
            priority=True,
            tooltip="Apply the filter (empty: no filter)",
        ),
        Binding("escape", "cancel", "Cancel", key_display="Esc", tooltip="Keep the filter as is"),
    ]

    def __init__(self, title: str, value: str, hint: str) -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="filter-body") as body:
            body.border_title = plain(f"{self.title_text} (Escape cancels)")
            yield Input(self.value, id="filter-input")
            yield Static(plain(self.hint, "dim"), id="filter-hint")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.set_focus(self.query_one(Input))
        self.query_one(Input).action_end()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())

    def action_submit(self) -> None:
        # a priority key: the keys typed before it may still be queued for the input. (Not a
        # lambda: call_later awaits what its callback returns, and dismiss's awaitable would
        # wait for the input to close, from inside the input: a deadlock.)
        self.query_one(Input).call_later(self._submit_typed)

    def _submit_typed(self) -> None:
        self.dismiss(self.query_one(Input).value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


def row_table(job: BrowsedJob, row: JobRow) -> Table:
    """Column / value, every value escaped and cut (the cut says how much is left out)."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for f in row.fields:
        # a column name is the catalog's: a str cell would be parsed as markup
        table.add_row(plain(f.name), Text(f.shown(), style="dim" if f.text is None else ""))
    return table


class JobRowScreen(ModalScreen[None]):
    """A job's whole row, as to_jsonb gives it; Escape, Enter or q closes."""

    BINDINGS = [Binding("escape,enter,q", "close", "Close")]

    def __init__(self, job: BrowsedJob, row: JobRow, where: str) -> None:
        super().__init__()
        self.job = job
        self.row = row
        self.where = where

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="jobrow-body") as body:
            # a text job id and a table name may hold markup: a plain title, never parsed
            body.border_title = plain(f"Job {self.job.id} in {self.where} (Escape closes)")
            body.border_subtitle = "control characters escaped, long values cut"
            yield Static(row_table(self.job, self.row))
        yield Footer(compact=True, show_command_palette=False)

    def action_close(self) -> None:
        self.dismiss(None)
