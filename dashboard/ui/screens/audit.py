"""The audit screen (A): the latest actions from the audit trail, newest first.

It reads in a thread (the table on a read-only connection with a statement timeout, or
the --audit-file from its end) when it opens, on `r`, and after each action the
dashboard runs while it is open. Enter shows a record whole.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import psycopg
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from dashboard.audit.trail import AuditPage, AuditRecord
from dashboard.errors import UserError
from dashboard.render.report import one_line
from dashboard.text.untrusted import shown
from dashboard.ui.plain import plain
from dashboard.ui.widgets.keyedtable import Col, KeyedTable

OUTCOME_STYLES = {"changed": "green", "skipped": "yellow"}
LIMIT = 200  # records the screen reads


def when(at: datetime) -> str:
    """'01-15 09:30:05' in this machine's time zone (the detail has the full timestamp)."""
    return f"{at.astimezone():%m-%d %H:%M:%S}"


class AuditTable(KeyedTable):
    """One row per audit record, newest first, keyed by the record's place in the trail."""

    TITLE = "Audit record"
    COLUMNS = (  # narrow: who, then the change, then the reason give way (Enter has them)
        Col("at", "at", 14),
        Col("action", "action", 11),
        Col("target", "target", 7, "right"),
        Col("change", "from -> to", 20, drop=2),
        Col("outcome", "outcome", 26),
        Col("reason", "reason", 12, fill=True, drop=1),
        Col("who", "who", 16, drop=3),
    )

    # where the records are of several tables: which one each is on (a session's cancel or
    # terminate is on none: '-'); first to go on a narrow screen (Enter has it)
    TABLE = Col("table", "table", 18, drop=4)

    def name_tables(self, on: bool) -> None:
        """Show the table column (records of several tables) or not (one table: the
        status line names it)."""
        columns = (*type(self).COLUMNS, self.TABLE) if on else type(self).COLUMNS
        if self.COLUMNS != columns:
            self.COLUMNS = columns
            self._set_layout(self.size.width - self.styles.scrollbar_size_vertical)

    def cell_style(self, column: str, value: object) -> str | None:
        if column != "outcome":
            return None
        text = str(value)
        return OUTCOME_STYLES.get(text.split(":")[0], "bold red")

    def show(self, page: AuditPage) -> None:
        # the same record read again keeps its key: the cursor stays on it across reloads
        rows: dict[str, AuditRecord] = {}
        for r in page.records:
            key = f"{r.record_id}/{r.target}"
            while key in rows:  # one target twice in one action: never seen, but harmless
                key += "+"
            rows[key] = r
        self.set_rows(rows.items())

    def values(self, key: str, r: AuditRecord) -> tuple:
        return (
            when(r.at),
            r.action,
            r.target,
            f"{r.was} -> {r.to_state or '-'}",
            r.what_happened,
            one_line(r.reason or "-", 200),
            r.who,
            r.queue_table or "-",
        )[: len(self.COLUMNS)]


class AuditLoaded(Message):
    def __init__(self, page: AuditPage | None, error: str = "") -> None:
        super().__init__()
        self.page = page
        self.error = error


class AuditScreen(ModalScreen[None]):
    """`load` returns the latest records (it runs in a thread); Escape or q closes."""

    BINDINGS = [
        Binding("r", "reload", "Reload", tooltip="Read the audit trail again"),
        Binding("escape,q", "close", "Close", key_display="Esc", tooltip="Close the audit trail"),
    ]

    def __init__(self, load: Callable[[], AuditPage], source: str) -> None:
        super().__init__()
        self.load = load
        self.source = source
        self.page: AuditPage | None = None
        self.loads = 0  # reads finished (tests wait on it)

    def compose(self) -> ComposeResult:
        with Vertical(id="audit-body") as body:
            body.border_title = "Audit trail: the latest actions, newest first (Escape closes)"
            body.border_subtitle = "Enter details  r reload  Esc close"
            yield Static(plain(f"{self.source}: reading…", "dim"), id="audit-status")
            yield AuditTable(id="audit-table")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one(AuditTable).focus()
        self.reload()

    def reload(self) -> None:
        """Read again (on open, on r, after each action)."""
        self._read()

    @work(thread=True, exclusive=True, group="audit", exit_on_error=False)
    def _read(self) -> None:
        try:
            page = self.load()
        except (UserError, psycopg.Error, OSError) as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            self.post_message(AuditLoaded(None, first))
            return
        self.post_message(AuditLoaded(page))

    def on_audit_loaded(self, message: AuditLoaded) -> None:
        self.loads += 1
        status = self.query_one("#audit-status", Static)
        if message.page is None:
            status.update(plain(message.error, "bold red"))
            return
        page = self.page = message.page
        tables = {r.queue_table for r in page.records if r.queue_table}
        table = self.query_one(AuditTable)
        table.name_tables(len(tables) > 1)
        table.show(page)
        n = len(page.records)
        line = plain(f"{page.source}: ", "bold")
        line.append(
            f"{n} latest record{'s' if n != 1 else ''}" if n else "no audited action", style=""
        )
        if len(tables) == 1:  # one table: said once here, not on every row
            line.append(f" on {shown(next(iter(tables)))}", style="")
        line.append(f", newest first (at most {LIMIT})", style="dim")
        for note in page.notes:
            line.append(f"  {shown(note)}", style="yellow")
        status.update(line)

    def action_reload(self) -> None:
        self.reload()

    def action_close(self) -> None:
        self.dismiss(None)
