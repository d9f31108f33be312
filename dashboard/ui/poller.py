"""Polling: one thread worker per poll, the next armed when the last one ends."""

from __future__ import annotations

import math
import time

import psycopg
from psycopg import errors
from textual import work
from textual.timer import Timer
from textual.worker import Worker, WorkerState

from dashboard import db
from dashboard.errors import UserError
from dashboard.text import redact
from dashboard.ui.messages import PollFailed, SnapshotReady
from dashboard.ui.widgets.status import LinkState

MAX_BACKOFF_S = 5.0  # a restarted server is seen within this


def _one_line_error(exc: BaseException) -> str:
    if isinstance(exc, db.ConnectionFailed):
        return exc.reason  # the driver's reason, without the command-line advice
    if isinstance(exc, UserError) and isinstance(exc.__cause__, psycopg.Error):
        exc = exc.__cause__
    text = str(exc).strip()
    return redact.scrub(text.splitlines()[0]) if text else type(exc).__name__


def link_of(snap, interval: float) -> LinkState:
    """The header's state after a poll: live, slow, or which section is behind and why.

    A table locked by someone else degrades only the sections that read it: the poll
    still lands (locks, waits, idle sessions are fresh) and the header names the blocker.
    """
    behind = [s for s in snap.sections if s.error]
    if behind:
        worst = next((s for s in behind if "locked by" in s.error), behind[0])
        kind = "blocked" if "locked by" in worst.error else "timed out"
        age = "never read" if worst.age_s is None else f"{math.ceil(worst.age_s)}s old"
        return LinkState(kind, f"{worst.name} {age}", worst.error)
    if snap.elapsed_ms > interval * 1000:
        return LinkState("slow", f"poll took {snap.elapsed_ms:.0f} ms")
    return LinkState("live")


class PollingMixin:
    """Polls a monitor.Monitor for QueuetopApp; a slow or locked database never stacks polls.

    Expects on the app: dsn, spec, interval, paused, polling_enabled, link, snapshot,
    polls_started, snapshots_applied, failures, _conn, _timer, _in_flight, _new_timeouts,
    _retry_at, _countdown, apply_snapshot() and _render_chrome().
    """

    _conn: psycopg.Connection | None
    _timer: Timer | None

    @work(thread=True, exclusive=True, exit_on_error=False, group="poll")
    def poll(self) -> None:
        """One poll on the monitor connection, opened (again) if needed."""
        try:
            if self._new_timeouts:
                self._new_timeouts = False
                self._drop_connection()
            snap = self._collect_reconnecting()
        except errors.QueryCanceled as exc:  # statement timeout: slow, still connected
            self.post_message(PollFailed(_one_line_error(exc), "timed out"))
            return
        except errors.LockNotAvailable as exc:  # lock timeout: e.g. a LOCK TABLE on the queue
            self.post_message(PollFailed(_one_line_error(exc), "blocked"))
            return
        except (psycopg.OperationalError, UserError, OSError) as exc:
            self._drop_connection()
            self.post_message(PollFailed(_one_line_error(exc), "disconnected"))
            return
        except psycopg.Error as exc:  # e.g. the queue table was dropped or renamed
            self._drop_connection()
            self.post_message(PollFailed(_one_line_error(exc), "error"))
            return
        self.post_message(SnapshotReady(snap))

    def _collect(self):  # -> Snapshot, on the connection opened (again) if needed
        if self._conn is None or self._conn.closed:
            timeout_ms = db.monitor_timeout_ms(self.interval)
            self._conn = db.connect_monitor(self.dsn, timeout_ms=timeout_ms)
        self.monitor.interval = self.interval
        return self.monitor.poll(self._conn)

    def _collect_reconnecting(self):
        """A connection that was fine and is lost now (a terminated backend, a restart, a
        network blip) is opened again at once, not after a backoff: the server is most
        likely there. Only if that fails too does the poll fail (and back off)."""
        had = self._conn is not None and not self._conn.closed
        try:
            return self._collect()
        except (psycopg.OperationalError, OSError):
            lost = self._conn is not None and (self._conn.broken or self._conn.closed)
            if not (had and lost):  # a timeout on a live connection, or no server at all
                raise
        self._drop_connection()
        return self._collect()

    def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except psycopg.Error:  # already broken; closing is best effort
                pass

    def _start_poll(self) -> None:
        if self._in_flight or not self.polling_enabled:
            return
        self._cancel_timer()
        self._in_flight = True
        self.polls_started += 1
        if self._retry_at is not None:  # the header says so while the retry runs
            self._retry_at = None
            self.link = LinkState(self.link.kind, "retrying now", self.link.reason)
            self._render_chrome()
        self.poll()

    def _arm(self, delay: float) -> None:
        """The next poll starts `delay` after the last one ended, never on top of it."""
        self._cancel_timer()
        if not self.paused and self.polling_enabled:
            self._timer = self.set_timer(delay, self._start_poll)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "poll":
            return
        if event.state == WorkerState.ERROR:  # a bug, not the database: show it, keep going
            self._in_flight = False
            self.post_message(PollFailed(_one_line_error(event.worker.error), "internal error"))

    def on_snapshot_ready(self, message: SnapshotReady) -> None:
        self._in_flight = False
        if not self.is_running:  # a poll that ends while the app shuts down: widgets are gone
            return
        self.failures = 0
        self._stop_countdown()
        snap = message.snapshot
        self.link = link_of(snap, self.interval)
        if self.paused:
            self.link = LinkState("paused")
        self.apply_snapshot(snap)
        self._arm(self.interval)

    def on_poll_failed(self, message: PollFailed) -> None:
        self._in_flight = False
        if not self.is_running:
            return
        self.failures += 1
        delay = min(self.interval * 2 ** (self.failures - 1), MAX_BACKOFF_S)
        self.link = LinkState(message.kind, f"retrying in {math.ceil(delay)}s", message.reason)
        self._render_chrome()
        self._arm(delay)
        if self.paused or not self.polling_enabled:
            return
        self._retry_at = time.monotonic() + delay
        if self._countdown is None:
            self._countdown = self.set_interval(1.0, self._count_down)

    def _count_down(self) -> None:
        """The header's 'retrying in Ns' counts down, not frozen at the backoff it began at."""
        if self._retry_at is None:
            return
        left = math.ceil(self._retry_at - time.monotonic())
        if left >= 1:
            self.link = LinkState(self.link.kind, f"retrying in {left}s", self.link.reason)
            self._render_chrome()

    def _stop_countdown(self) -> None:
        self._retry_at = None
        if self._countdown is not None:
            self._countdown.stop()
            self._countdown = None
