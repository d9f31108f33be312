"""Bounded history of snapshots for the plots, kept outside the widgets."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from datetime import datetime

from dashboard.models import ROLES, Snapshot

DEFAULT_POINTS = 300


def _deque(maxlen: int) -> deque:
    return deque(maxlen=maxlen)


@dataclass
class History:
    """Per-poll series: x is seconds since the first snapshot (from taken_at, not the clock)."""

    maxlen: int = DEFAULT_POINTS
    times: deque = field(init=False)
    depth: dict[str, deque] = field(init=False)
    throughput: deque = field(init=False)
    oldest_ready_s: deque = field(init=False)
    waiting: deque = field(init=False)
    _origin: datetime | None = field(init=False, default=None)
    _last: tuple[datetime, int] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Empty again (replay rebuilds the history around the frame it moves to)."""
        self._origin = None
        self._last = None
        self.times = _deque(self.maxlen)
        self.depth = {role: _deque(self.maxlen) for role in ROLES}
        self.throughput = _deque(self.maxlen)
        self.oldest_ready_s = _deque(self.maxlen)
        self.waiting = _deque(self.maxlen)

    def __len__(self) -> int:
        return len(self.times)

    def add(self, snap: Snapshot) -> None:
        """Append one snapshot; throughput is the done-count delta per second since the last."""
        if self._origin is None:
            self._origin = snap.taken_at
        done = snap.counts.get("done", 0)
        rate = 0.0
        if self._last is not None:
            seconds = (snap.taken_at - self._last[0]).total_seconds()
            if seconds > 0:
                # a purge of finished jobs makes the delta negative: not negative work
                rate = max(done - self._last[1], 0) / seconds
        self._last = (snap.taken_at, done)
        self.times.append((snap.taken_at - self._origin).total_seconds())
        for role in ROLES:
            self.depth[role].append(snap.counts.get(role, 0))
        if len(self.throughput) == 1:
            # the first poll has no earlier count to compare with: rather than a rate of
            # 0 (a ramp up from nothing on every start), it gets the first measured one
            self.throughput[0] = rate
        self.throughput.append(rate)
        self.oldest_ready_s.append(snap.oldest_ready_age_s or 0.0)
        self.waiting.append(len(snap.waiting))
