"""Counters, rates and latency percentiles, aggregated in the parent.

Workers send deltas (events.Batch); the parent folds them into a `StatsBook`
(bookkeeping.py), and snapshot.freeze() makes the `LoadSnapshot` the CLI or
the TUI shows. The double-claim detector is in ledger.py.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from dashboard.loadgen.ledger import ClaimLedger

COUNTERS = (
    "claimed",  # jobs claimed
    "claims",  # claim statements that returned at least one job
    "completed",
    "failed",  # failed attempts (retried or not)
    "dead",  # failed attempts that reached the terminal state
    "empty_claims",  # claim statements that returned nothing
    "lock_waits",  # for-update claims slower than LOCK_WAIT_MS: they queued on a row lock
    "lock_errors",  # every lock error: the three kinds below together
    "nowait_errors",  # NOWAIT claims that found their row locked (55P03 under nowait)
    "lock_timeouts",  # statements that waited longer than lock_timeout (55P03 otherwise)
    "deadlocks",  # transactions the server chose as a deadlock's victim (40P01), retried
    "fenced",  # completions or failures refused because the lease moved on
    "renewals",  # lease heartbeats
    "released",  # jobs handed back to ready by a stopping worker
    "stalls",
)
# a lock error's kind -> its counter (the lab and the summary name them by kind)
LOCK_ERROR_KINDS = {
    "nowait": "nowait_errors",
    "lock_timeout": "lock_timeouts",
    "deadlock": "deadlocks",
}
# counters shown as per-second figures over the last RATE_WINDOW_S
RATED = ("claimed", "completed", "lock_waits", "lock_errors")
LOCK_WAIT_MS = 20.0
RATE_WINDOW_S = 2.0
LATENCY_WINDOW_S = 10.0  # the live percentiles cover the claims of the last 10 s
CRASHES_KEPT = 100  # crash reports a snapshot carries
_LATENCY_SLOT_S = 1.0
_BUCKET_BASE = 1.04  # histogram buckets 4 % wide: percentiles within 2 %
_BUCKET_FLOOR_MS = 0.01


class Histogram:
    """Log-bucketed latency histogram: bounded memory for runs of any length."""

    def __init__(self) -> None:
        self.buckets: dict[int, int] = {}
        self.count = 0

    def add(self, ms: float) -> None:
        i = int(math.log(max(ms, _BUCKET_FLOOR_MS) / _BUCKET_FLOOR_MS, _BUCKET_BASE))
        self.buckets[i] = self.buckets.get(i, 0) + 1
        self.count += 1

    def percentile(self, p: float) -> float | None:
        if not self.count:
            return None
        rank, seen = math.ceil(p / 100 * self.count), 0
        for i in sorted(self.buckets):
            seen += self.buckets[i]
            if seen >= rank:
                return _BUCKET_FLOOR_MS * _BUCKET_BASE ** (i + 0.5)
        return None  # pragma: no cover

    def merge(self, other: Histogram) -> None:
        for i, n in other.buckets.items():
            self.buckets[i] = self.buckets.get(i, 0) + n
        self.count += other.count


class RecentHistogram:
    """The latencies of the last `window_s` seconds: one histogram per second, merged on demand.

    The window is whole slots, so it covers between window_s - 1 and window_s seconds."""

    def __init__(self, window_s: float = LATENCY_WINDOW_S) -> None:
        self.window_s = window_s
        self.slots: deque[tuple[int, Histogram]] = deque()

    def _drop_old(self, slot: int) -> None:
        oldest = slot - int(self.window_s / _LATENCY_SLOT_S) + 1
        while self.slots and self.slots[0][0] < oldest:
            self.slots.popleft()

    def add(self, latencies_ms: list[float], now: float) -> None:
        slot = int(now // _LATENCY_SLOT_S)
        if not self.slots or self.slots[-1][0] != slot:
            self._drop_old(slot)
            self.slots.append((slot, Histogram()))
        hist = self.slots[-1][1]
        for ms in latencies_ms:
            hist.add(ms)

    def at(self, now: float) -> Histogram:
        """The merged histogram of the window ending now."""
        self._drop_old(int(now // _LATENCY_SLOT_S))
        merged = Histogram()
        for _, hist in self.slots:
            merged.merge(hist)
        return merged


@dataclass(frozen=True)
class Latency:
    p50: float | None
    p95: float | None
    p99: float | None

    @classmethod
    def of(cls, hist: Histogram) -> Latency:
        return cls(*(hist.percentile(p) for p in (50, 95, 99)))


@dataclass(frozen=True)
class WorkerStats:
    k: int
    name: str  # the process's name, queuetop-worker-K: its first session's application_name
    pid: int | None
    alive: bool
    stalled: bool
    counters: dict[str, int]
    connected: bool = True  # False while it has lost its connection and is reconnecting
    # its session's application_name now, also what it writes into the worker column: the
    # name, or name.N after N-1 lost sessions (whose leases must read as unowned)
    session: str = ""
    # its database session's backend pid (what pg_stat_activity and the dashboard's lock,
    # waiting and idle tables show); None while it has none. `pid` is its OS process.
    backend_pid: int | None = None

    def __post_init__(self) -> None:
        if not self.session:
            object.__setattr__(self, "session", self.name)


@dataclass(frozen=True)
class CrashReport:
    """A worker that exited hard right after a claim: who, holding which jobs, and why.

    `by_knob`: the crash knob (the dashboard's `!`) asked for it, not the random crash rate.
    `committed`: its claim had committed, so the jobs stay running: stale leases once their
    lease runs out (with hold-tx the claim rolled back with the session: nothing is left).
    """

    n: int  # 1, 2, 3... in the order the generator heard of them
    k: int
    session: str
    jobs: tuple[Any, ...]
    by_knob: bool
    committed: bool


@dataclass(frozen=True)
class LoadSnapshot:
    """What the load generator has done so far; frozen, safe to hand to another thread."""

    running: bool
    strategy: str
    hold_tx: bool
    batch: int
    work_ms: float
    target_workers: int
    live_workers: int
    producer_paused: bool
    rate: float
    elapsed_s: float
    totals: dict[str, int]
    crashed: int
    double_claims: int
    enqueued: int
    rescued: int  # expired leases the rescuer handed back (totals["dead"] has the terminal ones)
    claims_per_s: float  # over the last RATE_WINDOW_S
    completions_per_s: float
    latency: Latency  # claim statement latency over the whole run, in ms
    workers: tuple[WorkerStats, ...] = ()
    errors: tuple[str, ...] = ()  # append-only: a UI may report the new ones by count
    # claim latency of the last LATENCY_WINDOW_S (None percentiles: no claim in the window)
    recent_latency: Latency = Latency(None, None, None)
    # who has lost its database connection and is retrying ("producer", worker names)
    reconnecting: tuple[str, ...] = ()
    connection_error: str | None = None  # the latest reason, while anyone is reconnecting
    rescue: bool = False  # the rescuer runs (opt-in: queuetop load --rescue)
    crashes: tuple[CrashReport, ...] = ()  # the latest ones (see CRASHES_KEPT), oldest first
    lease_s: float = 0.0  # the lease a claim takes: a crashed worker's job is stale after it
    # per second over the last RATE_WINDOW_S, beside the run's totals in `totals`
    lock_waits_per_s: float = 0.0
    lock_errors_per_s: float = 0.0
    crash_rate: float = 0.0  # random crashes per claim (the demo's chaos knob; 0: off)
    notes: tuple[str, ...] = ()  # said from the start (e.g. leases an earlier run left)


@dataclass
class StatsBook:
    """The parent's running totals; one thread writes, snapshot() copies."""

    started: float = field(default_factory=time.monotonic)
    totals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTERS, 0))
    per_worker: dict[int, dict[str, int]] = field(default_factory=dict)
    latency: Histogram = field(default_factory=Histogram)
    recent: RecentHistogram = field(default_factory=RecentHistogram)
    ledger: ClaimLedger = field(default_factory=ClaimLedger)
    crashed: int = 0
    enqueued: int = 0
    history: deque = field(default_factory=lambda: deque(maxlen=200))

    def add(
        self, k: int, counters: dict[str, int], latencies_ms: list[float], now: float | None = None
    ) -> None:
        now = time.monotonic() if now is None else now
        mine = self.per_worker.setdefault(k, dict.fromkeys(COUNTERS, 0))
        for name, n in counters.items():
            self.totals[name] += n
            mine[name] += n
        for ms in latencies_ms:
            self.latency.add(ms)
        if latencies_ms:
            self.recent.add(latencies_ms, now)

    def tick(self, now: float | None = None) -> None:
        """Remember the totals now, for the recent rates."""
        now = time.monotonic() if now is None else now
        self.history.append((now, tuple(self.totals[name] for name in RATED)))
        while len(self.history) > 2 and now - self.history[1][0] >= RATE_WINDOW_S:
            self.history.popleft()

    def rates(self) -> dict[str, float]:
        """Each RATED counter per second over the last RATE_WINDOW_S (0 before two ticks)."""
        if len(self.history) < 2:
            return dict.fromkeys(RATED, 0.0)
        (t0, first), (t1, last) = self.history[0], self.history[-1]
        span = t1 - t0
        return {
            name: (b - a) / span if span > 0 else 0.0
            for name, a, b in zip(RATED, first, last, strict=True)
        }

    def elapsed(self) -> float:
        return time.monotonic() - self.started


def summary(snap: LoadSnapshot, strategy: str, workers: int) -> dict[str, Any]:
    """The `queuetop load --json` document."""
    elapsed = max(snap.elapsed_s, 1e-9)

    def ms(value: float | None) -> float | None:
        return None if value is None else round(value, 3)

    return {
        "strategy": strategy,
        "workers": workers,
        "duration_s": round(snap.elapsed_s, 3),
        "claimed": snap.totals["claimed"],
        "completed": snap.totals["completed"],
        "failed": snap.totals["failed"],
        "dead": snap.totals["dead"],
        "crashed": snap.crashed,
        "rescue": snap.rescue,
        "rescued": snap.rescued,
        "claims_per_s": round(snap.totals["claimed"] / elapsed, 1),
        "completions_per_s": round(snap.totals["completed"] / elapsed, 1),
        "claim_latency_ms": {
            "p50": ms(snap.latency.p50),
            "p95": ms(snap.latency.p95),
            "p99": ms(snap.latency.p99),
        },
        # totals over the run (the live line and the strip show the per-second figures)
        "lock_waits": snap.totals["lock_waits"],
        "lock_errors": snap.totals["lock_errors"],
        "lock_errors_by_kind": {
            kind: snap.totals.get(counter, 0) for kind, counter in LOCK_ERROR_KINDS.items()
        },
        "lock_waits_per_s": round(snap.totals["lock_waits"] / elapsed, 2),
        "lock_errors_per_s": round(snap.totals["lock_errors"] / elapsed, 2),
        "empty_claims": snap.totals["empty_claims"],
        "double_claims": snap.double_claims,
    }
