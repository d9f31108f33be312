"""One named target of the overview across targets: its connection, its queues (the one
the targets file names, else those discovery finds) and a monitor per queue.

    watch = TargetWatch(named, interval=2.0, stale_after=None)
    result = watch.poll()     # on a pool thread of dashboard.discover.fleet: never raises

Each target is polled with its own timeouts (libpq's connect timeout, the monitor's
statement and lock timeouts); a target that cannot be reached, or whose connection is
lost and cannot be opened again at once, answers `unreachable` with libpq's reason.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import psycopg

from dashboard import config, db, discover, monitor
from dashboard.config.targets import NamedTarget
from dashboard.errors import UserError
from dashboard.models import QueueSpec, Snapshot
from dashboard.text import redact

LIVE = "live"
UNREACHABLE = "unreachable"
ERROR = "error"  # reached, but its queue could not be opened (the reason says why)
NO_QUEUE = "no queue"  # reached, and discovery found no queue to watch
# discovery and the first validation read the catalog: not under a fast interval's timeout
OPEN_TIMEOUT_MS = 2000


@dataclass(frozen=True)
class QueueLine:
    """One queue of a target at its last poll: a snapshot, or why there is none."""

    label: str  # the queue table, as the catalog names it
    snapshot: Snapshot | None = None
    error: str | None = None


@dataclass(frozen=True)
class TargetPoll:
    """A target's last poll: its queues (those known, even when it was not reached), or
    why it could not be read."""

    name: str
    kind: str  # LIVE, UNREACHABLE, ERROR or NO_QUEUE
    queues: tuple[QueueLine, ...] = ()
    reason: str | None = None  # why not LIVE, a whole line
    elapsed_s: float = 0.0  # the poll's wall time, connecting included


@dataclass
class WatchedQueue:
    label: str
    raw: QueueSpec | None  # as built, before the catalog: the drill-down validates it again
    spec: QueueSpec | None = None
    monitor: monitor.Monitor | None = None
    error: str | None = None  # why it has no spec (a table gone, a version refused)


def first_line(exc: BaseException) -> str:
    """An exception as one line, passwords scrubbed (a driver's text may quote one)."""
    if isinstance(exc, db.ConnectionFailed):
        return exc.reason
    text = str(exc).strip()
    return redact.scrub(text.splitlines()[0]) if text else type(exc).__name__


def named_spec(target: NamedTarget, stale_after: str | None) -> QueueSpec | None:
    """The spec of the queue a target names (None: discovery finds its queues). A bad
    preset or queue file fails here, in one line, before anything connects. The command's
    --stale-after (`stale_after`) wins over the target's own, as with --target."""
    if not target.has_queue:
        return None
    return config.build_spec(
        queue_file=str(target.queue) if target.queue else None,
        preset=target.preset,
        table=target.table,
        stale_after=stale_after or target.stale_after,
    )


class TargetWatch:
    """One target, polled by one thread at a time (the fleet never runs two of its polls
    at once); `close()` may come from another thread."""

    def __init__(
        self,
        target: NamedTarget,
        interval: float,
        stale_after: str | None = None,
        shape: Callable[[QueueSpec], QueueSpec] | None = None,
    ) -> None:
        self.target = target
        self.name = target.name
        self.interval = interval
        self.stale_after = stale_after or target.stale_after
        # what the command's own flags change in every spec (--latency-window)
        self.shape = shape or (lambda spec: spec)
        named = named_spec(target, stale_after)
        self.named = None if named is None else self.shape(named)
        self.queues: list[WatchedQueue] | None = None  # None until first reached
        self.keep_connection = True  # the fleet says: above its bound, one per poll
        self._conn: psycopg.Connection | None = None
        self._lock = threading.Lock()
        self._close_after = False

    # --- the poll, on a pool thread -----------------------------------------------------

    def poll(self) -> TargetPoll:
        started = time.monotonic()
        with self._lock:
            try:
                result = self._poll_reconnecting()
            except (psycopg.OperationalError, OSError, db.ConnectionFailed) as exc:
                self._drop()
                result = self._result(UNREACHABLE, first_line(exc))
            except UserError as exc:  # the named queue cannot be opened (table gone...)
                result = self._result(ERROR, first_line(exc))
            except psycopg.Error as exc:
                self._drop()
                result = self._result(ERROR, first_line(exc))
            finally:
                if self._close_after or not self.keep_connection:
                    self._drop()
        return _timed(result, time.monotonic() - started)

    def _poll_reconnecting(self) -> TargetPoll:
        """A connection lost since the last poll (a restart, a terminated backend) is
        opened again at once; only if that fails too is the target unreachable."""
        had = self._conn is not None and not self._conn.closed
        try:
            return self._poll_once()
        except (psycopg.OperationalError, OSError):
            lost = self._conn is not None and (self._conn.broken or self._conn.closed)
            if not (had and lost):
                raise
        self._drop()
        return self._poll_once()

    def _poll_once(self) -> TargetPoll:
        conn = self._connection()
        if self.queues is None:
            self._open(conn)
        if not self.queues:
            why = "no queue found (high or medium confidence): `queuetop discover` lists them"
            return TargetPoll(self.name, NO_QUEUE, reason=why)
        lines = tuple(self._poll_queue(conn, q) for q in self.queues)
        return TargetPoll(self.name, LIVE, lines)

    def _connection(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed:
            timeout = max(OPEN_TIMEOUT_MS, db.monitor_timeout_ms(self.interval))
            self._conn = db.connect_monitor(self.target.dsn, timeout_ms=timeout)
        return self._conn

    def _open(self, conn: psycopg.Connection) -> None:
        """The target's queues: the one it names (validated: a broken one raises), else
        discovery's, each validated on its own (a broken one keeps its reason)."""
        if self.named is not None:
            spec = config.validate(conn, self.named)
            self.queues = [self._watched(str(spec.table), self.named, spec)]
            return
        queues = []
        for found in discover.watchable(discover.find_queues(conn)):
            raw = None
            try:
                raw = self.shape(discover.spec_for(found, stale_after=self.stale_after))
                queues.append(self._watched(str(found.table), raw, config.validate(conn, raw)))
            except UserError as exc:  # a version its adapter refuses, --stale-after refused
                queues.append(WatchedQueue(str(found.table), raw, error=first_line(exc)))
        self.queues = queues

    def _watched(self, label: str, raw: QueueSpec, spec: QueueSpec) -> WatchedQueue:
        return WatchedQueue(label, raw, spec, monitor.Monitor(spec, self.interval))

    def _poll_queue(self, conn: psycopg.Connection, queue: WatchedQueue) -> QueueLine:
        if queue.monitor is None:
            return QueueLine(queue.label, error=queue.error)
        try:
            return QueueLine(queue.label, queue.monitor.poll(conn))
        except (UserError, psycopg.Error) as exc:
            if conn.broken or conn.closed:  # the connection, not this queue: the target's
                raise
            return QueueLine(queue.label, error=first_line(exc))

    def _result(self, kind: str, reason: str) -> TargetPoll:
        known = tuple(QueueLine(q.label) for q in self.queues or ())
        return TargetPoll(self.name, kind, known, reason)

    # --- from any thread ----------------------------------------------------------------

    def raw_spec(self, index: int) -> QueueSpec:
        """The spec of one of its queues, as built (the drill-down validates it again)."""
        assert self.queues is not None
        queue = self.queues[index]
        if queue.raw is None:
            raise UserError(queue.error or "its spec could not be built")
        return queue.raw

    def close(self) -> None:
        """Close the connection now if no poll runs, else as that poll ends."""
        if self._lock.acquire(blocking=False):
            try:
                self._drop()
                self._close_after = False
            finally:
                self._lock.release()
        else:
            self._close_after = True

    def reopen(self) -> None:
        """Polls may keep their connection again (after close())."""
        self._close_after = False

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except psycopg.Error:  # already broken; closing is best effort
                pass


def _timed(result: TargetPoll, elapsed_s: float) -> TargetPoll:
    return TargetPoll(result.name, result.kind, result.queues, result.reason, elapsed_s)
