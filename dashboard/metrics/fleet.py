"""The state behind `queuetop export --targets FILE`: one Exporter per named target, polled
when Prometheus asks for it (`/probe?target=NAME`), and the exporter's own health.

A target is polled on request, on its own monitor connection (read-only, with the
monitor's timeouts) kept open between scrapes, through its own Monitor (section pacing,
cost budget). A poll younger than `ttl_s` is served again instead of polling anew: with
`ttl_s` half the scrape interval, two Prometheus replicas scraping the same target at the
same interval cost it one poll per interval whatever their phase. Two scrapes of one
target at once never poll twice: the second waits for the first's poll and serves it. A
scrape that says how long its client waits (Prometheus's
X-Prometheus-Scrape-Timeout-Seconds) waits for the poll no longer than that: the poll runs
on, on its own thread, and a later scrape serves it; this one serves the last values. A
target nobody probed for `idle_close_s` has its connection closed (reopened on the next
probe). Only names of the targets file reach this module: a name that is not one is
answered by the caller, never connected to.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    Metric,
    SummaryMetricFamily,
)

from dashboard.metrics.exporter import Exporter
from dashboard.metrics.families import ERROR_REASONS, PREFIX

REFUSALS = ("missing_target", "unknown_target")  # why a /probe was answered 400


class TargetProbe:
    """One target: its Exporter (connection, Monitor, counters) and the probe's cache."""

    def __init__(
        self,
        name: str,
        exporter: Exporter,
        ttl_s: float,
        *,
        wait_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.exporter = exporter
        self.ttl_s = ttl_s
        self.wait_s = wait_s  # how long a scrape waits for another scrape's poll
        self.clock = clock
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(exporter)  # /probe?target=NAME answers this
        self._poll_lock = threading.Lock()  # held by the poll's thread while it polls
        self._state_lock = threading.Lock()  # guards polled_at and _running
        self._running: threading.Event | None = None  # the poll under way: set when it ends
        self._count_lock = threading.Lock()
        self.polled_at: float | None = None  # when the last poll began (clock)
        self.probed_at: float | None = None
        self.probes = 0
        self.cache_hits = 0

    def refresh(self, deadline_s: float | None = None) -> bool:
        """Poll the target unless its last poll began less than ttl_s ago; True if this
        scrape started a poll that ended in time.

        The poll runs on a thread of its own. The scrape that starts it waits for it to end;
        a scrape that finds another's poll running waits for it at most wait_s and serves
        its result. With `deadline_s` (what the client gives the scrape) neither waits
        longer than that: the values served are then the last ones as they stand, and the
        poll's result is served by a later scrape."""
        with self._count_lock:
            self.probes += 1
            self.probed_at = self.clock()
        with self._state_lock:
            running = self._running
            now = self.clock()
            started = running is None and (
                self.polled_at is None or now - self.polled_at >= self.ttl_s
            )
            if started:
                self.polled_at = now
                running = self._running = threading.Event()
                threading.Thread(
                    target=self._poll, args=(running,), name=f"probe-{self.name}", daemon=True
                ).start()
        if running is None:  # polled less than ttl_s ago
            self._hit()
            return False
        limit = None if started else self.wait_s
        if deadline_s is not None:
            limit = deadline_s if limit is None else min(limit, deadline_s)
        ended = running.wait(limit)
        if not started or not ended:
            self._hit()
        return started and ended

    def _poll(self, done: threading.Event) -> None:
        with self._poll_lock:  # close_if_idle never closes the connection under a poll
            try:
                self.exporter.poll_once()
            finally:
                with self._state_lock:
                    self._running = None
                done.set()

    def _hit(self) -> None:
        with self._count_lock:
            self.cache_hits += 1

    def close_if_idle(self, idle_close_s: float) -> bool:
        """Close the connection of a target nobody probed for idle_close_s (never during
        its poll); True if one was closed."""
        if not self._poll_lock.acquire(blocking=False):
            return False
        try:
            idle = self.probed_at is not None and self.clock() - self.probed_at >= idle_close_s
            if idle and self.exporter.backend_pid() is not None:
                self.exporter.close()
                return True
            return False
        finally:
            self._poll_lock.release()

    @property
    def connected(self) -> bool:
        return self.exporter.backend_pid() is not None


class Fleet:
    """Every target of the file, by name; its collector is the exporter's own /metrics."""

    def __init__(self, probes: dict[str, TargetProbe], *, idle_close_s: float) -> None:
        self.probes = probes
        self.idle_close_s = idle_close_s
        self._lock = threading.Lock()
        self.refused = dict.fromkeys(REFUSALS, 0)

    def find(self, names: list[str]) -> TargetProbe | None:
        """The target a /probe names (its `target` parameters' values), or None, counted:
        exactly one value, equal to a name of the file. Nothing else is looked at."""
        if len(names) != 1 or not names[0]:
            self._refuse("missing_target")
            return None
        probe = self.probes.get(names[0])
        if probe is None:
            self._refuse("unknown_target")
        return probe

    def _refuse(self, reason: str) -> None:
        with self._lock:
            self.refused[reason] += 1

    def close_idle(self) -> int:
        """Close the connections of targets nobody probes any more; how many were closed."""
        return sum(p.close_if_idle(self.idle_close_s) for p in self.probes.values())

    def close(self) -> None:
        for probe in self.probes.values():
            probe.exporter.close()

    def collect(self) -> Iterator[Metric]:
        """prometheus_client's Collector protocol: the exporter's own health per target."""
        yield from fleet_families(self)


def _gauge(name: str, doc: str, labels: tuple[str, ...] = ("target",)) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"{PREFIX}_{name}", doc, labels=list(labels))


def fleet_families(fleet: Fleet) -> Iterator[Metric]:
    """`/metrics` of a multi-target exporter: per target, whether its last poll succeeded,
    what polls cost, how they failed, how many scrapes the cache answered; and the probes
    refused. Target names come from the targets file (plain words)."""
    targets = _gauge("exporter_targets", "Targets in the targets file", ())
    targets.add_metric([], len(fleet.probes))
    yield targets
    up = _gauge(
        "target_up",
        "1 if the target's last poll succeeded, 0 if it failed (a target never probed "
        "has no sample)",
    )
    connected = _gauge(
        "target_connected", "1 while the exporter holds a monitor connection to the target"
    )
    age = _gauge("target_snapshot_age_seconds", "Age of the last snapshot read from the target")
    last = _gauge("target_last_poll_duration_seconds", "Wall time of the target's last poll")
    duration = SummaryMetricFamily(
        f"{PREFIX}_target_poll_duration_seconds",
        "Wall time of each poll of a target, failed ones too (scrapes the cache answered "
        "are not polls)",
        labels=["target"],
    )
    errors = CounterMetricFamily(
        f"{PREFIX}_target_poll_errors",
        "Polls of a target that failed, by reason",
        labels=["target", "reason"],
    )
    probes = CounterMetricFamily(
        f"{PREFIX}_target_probes", "Scrapes of /probe?target=NAME answered", labels=["target"]
    )
    hits = CounterMetricFamily(
        f"{PREFIX}_target_probe_cache_hits",
        "Scrapes answered with the last poll instead of a new one (the last is younger "
        "than the cache's lifetime, or the new one outlasted the scrape's timeout)",
        labels=["target"],
    )
    now = time.time()
    for name, probe in fleet.probes.items():
        stats, snap = probe.exporter.stats()
        if stats.polls:
            up.add_metric([name], 1.0 if stats.up else 0.0)
        connected.add_metric([name], 1.0 if probe.connected else 0.0)
        if snap is not None:
            age.add_metric([name], max(now - snap.taken_at.timestamp(), 0.0))
        if stats.last_poll_s is not None:
            last.add_metric([name], stats.last_poll_s)
        duration.add_metric([name], count_value=stats.polls, sum_value=stats.poll_seconds_sum)
        for reason in ERROR_REASONS:
            errors.add_metric([name, reason], stats.errors.get(reason, 0))
        probes.add_metric([name], probe.probes)
        hits.add_metric([name], probe.cache_hits)
    yield from (up, connected, age, last, duration, errors, probes, hits)
    refused = CounterMetricFamily(
        f"{PREFIX}_probe_refused",
        "Requests to /probe answered 400: no target named, or a name not in the targets "
        "file (nothing was connected to)",
        labels=["reason"],
    )
    with fleet._lock:
        counts = dict(fleet.refused)
    for reason in REFUSALS:
        refused.add_metric([reason], counts[reason])
    yield refused
