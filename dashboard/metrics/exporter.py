"""The state behind `queuetop export`: a poll loop and a Prometheus collector over its result.

The loop polls monitor.collect on a monitor connection (read-only, with timeouts) every
`interval`, the next poll armed when the last one ends, and keeps the last snapshot. A
scrape never touches the database: it reads that snapshot. While the database is down
the loop reconnects with a capped backoff and scrapes keep the last values, with
`queuetop_up 0` and the snapshot's age saying how old they are.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator

import psycopg
from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import Metric
from psycopg import errors

from dashboard import config, db
from dashboard.errors import UserError
from dashboard.metrics import families
from dashboard.models import QueueSpec, Snapshot
from dashboard.monitor import Monitor
from dashboard.text.untrusted import escape_controls

MAX_BACKOFF_S = 5.0  # a restarted server is seen within this, as in the dashboard


def failure_reason(exc: BaseException) -> str:
    """One of families.ERROR_REASONS, as the dashboard's header names a failed poll."""
    if isinstance(exc, errors.QueryCanceled):
        return "timeout"
    if isinstance(exc, errors.LockNotAvailable):
        return "blocked"
    if is_connection_error(exc):
        return "disconnected"
    return "error"


def is_connection_error(exc: BaseException) -> bool:
    """The server could not be reached (as opposed to a bad spec or a failing statement)."""
    if isinstance(exc, db.ConnectionFailed):
        return not exc.unparsable
    if isinstance(exc, UserError):
        return isinstance(exc.__cause__, psycopg.OperationalError)
    return isinstance(exc, (psycopg.OperationalError, OSError))


def one_line(exc: BaseException) -> str:
    if isinstance(exc, db.ConnectionFailed):
        return exc.reason  # the driver's reason, the password masked
    if isinstance(exc, UserError) and isinstance(exc.__cause__, psycopg.Error):
        exc = exc.__cause__  # the driver's reason, without the command-line advice
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _stderr(line: str) -> None:
    print(escape_controls(f"queuetop export: {line}"), file=sys.stderr, flush=True)


class Exporter:
    """Polls one queue and serves its last snapshot as metric families (a Collector)."""

    def __init__(
        self,
        dsn: str,
        spec: QueueSpec | None,
        interval: float,
        *,
        log: Callable[[str], None] = _stderr,
        max_groups: int = families.DEFAULT_MAX_GROUPS,
        spec_of: Callable[[psycopg.Connection], QueueSpec] | None = None,
    ) -> None:
        self.dsn = dsn
        self.max_groups = max_groups
        self.spec = spec  # validated against the catalog on the first poll that connects
        # (or, without a spec, the one spec_of finds on that connection: a target of a
        # targets file that names no queue is discovered when first polled)
        self.spec_of = spec_of
        self.interval = interval
        self.log = log
        self.monitor: Monitor | None = None  # made once the spec is validated
        self._conn: psycopg.Connection | None = None
        self._lock = threading.Lock()
        self.snapshot: Snapshot | None = None
        self.up = False
        self.polls = 0
        self.poll_seconds_sum = 0.0
        self.last_poll_s: float | None = None
        self.errors: dict[str, int] = {}
        self.failures = 0  # in a row
        self.last_error: BaseException | None = None

    # --- polling ------------------------------------------------------------------------

    def poll_once(self, *, log: bool = True) -> BaseException | None:
        """One poll; the failure (counted, and logged if `log`) or None. Never raises for the
        database."""
        started = time.perf_counter()
        try:
            if self._conn is None or self._conn.closed:
                self._conn = db.connect_monitor(self.dsn, db.monitor_timeout_ms(self.interval))
            if self.monitor is None:
                spec = self.spec_of(self._conn) if self.spec_of is not None else self.spec
                self.spec = config.validate(self._conn, spec)
                self.monitor = Monitor(self.spec, self.interval)
            snap = self.monitor.poll(self._conn)
        except (psycopg.Error, UserError, OSError) as exc:
            if not isinstance(exc, (errors.QueryCanceled, errors.LockNotAvailable)):
                self._drop_connection()  # the next poll starts on a fresh connection
            self._record(time.perf_counter() - started, None, exc, log)
            return exc
        self._record(time.perf_counter() - started, snap, None, log)
        return None

    def _record(
        self, seconds: float, snap: Snapshot | None, exc: BaseException | None, log: bool
    ) -> None:
        with self._lock:
            was_up = self.up
            self.polls += 1
            self.poll_seconds_sum += seconds
            self.last_poll_s = seconds
            self.up = exc is None
            self.last_error = exc
            if snap is not None:
                self.snapshot = snap
                self.failures = 0
            else:
                reason = failure_reason(exc)
                self.errors[reason] = self.errors.get(reason, 0) + 1
                self.failures += 1
        if not log:
            return
        if exc is not None and (was_up or self.failures == 1):
            self.log(
                f"poll failed ({failure_reason(exc)}): {one_line(exc)}; "
                + ("serving the last values as stale, " if self.snapshot else "")
                + "retrying"
            )
        elif exc is None and not was_up and self.polls > 1:
            self.log("database reachable again; values are live")

    def next_delay(self) -> float:
        """The interval after a good poll; after failures a backoff capped at MAX_BACKOFF_S."""
        if self.failures == 0:
            return self.interval
        return min(self.interval * 2 ** (self.failures - 1), MAX_BACKOFF_S)

    def run(self, stop: threading.Event) -> None:
        """Poll until `stop` is set; the next poll starts `next_delay()` after the last ended."""
        while not stop.wait(self.next_delay()):
            self.poll_once()

    def close(self) -> None:
        self._drop_connection()

    def backend_pid(self) -> int | None:
        """The server process of the monitor connection (bench/export_cost.py reads its CPU)."""
        conn = self._conn
        return conn.info.backend_pid if conn is not None and not conn.closed else None

    def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except psycopg.Error:  # already broken; closing is best effort
                pass

    def stats(self) -> tuple[families.PollStats, Snapshot | None]:
        """The poll counters and the last snapshot, read together (a multi-target
        exporter's own /metrics reports them per target)."""
        with self._lock:
            return (
                families.PollStats(
                    up=self.up,
                    now_unix=time.time(),
                    polls=self.polls,
                    poll_seconds_sum=self.poll_seconds_sum,
                    last_poll_s=self.last_poll_s,
                    errors=dict(self.errors),
                ),
                self.snapshot,
            )

    # --- the collector ------------------------------------------------------------------

    def collect(self) -> Iterator[Metric]:
        """prometheus_client's Collector protocol: called on every scrape."""
        with self._lock:
            snap, spec = self.snapshot, self.spec
            stats = families.PollStats(
                up=self.up,
                now_unix=time.time(),
                polls=self.polls,
                poll_seconds_sum=self.poll_seconds_sum,
                last_poll_s=self.last_poll_s,
                errors=dict(self.errors),
            )
        yield from families.exporter_families(stats, snap)
        if snap is not None:
            yield from families.snapshot_families(snap, spec, self.max_groups)


def serve_metrics(exporter: Exporter, host: str, port: int):
    """Serve /metrics (Prometheus text, or OpenMetrics when asked) in a daemon thread.

    Returns the HTTP server (its `server_address` has the port bound, for port 0).
    """
    registry = CollectorRegistry(auto_describe=False)
    registry.register(exporter)
    httpd, _thread = start_http_server(port, addr=host, registry=registry)
    return httpd
