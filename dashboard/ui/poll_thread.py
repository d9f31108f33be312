"""One long-lived thread that runs the poll whenever it is due.

A Textual thread worker per poll, started by a Textual timer, cost the UI thread more than
drawing some panels: a timer task, a thread, a Worker and its three state messages, every
second. This thread sleeps on a condition until the poll is due (or it is told to stop),
runs it, and sleeps again; the app's thread only moves the due time. A run counts as under
way from its start until the app says it is `done` with its result (landed or failed): the
next one is not started before that, so polls never overlap or pile up.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class PollThread:
    """Runs `work()` on its own thread when due; `on_exit()` there when it stops."""

    def __init__(self, work: Callable[[], None], on_exit: Callable[[], None], name: str):
        self._work = work
        self._on_exit = on_exit
        self._name = name
        self._wake = threading.Condition()
        self._due: float | None = None  # time.monotonic() of the next run; None: none asked
        self._busy = False  # a run started and the app is not done with it
        self._stopping = False
        self._thread: threading.Thread | None = None

    @property
    def busy(self) -> bool:
        with self._wake:
            return self._busy

    def run_in(self, delay: float | None) -> bool:
        """The next run `delay` seconds from now (None: no run asked). False, and nothing
        changed, while a run is under way."""
        with self._wake:
            if self._busy or self._stopping:
                return False
            self._due = None if delay is None else time.monotonic() + max(delay, 0.0)
            self._wake.notify()
        if self._thread is None and delay is not None:
            self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
            self._thread.start()
        return True

    def done(self) -> None:
        """The app has handled the last run's result: another may start."""
        with self._wake:
            self._busy = False

    def stop(self, wait_s: float = 0.0) -> None:
        """No more runs; one under way ends on its own (within its statement timeout). Waits
        up to `wait_s` for the thread to finish."""
        with self._wake:
            self._stopping = True
            self._wake.notify()
        if self._thread is not None and wait_s:
            self._thread.join(wait_s)

    def _loop(self) -> None:
        try:
            while self._next():
                self._work()
        finally:
            self._on_exit()

    def _next(self) -> bool:
        """Sleep until a run is due; False when stopping."""
        with self._wake:
            while not self._stopping:
                due = self._due
                if due is not None and not self._busy:
                    left = due - time.monotonic()
                    if left <= 0:
                        self._due, self._busy = None, True
                        return True
                    self._wake.wait(left)
                else:
                    self._wake.wait()
            return False
