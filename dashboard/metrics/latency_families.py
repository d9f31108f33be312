"""Latency -> Prometheus metric families: how long jobs waited and ran over the monitor's
window, for the queue and per group.

The values are over a sliding window (the jobs that started, or finished, in the last
`window_s` seconds), so none of them is a counter: a count over a window goes down as
jobs leave it, and Prometheus's rate() would read every drop as a counter reset. So:
- the percentiles are a `summary` of quantiles only, as the client libraries' own
  summaries are (their quantiles cover a sliding window too); the _sum and _count a
  summary carries are counters by definition, and are left out rather than faked;
- the window's count and sum are in a gauge histogram (OpenMetrics `gaugehistogram`:
  `_bucket{le}`, `_gcount`, `_gsum`; in the Prometheus text format its buckets are typed
  histogram and `_gcount`/`_gsum` are gauges), whose buckets histogram_quantile() reads
  without rate(), and sum by (le) adds across queues;
- throughput and failure rate are gauges.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from prometheus_client.core import GaugeHistogramMetricFamily, GaugeMetricFamily, Metric

from dashboard.models import LATENCY_BUCKETS, Durations, GroupLatency, Latency, Snapshot

PREFIX = "queuetop"
QUANTILES = (("0.5", "p50_s"), ("0.95", "p95_s"), ("0.99", "p99_s"))
# wait: ready (or due) until started; run: started until finished
KINDS = (
    ("wait", "from ready (or due, for a scheduled job) until started, of the jobs that started"),
    ("run", "from started until finished, of the jobs that finished"),
)


def window_text(seconds: float) -> str:
    return f"the last {seconds:g}s"


def _summary(name: str, doc: str) -> Metric:
    return Metric(f"{PREFIX}_{name}", doc, "summary")


def _add_quantiles(summary: Metric, labels: dict[str, str], durations: Durations) -> None:
    """p50, p95, p99; NaN where no job is in the window (the client libraries' convention
    for a summary without observations)."""
    for quantile, attr in QUANTILES:
        value = getattr(durations, attr)
        summary.add_sample(
            summary.name,
            {**labels, "quantile": quantile},
            math.nan if value is None else value,
        )


def _buckets(durations: Durations) -> list[tuple[str, float]]:
    pairs = [
        (f"{le:g}", float(n)) for le, n in zip(LATENCY_BUCKETS, durations.buckets, strict=True)
    ]
    return [*pairs, ("+Inf", float(durations.count))]


def latency_families(snap: Snapshot, groups: list[GroupLatency] | None = None) -> Iterator[Metric]:
    """The queue's latency families, then its groups' (`groups`: the ones to export, the
    busiest first; None: all of them). Nothing where the snapshot has no latency; a kind
    the spec cannot measure (Latency.missing says why) has no series."""
    latency = snap.latency
    if latency is None:
        return
    table = snap.queue
    over = window_text(latency.window_s)
    window = GaugeMetricFamily(
        f"{PREFIX}_latency_window_seconds",
        "How far back the latency families look (jobs started or finished since)",
        labels=["table"],
    )
    window.add_metric([table], latency.window_s)
    yield window
    for kind, what in KINDS:
        durations = getattr(latency.queue, kind)
        if durations is None:
            continue
        summary = _summary(
            f"job_{kind}_seconds",
            f"{kind.title()} time {what} in {over}: quantiles over that sliding window "
            f"(no _sum or _count, which would not be counters: see "
            f"{PREFIX}_job_{kind}_window_seconds)",
        )
        _add_quantiles(summary, {"table": table}, durations)
        yield summary
        if len(durations.buckets) == len(LATENCY_BUCKETS):
            histogram = GaugeHistogramMetricFamily(
                f"{PREFIX}_job_{kind}_window_seconds",
                f"{kind.title()} time {what} in {over}, as a gauge histogram: its buckets, "
                "count (_gcount) and sum (_gsum) go down as jobs leave the window, so read "
                "them as they are (histogram_quantile without rate)",
                labels=["table"],
            )
            histogram.add_metric([table], _buckets(durations), gsum_value=durations.sum_s)
            yield histogram
    if latency.finished_measured:  # else no finish time: no series, never a 0 for unknown
        finished, failed = rate_families(over, ("table",))
        add_rates(finished, failed, [table], latency.queue, latency.window_s)
        yield finished
        yield failed
    chosen = list(latency.groups) if groups is None else groups
    if chosen:
        yield from group_latency_families(table, latency, chosen)


def busiest_groups(groups: tuple[GroupLatency, ...], limit: int) -> list[GroupLatency]:
    """The `limit` groups that finished the most jobs, then started the most: the others
    have no per-group latency series (percentiles cannot be added up into a remainder;
    the queue's own families count every group)."""
    started = lambda g: g.wait.count if g.wait is not None else 0  # noqa: E731
    return sorted(groups, key=lambda g: (-g.finished, -started(g), g.group or ""))[:limit]


def group_latency_families(
    table: str, latency: Latency, groups: list[GroupLatency]
) -> Iterator[Metric]:
    """Per group: the wait and run quantiles, throughput and failure ratio (no gauge
    histogram per group: 16 series a group and kind is more than an alert needs)."""
    over = window_text(latency.window_s)
    for kind, what in KINDS:
        summary = _summary(
            f"group_job_{kind}_seconds",
            f"{kind.title()} time {what} in {over}, per group: quantiles over that sliding "
            "window (no _sum or _count, which would not be counters)",
        )
        for g in groups:
            durations = getattr(g, kind)
            if durations is not None:
                _add_quantiles(summary, {"table": table, "queue": g.group or ""}, durations)
        if summary.samples:
            yield summary
    if not latency.finished_measured:
        return
    finished, failed = rate_families(over, ("table", "queue"), "group_")
    for g in groups:
        add_rates(finished, failed, [table, g.group or ""], g, latency.window_s)
    yield finished
    yield failed


def rate_families(
    over: str, labels: tuple[str, ...], name: str = ""
) -> tuple[GaugeMetricFamily, GaugeMetricFamily]:
    finished = GaugeMetricFamily(
        f"{PREFIX}_{name}jobs_finished_per_second",
        f"Jobs that finished (done, failed or dead) per second over {over}",
        labels=list(labels),
    )
    failed = GaugeMetricFamily(
        f"{PREFIX}_{name}jobs_failed_ratio",
        f"Of the jobs that finished in {over}, the share that failed or died "
        "(no series while none finished)",
        labels=list(labels),
    )
    return finished, failed


def add_rates(
    finished: GaugeMetricFamily,
    failed: GaugeMetricFamily,
    values: list[str],
    group: GroupLatency,
    window_s: float,
) -> None:
    finished.add_metric(values, group.finished / window_s if window_s > 0 else 0.0)
    if group.finished:
        failed.add_metric(values, group.failed / group.finished)
