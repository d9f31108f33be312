"""A small app on a real terminal for test_ui_quiet_input.py: `python quiet_input_app.py
quiet|textual LOG`. `quiet` is a PlainApp (queuetop's apps' base, which picks
ui/forks/quiet_driver.py's driver), `textual` a plain Textual App (Textual's LinuxDriver). It
writes to LOG the input thread's native id once mounted, then every key it receives;
`q` quits."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from textual.app import App
from textual.widgets import Static

from dashboard.ui.plain import PlainApp


def build(kind: str, log: Path) -> App:
    base = PlainApp if kind == "quiet" else App

    class KeyLog(base):
        def compose(self):
            yield Static("ready")

        def on_mount(self) -> None:
            thread = next(t for t in threading.enumerate() if t.name == "textual-input")
            driver = type(self._driver).__name__
            with log.open("a") as out:
                out.write(f"driver {driver} input-thread {thread.native_id}\n")

        def on_key(self, event) -> None:
            with log.open("a") as out:
                out.write(f"key {event.key}\n")
            if event.key == "q":
                self.exit()

    return KeyLog()


if __name__ == "__main__":
    build(sys.argv[1], Path(sys.argv[2])).run()
