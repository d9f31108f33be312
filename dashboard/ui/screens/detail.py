"""The detail view of one table row: every field, the query whole."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from dashboard.render.report import age
from dashboard.ui.plain import plain, plain_lines

# what an operator calls each field; a field not named here shows its name, spaced
LABELS = {
    "application_name": "application",
    "backend_pid": "pid (database session)",
    "backend_start": "session started",
    "blocked_by": "blocked by (pids)",
    "chain": "wait chain (root first)",
    "db_user": "database role",
    "from_state": "state before",
    "granted": "granted",
    "idle_s": "idle for",
    "lease_token": "lease token",
    "lease_until": "lease until",
    "locks_held": "locks held",
    "locktype": "lock type",
    "on_queue_table": "on the queue table",
    "os_user": "os user",
    "overdue_s": "overdue by",
    "process_id": "os pid (worker process)",
    "queue_table": "queue table",
    "record_id": "in the trail",
    "started_at": "started at",
    "to_state": "state after",
    "wait_event": "wait event",
    "wait_s": "waiting for",
    "worker_alive": "worker session alive",
    "xact_age_s": "transaction age",
    "xact_start": "transaction started",
    "xmin_age": "xmin age (transactions)",
}


def label(name: str) -> str:
    return LABELS.get(name, name.replace("_", " "))


def _value(name: str, value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, float) and name.endswith("_s"):
        return f"{age(value)} ({value:.1f}s)"
    if isinstance(value, dict):  # an audit record's states: one "key: value" a line
        return "\n".join(f"{k}: {_value(k, v)}" for k, v in value.items()) or "-"
    if isinstance(value, tuple):
        return " -> ".join(map(str, value)) if name == "chain" else ", ".join(map(str, value))
    return str(value)


def detail_table(item: Any) -> Table:
    """Field / value of a dataclass row, long text wrapped, never cut; every value plain
    text (a query, a worker, a reason: never markup), its control characters escaped."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for f in dataclasses.fields(item):
        table.add_row(plain(label(f.name)), plain_lines(_value(f.name, getattr(item, f.name))))
    return table


class DetailScreen(ModalScreen[None]):
    """One row in full; Escape or Enter closes."""

    BINDINGS = [Binding("escape,enter,q", "dismiss", "Close")]

    def __init__(self, title: str, item: Any) -> None:
        super().__init__()
        self.title_text = title
        self.item = item

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail-body") as body:
            body.border_title = plain(f"{self.title_text} (Escape closes)")
            yield Static(detail_table(self.item))
        yield Footer(compact=True, show_command_palette=False)  # this screen's keys only

    def action_dismiss(self, result: None = None) -> None:  # type: ignore[override]
        self.dismiss(result)
