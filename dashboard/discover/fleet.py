"""The overview across named targets: every target polled in parallel on a bounded pool,
each with its own timeouts, so a slow or unreachable one never holds the others.

    fleet = Fleet(watches, interval=2.0, connections=32)
    fleet.start(on_result)     # on_result(TargetPoll) is called on a pool thread
    fleet.tick()               # now and then (the UI's timer): polls whatever is due
    fleet.progress("prod")     # a poll under way: queued or running, for how long
    fleet.stop()               # no more polls; connections closed (in-flight ones as they end)

The bound is on connections: at most `connections` polls run at once, each on one
connection. With no more targets than that, each target keeps its connection between
polls (what one dashboard costs its database); with more, each poll opens its own and
closes it (the bound holds; a connection's start then costs each poll more).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from dashboard.config.targets import NamedTarget
from dashboard.discover.fleet_target import (
    ERROR,
    UNREACHABLE,
    TargetPoll,
    TargetWatch,
    first_line,
)
from dashboard.models import QueueSpec

DEFAULT_CONNECTIONS = 32
MAX_BACKOFF_S = 5.0  # a target back up is seen within this


@dataclass(frozen=True)
class Progress:
    """A poll under way: `queued` (waiting for a free connection) or `running`."""

    state: str
    seconds: float


class Fleet:
    """The targets' watches and the pool that polls them; see the module docstring."""

    def __init__(self, watches: list[TargetWatch], interval: float, connections: int) -> None:
        self.watches = {w.name: w for w in watches}  # in the targets file's order
        self.interval = interval
        self.connections = connections
        self.keeps_connections = len(watches) <= connections
        for watch in watches:
            watch.keep_connection = self.keeps_connections
        self._lock = threading.Lock()
        # the pool: daemon threads, so that a poll hung on a server that never answers
        # (no statement timeout can end it) cannot keep queuetop from exiting
        self._jobs: queue.SimpleQueue | None = None
        self._workers = 0
        self._on_result: Callable[[TargetPoll], None] | None = None
        self._next_at: dict[str, float] = {}
        self._queued_at: dict[str, float] = {}  # submitted and not finished
        self._running_at: dict[str, float] = {}  # started on a pool thread
        self._failures: dict[str, int] = {}
        self._generation = 0  # a poll from before stop() and start() again keeps out
        # after the first polls (all at once, for a quick first view), each target's next
        # one is put off by its share of the interval, once: the polls of a fleet on one
        # server (or one client) then come spread over the interval, not in a burst
        self._phase: dict[str, float] = {}

    @classmethod
    def of(
        cls,
        targets: list[NamedTarget],
        interval: float,
        connections: int,
        stale_after: str | None = None,
        shape: Callable[[QueueSpec], QueueSpec] | None = None,
    ) -> Fleet:
        """Each target's watch; a bad preset or queue file named in the targets file fails
        here, in one line (UserError), before anything connects. `shape` is what the
        command's flags change in every queue's spec."""
        watches = [TargetWatch(t, interval, stale_after, shape) for t in targets]
        return cls(watches, interval, connections)

    # --- lifecycle ------------------------------------------------------------------------

    def start(self, on_result: Callable[[TargetPoll], None]) -> None:
        """Poll every target now, then each `interval` after its last poll ended."""
        with self._lock:
            self._workers = max(1, min(self.connections, len(self.watches)))
            self._jobs = jobs = queue.SimpleQueue()
            self._on_result = on_result
            self._next_at = dict.fromkeys(self.watches, 0.0)
            self._generation += 1
            count = len(self.watches)
            self._phase = {n: i * self.interval / count for i, n in enumerate(self.watches)}
        for number in range(self._workers):
            name = f"queuetop-target-{number}"
            threading.Thread(target=self._work, args=(jobs,), name=name, daemon=True).start()
        for watch in self.watches.values():
            watch.reopen()
        self.tick()

    def stop(self) -> None:
        """No more polls; idle connections closed now, busy ones as their poll ends (within
        its own timeouts). Does not wait."""
        with self._lock:
            jobs, self._jobs = self._jobs, None
            self._on_result = None
            self._generation += 1
            self._queued_at.clear()
            self._running_at.clear()
        if jobs is not None:
            for _ in range(self._workers):  # each worker ends after the poll it runs
                jobs.put(None)
        for watch in self.watches.values():
            watch.close()

    # --- scheduling -----------------------------------------------------------------------

    def tick(self, now: float | None = None) -> list[str]:
        """Submit the polls that are due (never a second one for a target under way);
        the names submitted."""
        now = time.monotonic() if now is None else now
        submitted = []
        with self._lock:
            if self._jobs is None:
                return submitted
            for name in self.watches:
                if name in self._queued_at or self._next_at.get(name, 0.0) > now:
                    continue
                self._queued_at[name] = now
                self._jobs.put((name, self._generation))
                submitted.append(name)
        return submitted

    def poll_now(self) -> list[str]:
        """Every target not under way, now (`r`)."""
        with self._lock:
            self._next_at = dict.fromkeys(self.watches, 0.0)
        return self.tick()

    def progress(self, name: str, now: float | None = None) -> Progress | None:
        now = time.monotonic() if now is None else now
        with self._lock:
            if name in self._running_at:
                return Progress("running", now - self._running_at[name])
            if name in self._queued_at:
                return Progress("queued", now - self._queued_at[name])
        return None

    def _work(self, jobs: queue.SimpleQueue) -> None:
        while (job := jobs.get()) is not None:
            self._run(*job)

    def _run(self, name: str, generation: int) -> None:
        with self._lock:
            if generation != self._generation:
                return
            self._running_at[name] = time.monotonic()
        watch = self.watches[name]
        try:
            result = watch.poll()
        except Exception as exc:  # a bug, not the database: said in its row, polling goes on
            result = TargetPoll(name, ERROR, reason=f"internal error: {first_line(exc)}")
        with self._lock:
            if generation != self._generation:
                return
            self._queued_at.pop(name, None)
            self._running_at.pop(name, None)
            ended = time.monotonic()
            if result.kind == UNREACHABLE:
                failures = self._failures.get(name, 0) + 1
                self._failures[name] = failures
                delay = min(self.interval * 2 ** (failures - 1), max(MAX_BACKOFF_S, self.interval))
            else:
                self._failures[name] = 0
                delay = self.interval + self._phase.pop(name, 0.0)
            self._next_at[name] = ended + delay
            deliver = self._on_result
        if deliver is not None:
            deliver(result)
