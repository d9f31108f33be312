"""The contention lab as a screen: the same cells as `queuetop lab`, each row filled as
its cell finishes.

Self-contained: the lab runs in a thread worker (`runner`, by default
loadgen.lab.run_lab on the dashboard's DSN), which posts one `CellDone` per cell;
Escape closes the screen and the lab stops after the cell it is in.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from dashboard.loadgen import lab
from dashboard.loadgen.lab import CELLS, COLUMNS, Cell, CellResult, row_of
from dashboard.ui.plain import plain

# runner(on_cell, should_stop): runs the cells, calling on_cell with each result
Runner = Callable[[Callable[[CellResult], None], Callable[[], bool]], object]
NUMBER_STYLES = {"lost": "bold white on red", "double": "bold white on red"}
# the table's headers, narrower than the CLI's (COLUMNS), and widths fixed up front (the
# rows fill in later): 120 columns show them all
HEADERS = dict(
    zip(
        COLUMNS,
        (("cell", 24), ("n", 2), ("jobs/s", 7), ("p50", 7), ("p95", 8), ("waits", 5),
         ("nowait", 6), ("timeout", 7), ("deadlock", 8), ("server dl", 9), ("lost", 4),
         ("double", 6)),
        strict=True,
    )
)  # fmt: skip


# the order on screen: what must be 0 (lost, double) right after the speed figures, so an
# 80-column screen shows them (it dropped them, with deadlock and server dl, past its edge);
# the lock errors by kind follow, a scroll away there
DISPLAY = (
    "cell", "workers", "jobs/s", "claim p50", "claim p95", "lost", "double", "lock waits",
    "nowait", "lock_timeout", "deadlock", "server deadlocks",
)  # fmt: skip


def default_runner(dsn: str, workers: int, seconds: float) -> Runner:
    def run(on_cell: Callable[[CellResult], None], should_stop: Callable[[], bool]) -> object:
        return lab.run_lab(dsn, workers, seconds, on_cell=on_cell, should_stop=should_stop)

    return run


def lab_screen(dsn: str, workers: int = 4, seconds: float = 3.0) -> LabScreen:
    """The screen as the dashboard opens it: the whole lab on the dashboard's database."""
    return LabScreen(default_runner(dsn, workers, seconds))


class LabScreen(Screen):
    """One row per cell: pending (…), running (▶) or its figures."""

    DEFAULT_CSS = """
    LabScreen { layout: vertical; }
    LabScreen #lab-about { height: auto; padding: 0 1; color: $text-muted; }
    LabScreen #lab-status { height: 1; padding: 0 1; }
    LabScreen DataTable { height: 1fr; }
    """
    BINDINGS = [Binding("escape", "close", "Close", tooltip="Close the lab (it stops)")]

    class CellDone(Message):
        def __init__(self, result: CellResult) -> None:
            super().__init__()
            self.result = result

    class LabOver(Message):
        def __init__(self, error: str | None) -> None:
            super().__init__()
            self.error = error

    def __init__(self, runner: Runner, cells: tuple[Cell, ...] = CELLS) -> None:
        super().__init__()
        self.runner, self.cells = runner, cells
        self._stop = threading.Event()
        self._done = 0

    def compose(self) -> ComposeResult:
        yield Static(
            Text(
                f"Contention lab: each claim strategy with the claim transaction short and "
                f"held, a deadlock and a lock_timeout scenario; {lab.WORK_MS:g} ms of work per "
                "job, on a scratch queue. p50/p95: a claim's round trip (short: with the previous "
                "job's completion in it); waits: claims that queued on a "
                "row lock; nowait/timeout/deadlock: lock errors by kind (server dl: the "
                "server's own deadlock count); lost and double: from the table's own log."
            ),
            id="lab-about",
        )
        yield Static(id="lab-status")
        yield DataTable(id="lab-table", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for name in DISPLAY:
            header, width = HEADERS[name]
            table.add_column(header, width=width, key=name)
        for i, cell in enumerate(self.cells):
            pending = ("…",) * (len(COLUMNS) - 1)
            table.add_row(Text(cell.label), *(Text(v, "dim") for v in pending), key=str(i))
        self._status()
        self.run_lab()

    def _status(self, error: str | None = None) -> None:
        total = len(self.cells)
        if error is not None:
            text = plain(f"lab stopped: {error}", "bold red")  # the server's words, escaped
        elif self._done >= total:
            text = Text(f"done: {total} cells", "green")
        else:
            text = Text(f"running cell {self._done + 1}/{total}: {self.cells[self._done].label}")
            self._mark_running(self._done)
        self.query_one("#lab-status", Static).update(text)

    def _mark_running(self, i: int) -> None:
        table = self.query_one(DataTable)
        table.update_cell(str(i), COLUMNS[1], Text("▶", "bold"))

    @work(thread=True, exclusive=True, exit_on_error=False)
    def run_lab(self) -> None:
        error = None
        try:
            self.runner(lambda r: self.post_message(self.CellDone(r)), self._stop.is_set)
        except Exception as exc:  # shown on the screen; the dashboard goes on
            error = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        self.post_message(self.LabOver(error))

    def on_lab_screen_cell_done(self, message: CellDone) -> None:
        table = self.query_one(DataTable)
        key = str(self._done)
        for name, value in zip(COLUMNS, row_of(message.result), strict=True):
            bad = name in NUMBER_STYLES and value != "0"
            style = NUMBER_STYLES[name] if bad else ""
            table.update_cell(key, name, Text(value, style))
        self._done += 1
        self._status()

    def on_lab_screen_lab_over(self, message: LabOver) -> None:
        if message.error is not None or self._done < len(self.cells):
            self._status(message.error or "stopped")

    def action_close(self) -> None:
        self._stop.set()
        self.dismiss()
