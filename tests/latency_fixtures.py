"""Fixed latency values for the screen's layout and format tests (no database): the
numbers a live poll gives are tested against the rows themselves in test_latency_live.py."""

from __future__ import annotations

from dataclasses import replace

from ui_snapshots import demo_spec, fixed_history

from dashboard.models import LATENCY_BUCKETS, Durations, GroupLatency, Latency, Snapshot

WINDOW_S = 300.0


def durations(p50: float, p95: float, p99: float, count: int = 400) -> Durations:
    """`count` jobs whose percentiles are these; buckets as a cumulative count would be."""
    points = ((0.0, 0.0), (p50, 0.5), (p95, 0.95), (p99, 0.99))

    def share(le: float) -> float:  # linear between the percentiles, all at p99 and above
        if le >= p99:
            return 1.0
        (x0, y0), (x1, y1) = next(
            (a, b) for a, b in zip(points, points[1:], strict=False) if le < b[0]
        )
        return y0 + (y1 - y0) * (le - x0) / (x1 - x0)

    buckets = tuple(int(count * share(le)) for le in LATENCY_BUCKETS)
    return Durations(count, p50 * count, p50, p95, p99, buckets)


def fixed_latency(step: int = 0) -> Latency:
    """The queue and three groups; the p95 wait climbs a little with each step."""
    emails = GroupLatency(
        "emails", durations(0.8, 4.2 + 0.3 * step, 9.5), durations(0.25, 1.1, 2.4), 1820, 12
    )
    reports = GroupLatency(
        "reports", durations(12.0, 95.0, 184.0, 40), durations(35.0, 140.0, 290.0, 40), 38, 3
    )
    nobody = Durations(0, 0.0, None, None, None, (0,) * len(LATENCY_BUCKETS))
    quiet = GroupLatency("webhooks", nobody, nobody, 0, 0)  # no job in the window
    queue = GroupLatency(
        None, durations(0.9, 6.0 + 0.3 * step, 88.0), durations(0.3, 2.0, 130.0), 1858, 15
    )
    return Latency(WINDOW_S, queue, (reports, emails, quiet))


def unmeasured_latency() -> Latency:
    """A spec with no start time: neither wait nor run can be told."""
    none = GroupLatency(None, None, None, 0, 0)
    return Latency(
        WINDOW_S,
        none,
        missing=(
            "wait and run times need a start time: --started-at-column COLUMN, or started_at "
            "in the queue TOML",
        ),
    )


def latency_history(points: int = 12) -> list[Snapshot]:
    return [replace(s, latency=fixed_latency(i)) for i, s in enumerate(fixed_history(points))]


def grouped_spec():
    """The demo's spec with a group column, as a queue with named queues has."""
    spec = demo_spec()
    return replace(spec, columns=replace(spec.columns, group="queue"))
