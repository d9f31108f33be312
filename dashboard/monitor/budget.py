"""The monitor's cost budget: each section is read as often as its cost allows.

queuetop is left open on production, so the monitor may spend only a small share
of the server's time. Each section measures what it costs; a section whose cost
exceeds its share of the interval is read less often, and between reads the
snapshot carries its last data with its age. A section that fails (a timeout, a
table locked by someone else) keeps its last data, says why, and backs off.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from dashboard.models import SectionState

SHARE = 0.02  # of wall time, per section; only a section reading a whole table gets near it
BUDGET = 0.05  # of wall time, all sections together, over the last LOAD_WINDOW_S
LOAD_WINDOW_S = 60.0
HEADROOM = 1.5  # a costly read is planned at 1.5 x its last cost: the next one may cost more
MAX_EVERY_S = 300.0
# A read faster than this is never paced: on a busy client its wall time is mostly the
# client's own, and the counts of one poll had better be of one moment.
PACE_FLOOR_S = 0.02
# A section's first read is cold (its statement planned, the catalog read, the pages not
# cached) and can cost ten times the next: it paces the section at most this long, until
# a second read measures the cost that lasts (a costly one still waits for the budget).
FIRST_READ_PACE_S = 2.0


class DbTimer:
    """The database time of a read: its wall time less this thread's own CPU time in it
    (composing statements, decoding rows), which costs the server nothing. What is left
    is the server's work and the wait for it (a busy client's scheduling delays too)."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.thread_time()

    def wall_s(self) -> float:
        return time.perf_counter() - self.wall

    def db_s(self) -> float:
        return max(self.wall_s() - (time.thread_time() - self.cpu), 0.0)


# The finished states (done, failed, dead) are a whole read of the table while it is under
# exact_count_limit: the one cost that grows with the table on every poll, for numbers
# that matter less than the active ones (throughput is measured between real reads of
# them, so carrying them costs the plot nothing). Their share is a tenth of another's.
FINISHED_SHARE = 0.002
FINISHED_FLOOR_S = 0.001


def period(
    cost_s: float, interval: float, share: float = SHARE, floor_s: float = PACE_FLOOR_S
) -> float:
    """How often a section costing `cost_s` may be read."""
    if cost_s < floor_s:
        return interval
    return min(max(interval, cost_s / share), MAX_EVERY_S)


@dataclass
class Section:
    """One section's clock, cost and last data."""

    name: str
    data: Any = None
    cost_s: float = 0.0
    every_s: float = 0.0
    read_at: float | None = None  # monotonic, of the last successful read
    read_wall: datetime | None = None  # the same moment on the wall clock (for rates)
    tried_at: float | None = None
    error: str | None = None
    failures: int = 0
    share: float = SHARE  # of wall time this section may spend
    floor_s: float = PACE_FLOOR_S  # a read cheaper than this is never paced

    def due(self, now: float, interval: float) -> bool:
        if self.tried_at is None:
            return True
        return now - self.tried_at >= max(self.every_s, interval) - 0.5 * min(interval, 1.0)

    def succeeded(self, data: Any, cost_s: float, now: float, interval: float) -> None:
        first = self.read_at is None
        self.data, self.cost_s, self.read_at, self.tried_at = data, cost_s, now, now
        self.read_wall = datetime.now(timezone.utc)
        self.error, self.failures = None, 0
        self.every_s = period(cost_s, interval, self.share, self.floor_s)
        if first:
            self.every_s = min(self.every_s, max(interval, FIRST_READ_PACE_S))

    def failed(
        self, error: str, cost_s: float, now: float, interval: float, *, back_off: bool = True
    ) -> None:
        """Keep the last data; try again later, later still after each timeout (a read
        that timed out spent server time). A table locked by someone else costs the
        server nothing while we wait: try again soon, to be fresh as soon as it is free."""
        self.error, self.tried_at = error, now
        self.failures += 1
        self.cost_s = max(self.cost_s, cost_s)
        factor = 2 ** min(self.failures, 5) if back_off else 1
        self.every_s = min(period(cost_s, interval, self.share, self.floor_s) * factor, MAX_EVERY_S)

    def state(self, now: float) -> SectionState:
        age = None if self.read_at is None else max(now - self.read_at, 0.0)
        return SectionState(
            self.name, age, round(self.cost_s * 1000, 2), round(self.every_s, 2), self.error
        )


@dataclass
class LoadMeter:
    """The monitor's database time per second of wall time, over the last minute."""

    window_s: float = LOAD_WINDOW_S
    started: float = field(default_factory=time.monotonic)
    spent: deque = field(default_factory=deque)  # (monotonic end, seconds)

    def add(self, seconds: float, now: float) -> None:
        self.spent.append((now, seconds))
        while self.spent and self.spent[0][0] < now - self.window_s:
            self.spent.popleft()

    def spent_s(self, now: float) -> float:
        return sum(s for end, s in self.spent if end >= now - self.window_s)

    def room_for(self, cost_s: float, now: float) -> bool:
        """Whether a costly read fits the budget of the last window with what the polls
        spent in it (so the load the header shows stays under BUDGET, not just its
        average), planning for the read to cost HEADROOM times what it did last. A read
        that alone exceeds the budget goes once the window holds little else: its own pace
        (cost / SHARE) spaces it out."""
        spent = self.spent_s(now)
        window = self.window_s
        return spent + HEADROOM * cost_s <= BUDGET * window or spent <= (BUDGET - SHARE) * window

    def load(self, now: float) -> float | None:
        elapsed = min(now - self.started, self.window_s)
        if elapsed < 1.0:
            return None
        return sum(s for _, s in self.spent) / elapsed
