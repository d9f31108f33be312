"""The producer: prefill, a steady enqueue rate, and the lease rescuer.

It runs as a thread of the parent with its own connection; every statement
is one short autocommit INSERT or UPDATE. A lost connection is reported and
retried with a bounded backoff, like the workers do.
"""

from __future__ import annotations

import threading
import time

import psycopg

from dashboard.loadgen.strategies import QueueSql

PREFILL_CHUNK = 10_000
TICK_S = 0.1
RESCUE_LIMIT = 1000
RETRY_MIN_S, RETRY_MAX_S = 0.1, 3.0


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def enqueue(conn: psycopg.Connection, queue_sql: QueueSql, n: int, payload_bytes: int) -> int:
    """Insert n ready jobs, in chunks; returns n."""
    done = 0
    while done < n:
        chunk = min(PREFILL_CHUNK, n - done)
        conn.execute(queue_sql.enqueue,
                     queue_sql.params(n=chunk, payload_bytes=payload_bytes))
        done += chunk
    return done


def requeue_expired(conn: psycopg.Connection, queue_sql: QueueSql,
                    stale_after_s: float) -> tuple[int, int]:
    """Hand expired leases back to ready (token advanced), or to the terminal state after
    max_attempts; returns (rescued, of which now terminal)."""
    if queue_sql.requeue_expired is None:
        return 0, 0
    rows = conn.execute(queue_sql.requeue_expired, queue_sql.params(
        stale_after_s=stale_after_s, limit=RESCUE_LIMIT)).fetchall()
    return len(rows), sum(1 for _, status in rows if status == queue_sql.values["terminal"])


class Producer(threading.Thread):
    """Enqueues `rate` jobs per second while not paused; rescues expired leases if asked."""

    def __init__(self, dsn: str, queue_sql: QueueSql, *, rate: float, payload_bytes: int,
                 rescue_every_s: float | None, stale_after_s: float):
        super().__init__(name="queuetop-producer", daemon=True)
        self.dsn, self.sql = dsn, queue_sql
        self.rate, self.payload_bytes = rate, payload_bytes
        self.rescue_every_s, self.stale_after_s = rescue_every_s, stale_after_s
        self.paused = False
        self.enqueued = 0
        self.rescued = 0
        self.rescued_dead = 0  # expired on their last attempt: terminal, not retried
        self.down: str | None = None  # why (the server's words), while it has no connection
        self.errors: list[str] = []  # other failures, each new one once; append-only
        self._halt = threading.Event()

    def stop(self) -> None:
        self._halt.set()

    def run(self) -> None:
        delay = RETRY_MIN_S
        while not self._halt.is_set():
            began = time.monotonic()
            try:
                with psycopg.connect(self.dsn, autocommit=True, connect_timeout=5,
                                     application_name="queuetop-producer") as conn:
                    self.down = None
                    self._loop(conn)
                return
            except psycopg.OperationalError as exc:  # the server went away, or is not back yet
                self.down = _first_line(exc)
            except psycopg.Error as exc:  # its statements fail: say so once, retry slowly
                error = f"producer: {_first_line(exc)}"
                if not self.errors or self.errors[-1] != error:
                    self.errors.append(error)
                delay = RETRY_MAX_S
            if time.monotonic() - began > RETRY_MAX_S:
                delay = RETRY_MIN_S  # it had worked for a while: a fresh outage
            self._halt.wait(delay)
            delay = min(RETRY_MAX_S, delay * 2)

    def _loop(self, conn: psycopg.Connection) -> None:
        owed = 0.0
        last = next_rescue = time.monotonic()
        while not self._halt.wait(TICK_S):
            now = time.monotonic()
            if not self.paused and self.rate > 0:
                owed += self.rate * (now - last)
                if owed >= 1:
                    self.enqueued += enqueue(conn, self.sql, int(owed), self.payload_bytes)
                    owed -= int(owed)
            else:
                owed = 0.0
            last = now
            if self.rescue_every_s and now >= next_rescue:
                rescued, dead = requeue_expired(conn, self.sql, self.stale_after_s)
                self.rescued += rescued
                self.rescued_dead += dead
                next_rescue = now + self.rescue_every_s
