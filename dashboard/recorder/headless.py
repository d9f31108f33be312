"""`queuetop record`'s loop: poll, write the frame, follow the audit trail, sleep.

The poll is the dashboard's (monitor.Monitor on a monitor connection); the recorder adds
no statement to it. The next poll starts `interval` after the last one started (or at once
when it took longer), so polls never pile up. A lost server is retried with a backoff
capped at MAX_BACKOFF_S and said once per outage.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import psycopg

from dashboard import db
from dashboard.errors import UserError
from dashboard.models import QueueSpec
from dashboard.monitor import Monitor
from dashboard.recorder.recorder import Recorder

MAX_BACKOFF_S = 5.0


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, db.ConnectionFailed):
        return exc.reason
    if isinstance(exc, UserError) and isinstance(exc.__cause__, psycopg.Error):
        exc = exc.__cause__
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class RecordLoop:
    """Polls one queue into a Recorder until `stop` is set or `frames` are written."""

    def __init__(
        self,
        dsn: str,
        spec: QueueSpec,
        interval: float,
        recorder: Recorder,
        *,
        conn: psycopg.Connection | None = None,
        log: Callable[[str], None] = print,
    ):
        self.dsn = dsn
        self.interval = interval
        self.recorder = recorder
        self.monitor = Monitor(spec, interval)
        self.log = log
        self.frames = 0
        self.poll_cpu_s = 0.0  # this thread's CPU inside monitor.poll (bench/record_cost.py)
        self._conn = conn
        self._outage: str | None = None
        self._audit_said: str | None = None
        if recorder.follower is not None:  # the trail is read between polls, on this thread
            recorder.follower.share(lambda: self._conn)

    def run(self, stop: threading.Event, frames: int | None = None) -> None:
        failures = 0
        while not stop.is_set() and (frames is None or self.frames < frames):
            started = time.monotonic()
            if self._poll_and_record():
                failures = 0
                delay = self.interval - (time.monotonic() - started)
            else:
                failures += 1
                delay = min(self.interval * 2 ** (failures - 1), MAX_BACKOFF_S)
            self._say_audit_problem()
            if delay > 0:
                stop.wait(delay)

    def _poll_and_record(self) -> bool:
        try:
            if self._conn is None or self._conn.closed:
                self._conn = db.connect_monitor(
                    self.dsn, timeout_ms=db.monitor_timeout_ms(self.interval)
                )
            cpu = time.thread_time()
            snap = self.monitor.poll(self._conn)
            self.poll_cpu_s += time.thread_time() - cpu
        except (psycopg.Error, UserError, OSError) as exc:
            if isinstance(exc, (psycopg.OperationalError, UserError, OSError)):
                self.close()  # reconnect on the next try
            reason = _one_line(exc)
            if reason != self._outage:
                self.log(f"poll failed: {reason}; retrying (frames are not written meanwhile)")
                self._outage = reason
            self.recorder.follow()  # the audit trail has its own connection and schedule
            return False
        if self._outage is not None:
            self.log("polling again")
            self._outage = None
        self.recorder.record(snap)
        self.frames += 1
        return True

    def _say_audit_problem(self) -> None:
        follower = self.recorder.follower
        problem = follower.problem if follower is not None else None
        if problem and problem != self._audit_said:
            self.log(f"audit trail: {problem}; retrying every minute")
        self._audit_said = problem

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except psycopg.Error:  # already broken
                pass
