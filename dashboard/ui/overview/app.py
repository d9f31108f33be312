"""The overviews: one row per queue, Enter picks one, q quits. `QueueListApp` is what
they share (keys, layout, the table kept by row key); `OverviewApp` is one database's
queues found by discovery (ready, running, oldest ready age, stale leases, waiting
sessions), polled in a thread; fleet_app.FleetOverviewApp is every queue of several
named targets."""

from __future__ import annotations

import psycopg
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Footer, Static

from dashboard import db
from dashboard.discover.overview import Overview, OverviewRow
from dashboard.errors import UserError
from dashboard.render.report import age
from dashboard.text.untrusted import escape_controls
from dashboard.ui.plain import PlainApp, ReturnType

COLUMNS = ("queue", "library", "ready", "running", "oldest ready", "stale", "waiting", "note")


class RowsReady(Message):
    def __init__(self, rows: list[OverviewRow] | None, error: str | None = None) -> None:
        super().__init__()
        self.rows, self.error = rows, error


def _cell(value: object) -> Text:
    """Every cell as Text: names from the catalog are never parsed as markup."""
    return Text(escape_controls("-" if value is None else str(value)), no_wrap=True)


def row_cells(row: OverviewRow) -> tuple[Text, ...]:
    found = row.found
    library = f"{found.adapter} {found.version or ''}".strip() if found.adapter else "hand-rolled"
    return tuple(
        _cell(v)
        for v in (
            found.table,
            f"{library} ({found.confidence})",
            row.ready,
            row.running,
            None if row.oldest_ready_age_s is None else age(row.oldest_ready_age_s),
            row.stale_leases,
            row.waiting,
            row.error or "",
        )
    )


class QueueListApp(PlainApp[ReturnType]):
    """What the overviews share: Enter opens the queue under the cursor (`_open(key)`),
    r polls now, q quits; `sync_rows` keeps the table's rows by key."""

    BINDINGS = [
        Binding("enter", "open_queue", "Open", tooltip="Open the dashboard on this queue"),
        Binding("r", "refresh_now", "Poll", tooltip="Poll every queue now"),
        Binding("q", "quit", "Quit", tooltip="Quit queuetop"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
    ]
    DEFAULT_CSS = """
    #overview-status { height: 1; padding: 0 1; }
    #overview { height: 1fr; }
    """

    def sync_rows(self, rows: list[tuple[str, tuple[Text, ...]]]) -> None:
        """The table holds `rows` (key, cells) in this order: cells updated in place when
        the keys are the same, else rebuilt with the cursor kept on its key."""
        table = self.query_one(DataTable)
        keys = [key for key, _ in rows]
        current = [k.value for k in table.rows]
        if keys == current:
            for key, cells in rows:
                for column, cell in zip(table.ordered_columns, cells, strict=True):
                    if table.get_cell(key, column.key) != cell:
                        table.update_cell(key, column.key, cell, update_width=True)
            return
        under = current[table.cursor_row] if 0 <= table.cursor_row < len(current) else None
        table.clear()
        for key, cells in rows:
            table.add_row(*cells, key=key)
        if under in keys:
            table.move_cursor(row=keys.index(under), animate=False)

    def action_refresh_now(self) -> None:
        raise NotImplementedError

    def action_open_queue(self) -> None:
        table = self.query_one(DataTable)
        if table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            self._open(key)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self._open(event.row_key.value)

    def _open(self, key: str) -> None:
        raise NotImplementedError


class OverviewApp(QueueListApp[int | None]):
    """Returns the index of the queue picked (Enter), or None (q)."""

    TITLE = "queuetop: queues"

    def __init__(
        self, overview: Overview, dsn: str, *, interval: float = 2.0, notice: str | None = None
    ) -> None:
        super().__init__()
        self.overview, self.dsn, self.interval = overview, dsn, interval
        self.notice = notice  # why the queue picked last could not be opened
        self.rows: list[OverviewRow] = []
        self.polls_applied = 0
        self._conn: psycopg.Connection | None = None

    def compose(self) -> ComposeResult:
        yield Static(
            Text(f"{len(self.overview.found)} queues found: Enter opens one"), id="overview-status"
        )
        yield DataTable(id="overview", cursor_type="row", zebra_stripes=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(*COLUMNS)
        for index, found in enumerate(self.overview.found):
            table.add_row(*row_cells(OverviewRow(found)), key=str(index))
        table.focus()
        if self.notice:
            self.notify(escape_controls(self.notice), severity="error")
        self.poll()

    @work(thread=True, exclusive=True, exit_on_error=False, group="overview")
    def poll(self) -> None:
        try:
            if self._conn is None or self._conn.closed:
                self._conn = db.connect_monitor(
                    self.dsn, timeout_ms=db.monitor_timeout_ms(self.interval)
                )
            rows = self.overview.poll(self._conn)
        except (psycopg.Error, UserError, OSError) as exc:
            self._conn = None
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            self.post_message(RowsReady(None, first))
            return
        self.post_message(RowsReady(rows))

    def on_rows_ready(self, message: RowsReady) -> None:
        if not self.is_running:
            return
        status = self.query_one("#overview-status", Static)
        if message.rows is None:
            status.update(Text(escape_controls(f"cannot poll: {message.error}; retrying")))
        else:
            self.rows = message.rows
            table = self.query_one(DataTable)
            for index, row in enumerate(message.rows):
                for column, cell in zip(table.ordered_columns, row_cells(row), strict=True):
                    table.update_cell(str(index), column.key, cell)
            status.update(Text(f"{len(self.rows)} queues: Enter opens one, q quits"))
            self.polls_applied += 1
        self.set_timer(self.interval, self.poll)

    def action_refresh_now(self) -> None:
        self.poll()

    def _open(self, key: str) -> None:
        """Leave for the queue's dashboard, unless its spec is broken: then say why and stay
        (Enter there ended queuetop with the spec's error)."""
        index = int(key)
        why = self.overview.errors[index]
        if why:
            name = self.overview.found[index].table
            self.notify(escape_controls(f"{name} cannot be opened: {why}"), severity="error")
            return
        self.exit(index)

    def on_unmount(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except psycopg.Error:
                pass
