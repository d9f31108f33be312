"""FleetOverviewApp: every queue of several named targets, one row each, polled in
parallel by a discover.fleet.Fleet (a slow or unreachable target is marked in its rows and
never holds the others); Enter picks a queue, q quits."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual.app import ComposeResult
from textual.message import Message
from textual.widgets import DataTable, Footer, Static

from dashboard import db
from dashboard.discover.fleet import Fleet
from dashboard.discover.fleet_target import TargetPoll
from dashboard.text.untrusted import escape_controls
from dashboard.ui.overview.app import QueueListApp
from dashboard.ui.overview.fleet_rows import COLUMNS, FleetRow, target_rows

TICK_S = 0.25  # how often due polls are started and a slow target's clock moves on


class TargetPolled(Message):
    def __init__(self, poll: TargetPoll) -> None:
        super().__init__()
        self.poll = poll


class FleetOverviewApp(QueueListApp[tuple[str, int] | None]):
    """Returns (target name, queue index) for the queue picked (Enter), or None (q)."""

    TITLE = "queuetop: targets"
    DEFAULT_CSS = (
        QueueListApp.DEFAULT_CSS
        + """
    #overview-detail { height: auto; max-height: 8; padding: 0 1; color: $text-muted; }
    """
    )

    def __init__(self, fleet: Fleet, *, interval: float = 2.0, notice: str | None = None) -> None:
        super().__init__()
        self.fleet, self.interval = fleet, interval
        self.notice = notice  # why the queue picked last could not be opened
        self.latest: dict[str, TargetPoll] = {}
        self.polls: dict[str, int] = dict.fromkeys(fleet.watches, 0)  # results applied
        self.rows: list[FleetRow] = []
        self._where = {n: db.safe_dsn(w.target.dsn) for n, w in fleet.watches.items()}
        self._last_read: dict[str, dict[int, datetime]] = {n: {} for n in fleet.watches}
        self._detail = ""

    def compose(self) -> ComposeResult:
        yield Static(Text(self._status()), id="overview-status")
        yield DataTable(id="overview", cursor_type="row", zebra_stripes=True)
        yield Static("", id="overview-detail")
        yield Footer(compact=True)

    def _status(self) -> str:
        fleet = self.fleet
        queues = sum(len(p.queues) for p in self.latest.values())
        kept = "kept" if fleet.keeps_connections else "opened for each poll"
        return (
            f"{len(fleet.watches)} targets, {queues} queues; polled in parallel on at most "
            f"{fleet.connections} connections ({kept}): Enter opens a queue, q quits"
        )

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(*COLUMNS)
        self._refresh_rows()
        table.focus()
        if self.notice:
            self.notify(escape_controls(self.notice), severity="error", markup=False)
        self.fleet.start(lambda poll: self.post_message(TargetPolled(poll)))
        self.set_interval(TICK_S, self._tick)

    def _tick(self) -> None:
        self.fleet.tick()
        self._refresh_rows()

    def on_target_polled(self, message: TargetPolled) -> None:
        if not self.is_running:
            return
        poll = message.poll
        self.latest[poll.name] = poll
        self.polls[poll.name] += 1
        for index, line in enumerate(poll.queues):
            if line.snapshot is not None:
                self._last_read[poll.name][index] = line.snapshot.taken_at
        self.query_one("#overview-status", Static).update(Text(self._status()))
        self._refresh_rows()

    def _refresh_rows(self) -> None:
        rows: list[FleetRow] = []
        for name in self.fleet.watches:
            rows += target_rows(
                name,
                self._where[name],
                self.latest.get(name),
                self.fleet.progress(name),
                self.interval,
                self._last_read[name],
            )
        self.rows = rows
        self.sync_rows([(r.key, r.cells) for r in rows])
        self._show_detail()

    def on_data_table_row_highlighted(self, _: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        row = self._cursor_row()
        text = escape_controls(row.detail) if row else ""
        if text != self._detail:  # the tick comes 4 times a second: redraw on a change only
            self._detail = text
            self.query_one("#overview-detail", Static).update(Text(text))

    def _cursor_row(self) -> FleetRow | None:
        table = self.query_one(DataTable)
        if not table.row_count or not 0 <= table.cursor_row < len(self.rows):
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return next((r for r in self.rows if r.key == key), None)

    def action_refresh_now(self) -> None:
        self.fleet.poll_now()

    def _open(self, key: str) -> None:
        """Leave for the queue's dashboard, unless it cannot be opened: then say why."""
        row = next((r for r in self.rows if r.key == key), None)
        if row is None:
            return
        why = row.why_not_open
        if why:
            self.notify(f"cannot open: {why}", severity="error", markup=False)
            return
        assert row.index is not None
        self.exit((row.target, row.index))

    def on_unmount(self) -> None:
        self.fleet.stop()
