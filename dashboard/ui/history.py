"""Bounded history of snapshots for the plots, kept outside the widgets."""

from __future__ import annotations

import copy
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime

from dashboard.models import ROLES, Snapshot

DEFAULT_POINTS = 300


def _deque(maxlen: int) -> deque:
    return deque(maxlen=maxlen)


@dataclass
class History:
    """Per-poll series: x is seconds since the first snapshot (from taken_at, not the clock).

    Throughput is jobs done per second between two real reads of the done count. The
    monitor reads the finished states less often than it polls when they cost more than
    their share (a large table): between reads a snapshot carries the last count, and
    says when it was read (Snapshot.count_read_at). A poll's change of a carried count is
    0, and the poll that reads it again would get all the seconds since: the rate is the
    change between real reads over the time between them, held until the next read.
    """

    maxlen: int = DEFAULT_POINTS
    times: deque = field(init=False)
    depth: dict[str, deque] = field(init=False)
    throughput: deque = field(init=False)
    oldest_ready_s: deque = field(init=False)
    waiting: deque = field(init=False)
    # the queue's p95 wait over the latency window at each poll; None where it was not
    # measured (no job started in the window, the section not read, the spec cannot tell)
    p95_wait_s: deque = field(init=False)
    # what the latest poll said instead of a p95 wait ('' once it has one): the plot
    # shows it while it has no point to draw
    p95_wait_note: str = field(init=False, default="")
    # (x, done) at each real read of the done count, x as in `times`
    done_reads: deque = field(init=False)
    _origin: datetime | None = field(init=False, default=None)
    _last_read: tuple[datetime, int] | None = field(init=False, default=None)
    _rate: float | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Empty again (replay rebuilds the history around the frame it moves to)."""
        self._origin = None
        self._last_read = None
        self._rate = None
        self.times = _deque(self.maxlen)
        self.depth = {role: _deque(self.maxlen) for role in ROLES}
        self.throughput = _deque(self.maxlen)
        self.oldest_ready_s = _deque(self.maxlen)
        self.waiting = _deque(self.maxlen)
        self.p95_wait_s = _deque(self.maxlen)
        self.p95_wait_note = ""
        self.done_reads = _deque(self.maxlen)

    def copy(self) -> History:
        """A copy that goes on on its own (the live series, kept while a rewind shows)."""
        return copy.deepcopy(self)

    def restore(self, other: History) -> None:
        """Take `other`'s series (the live ones again, once the rewind closes)."""
        self.__dict__.update(copy.deepcopy(other).__dict__)

    def __len__(self) -> int:
        return len(self.times)

    def add(self, snap: Snapshot) -> None:
        """Append one snapshot; throughput is the done-count delta per second between the
        last two real reads of it."""
        if self._origin is None:
            self._origin = snap.taken_at
        measured = self._rate is not None
        self._read_done(snap)
        self.times.append((snap.taken_at - self._origin).total_seconds())
        for role in ROLES:
            self.depth[role].append(snap.counts.get(role, 0))
        if self._rate is not None and not measured:
            # no earlier rate to show: rather than a ramp up from nothing on every start,
            # the polls before the first measured rate get that rate
            for i in range(len(self.throughput)):
                self.throughput[i] = self._rate
        self.throughput.append(self._rate or 0.0)
        self.oldest_ready_s.append(snap.oldest_ready_age_s or 0.0)
        self.waiting.append(len(snap.waiting))
        self._add_latency(snap)

    def _add_latency(self, snap: Snapshot) -> None:
        latency = snap.latency
        never_read = latency is not None and latency.read_at is None and latency.error
        wait = latency.queue.wait if latency is not None and not never_read else None
        self.p95_wait_s.append(wait.p95_s if wait is not None else None)
        if latency is None:
            self.p95_wait_note = "latency not in this snapshot"
        elif never_read:  # not read yet, or every read so far failed
            self.p95_wait_note = f"latency {latency.error}"
        elif wait is None:
            why = "; ".join(latency.missing) or latency.error or "the latency read failed"
            self.p95_wait_note = f"not measured: {why}"
        elif wait.p95_s is None:
            self.p95_wait_note = "no job started in the window"
        else:
            self.p95_wait_note = ""

    def _read_done(self, snap: Snapshot) -> None:
        done = snap.counts.get("done", 0)
        read_at = snap.count_read_at.get("done", snap.taken_at)
        last = self._last_read
        if last is not None and read_at == last[0]:
            return  # the same read, carried: no new measurement
        self.done_reads.append(((read_at - self._origin).total_seconds(), done))
        self._last_read = (read_at, done)
        if last is None:
            return
        seconds = (read_at - last[0]).total_seconds()
        if seconds > 0:
            # a purge of finished jobs makes the delta negative: not negative work
            self._rate = max(done - last[1], 0) / seconds
