"""The least a Textual monitor of PostgreSQL does: what bench/vs_pg_activity.py --floor runs.

Once per interval a thread runs one statement and hands the answer to the app, which shows
it in one label: a header, the label and a footer on queuetop's own App base (PlainApp, the
pieces of dashboard/ui/forks on: the quiet input driver, the line compositor). So its CPU is
Textual's cost of a poll that repaints one line, with one round trip to the server, and no
queue, no tables and no plots: the floor under queuetop's own work.

    python bench/textual_floor.py DSN [--interval 1]
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

import psycopg
from textual.app import ComposeResult
from textual.widgets import Footer, Header, Static

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dashboard.ui.plain import PlainApp  # noqa: E402

APPLICATION_NAME = "textual-floor"


class FloorApp(PlainApp):
    BINDINGS = [("q", "quit", "Quit")]

    def __init__(self, dsn: str, interval: float) -> None:
        super().__init__()
        self.dsn, self.interval = dsn, interval
        self._stop = threading.Event()

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("connecting", id="answer")
        yield Footer()

    def on_mount(self) -> None:
        threading.Thread(target=self._poll, name="floor-poll", daemon=True).start()

    def on_unmount(self) -> None:
        self._stop.set()

    def _poll(self) -> None:
        label = self.query_one("#answer", Static)
        with psycopg.connect(self.dsn, autocommit=True, application_name=APPLICATION_NAME) as conn:
            while not self._stop.wait(self.interval):
                row = conn.execute("SELECT now(), count(*) FROM pg_stat_activity").fetchone()
                try:
                    self.call_from_thread(label.update, f"{row[0]:%H:%M:%S}  {row[1]} sessions")
                except RuntimeError:  # the app has ended
                    return


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dsn")
    parser.add_argument("--interval", type=float, default=1.0)
    args = parser.parse_args()
    FloorApp(args.dsn, args.interval).run()


if __name__ == "__main__":
    main()
