"""The producer: prefill, a steady enqueue rate, and (opt-in) the lease rescuer.

It runs as a thread of the parent with its own connection; every enqueue is
one short autocommit INSERT. The rescuer, when asked for, runs in the same
thread on a session of its own, one audited transaction per round
(rescuer.py). A lost connection is reported and retried with a bounded
backoff, like the workers do.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass

import psycopg

from dashboard.audit.writers import AuditSink
from dashboard.loadgen import rescuer
from dashboard.loadgen.strategies import QueueSql

PREFILL_CHUNK = 10_000
TICK_S = 0.1
RETRY_MIN_S, RETRY_MAX_S = 0.1, 3.0


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def enqueue(conn: psycopg.Connection, queue_sql: QueueSql, n: int, payload_bytes: int) -> int:
    """Insert n ready jobs, in chunks; returns n."""
    done = 0
    while done < n:
        chunk = min(PREFILL_CHUNK, n - done)
        conn.execute(queue_sql.enqueue, queue_sql.params(n=chunk, payload_bytes=payload_bytes))
        done += chunk
    return done


@dataclass(frozen=True)
class Rescue:
    """What the rescuer needs: where its audit records go, and how often it looks."""

    audit: AuditSink
    every_s: float
    table: str  # the queue table, as the audit log names it
    stale_after_s: float  # for rows without lease_until: started_at + stale_after


class Producer(threading.Thread):
    """Enqueues `rate` jobs per second while not paused; rescues expired leases if asked."""

    def __init__(
        self,
        dsn: str,
        queue_sql: QueueSql,
        *,
        rate: float,
        payload_bytes: int,
        rescue: Rescue | None = None,
    ):
        super().__init__(name="queuetop-producer", daemon=True)
        self.dsn, self.sql = dsn, queue_sql
        self.rate, self.payload_bytes = rate, payload_bytes
        self.rescue = rescue
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
                with (
                    psycopg.connect(
                        self.dsn,
                        autocommit=True,
                        connect_timeout=5,
                        application_name="queuetop-producer",
                    ) as conn,
                    (
                        rescuer.connect(self.dsn) if self.rescue else contextlib.nullcontext()
                    ) as rescue_conn,
                ):
                    self.down = None
                    self._loop(conn, rescue_conn)
                return
            except psycopg.OperationalError as exc:  # the server went away, or is not back yet
                self.down = _first_line(exc)
            except psycopg.Error as exc:  # its statements fail: say so once, retry slowly
                self._error(f"producer: {_first_line(exc)}")
                delay = RETRY_MAX_S
            if time.monotonic() - began > RETRY_MAX_S:
                delay = RETRY_MIN_S  # it had worked for a while: a fresh outage
            self._halt.wait(delay)
            delay = min(RETRY_MAX_S, delay * 2)

    def _error(self, error: str) -> None:
        if not self.errors or self.errors[-1] != error:
            self.errors.append(error)

    def _loop(self, conn: psycopg.Connection, rescue_conn: psycopg.Connection | None) -> None:
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
            if self.rescue and rescue_conn is not None and now >= next_rescue:
                self._rescue(rescue_conn, self.rescue)
                next_rescue = now + self.rescue.every_s

    def _rescue(self, conn: psycopg.Connection, rescue: Rescue) -> None:
        """One audited rescue round; a failure (its transaction rolled back, nothing
        changed) is said once and the next round tries again; a lost connection is raised."""
        try:
            rescued = rescuer.rescue_expired(
                conn, self.sql, rescue.table, rescue.audit, rescue.stale_after_s
            )
        except psycopg.Error as exc:
            if conn.closed or conn.broken:
                raise  # the server went away: run() reconnects both sessions
            self._error(f"rescuer: {_first_line(exc)}; nothing rescued in that round")
            return
        self.rescued += len(rescued)
        self.rescued_dead += sum(1 for r in rescued if r.status == self.sql.values["terminal"])
