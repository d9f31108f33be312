"""Snapshot -> Prometheus metric families: the one place that names queuetop's metrics.

`queuetop export` serves these through a custom prometheus_client collector over the
last snapshot (dashboard/exporter.py). Names follow the Prometheus conventions: base
units in the name (`_seconds`), `_total` on counters, one meaning per name.

Labels: `table` is the queue table (not `queue`, which a per-group label may want
later, e.g. the demo's `queue` column); `role` is queuetop's canonical state. A new
per-group or per-section family belongs here, next to the one it refines.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    Metric,
    SummaryMetricFamily,
)

from dashboard.metrics.latency_families import busiest_groups, latency_families
from dashboard.metrics.measures import idle_age, oldest_ready_known, stale_leases_known
from dashboard.models import GroupStats, QueueSpec, Snapshot, state_label
from dashboard.text.untrusted import escape_controls

PREFIX = "queuetop"
# Why a poll failed, as the dashboard's header says it (a bounded set: one series each).
ERROR_REASONS: tuple[str, ...] = ("timeout", "blocked", "disconnected", "error")
# Series per group family: at most this many groups, the rest summed into OTHER_GROUP.
DEFAULT_MAX_GROUPS = 50
OTHER_GROUP = "(other)"


@dataclass(frozen=True)
class PollStats:
    """The exporter's own numbers at one scrape."""

    up: bool
    now_unix: float
    polls: int = 0
    poll_seconds_sum: float = 0.0
    last_poll_s: float | None = None
    errors: dict[str, int] = field(default_factory=dict)


def _gauge(name: str, doc: str, labels: tuple[str, ...] = ()) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"{PREFIX}_{name}", doc, labels=list(labels))


class Verbatim(str):
    """A label value of queuetop's own (the capped remainder's), not from the database."""


def label_value(text: str) -> str:
    """A label value from the database (a group's name, the table's): its backslashes
    doubled, then its control characters escaped (a newline as `\\n`), so that a scrape
    shown in a terminal cannot drive it and two names never share one label value (a
    newline and a literal backslash-n stay apart); one starting with `(` gets a backslash
    before it, so that no name can be the remainder's OTHER_GROUP (`(other)`)."""
    if isinstance(text, Verbatim):
        return text
    shown = escape_controls(text.replace("\\", "\\\\"))
    return "\\" + shown if shown.startswith("(") else shown


def safe_labels(metric: Metric) -> Metric:
    """Every label value through label_value."""
    metric.samples = [
        s._replace(labels={k: label_value(v) for k, v in s.labels.items()}) for s in metric.samples
    ]
    return metric


def capped_groups(groups: Sequence[GroupStats], limit: int) -> list[GroupStats]:
    """The `limit` busiest groups (active jobs, then stale leases), the rest summed into one
    OTHER_GROUP, so that 20,000 queue names cannot make 80,000 series."""
    if len(groups) <= limit:
        return list(groups)
    ranked = sorted(
        groups, key=lambda g: (-(g.ready + g.scheduled + g.running), -g.stale_leases, g.name)
    )
    kept, rest = ranked[: max(limit - 1, 0)], ranked[max(limit - 1, 0) :]
    ages = [g.oldest_ready_age_s for g in rest if g.oldest_ready_age_s is not None]
    other = GroupStats(
        name=Verbatim(OTHER_GROUP),  # no group's name can be this label (label_value)
        ready=sum(g.ready for g in rest),
        scheduled=sum(g.scheduled for g in rest),
        running=sum(g.running for g in rest),
        locked=sum(g.locked for g in rest),
        oldest_ready_age_s=max(ages) if ages else None,
        stale_leases=sum(g.stale_leases for g in rest),
    )
    return [*kept, other]


def snapshot_families(
    snap: Snapshot, spec: QueueSpec, max_groups: int = DEFAULT_MAX_GROUPS
) -> Iterator[Metric]:
    """The queue and the sessions around it, as one snapshot saw them (labels escaped)."""
    for metric in _snapshot_families(snap, spec, max_groups):
        yield safe_labels(metric)


def _snapshot_families(snap: Snapshot, spec: QueueSpec, max_groups: int) -> Iterator[Metric]:
    table = snap.queue
    jobs = _gauge(
        "jobs",
        'Jobs in the queue table per role; estimated="true" where the '
        "count is a planner estimate (finished roles of a large table)",
        ("table", "role", "estimated"),
    )
    for role in snap.roles:
        if spec.values(role) or role in snap.counts:
            estimated = "true" if role in snap.estimated else "false"
            jobs.add_metric([table, role, estimated], snap.counts.get(role, 0))
    yield jobs

    unmapped = _gauge(
        "unmapped_jobs",
        "Jobs in a state value no role claims: in no jobs count and no stale lease "
        "(map the value with --ROLE-values, or [queue.states] in the queue TOML)",
        ("table", "value"),
    )
    for value, n in snap.unmapped.items():
        unmapped.add_metric([table, state_label(value)], n)
    yield unmapped
    unknowns = _gauge(
        "unknowns",
        "Things this snapshot could not read or map (rows no role claims, a guessed "
        "mapping, a section not read): `queuetop check` answers UNKNOWN while above 0",
        ("table",),
    )
    unknowns.add_metric([table], len(snap.unknowns))
    yield unknowns

    locked = _gauge(
        "row_locked_jobs",
        "Jobs whose row a transaction holds locked right now (claims in flight), per role",
        ("table", "role"),
    )
    for role, n in snap.locked.items():
        locked.add_metric([table, role], n)
    yield locked

    if oldest_ready_known(spec):
        oldest = _gauge(
            "oldest_ready_age_seconds",
            "Age of the oldest ready job (0 when no job is ready)",
            ("table",),
        )
        oldest.add_metric([table], snap.oldest_ready_age_s or 0.0)
        yield oldest

    if stale_leases_known(spec):
        stale = _gauge(
            "stale_leases",
            "Running jobs past their lease, heartbeat or stale_after: work nobody will finish",
            ("table",),
        )
        stale.add_metric(
            [table], snap.stale_count if snap.stale_count is not None else len(snap.stale_leases)
        )
        yield stale
        overdue = _gauge(
            "stale_lease_max_overdue_seconds",
            "How long the most overdue stale lease has been past its expiry (0 when none)",
            ("table",),
        )
        overdue.add_metric([table], max((s.overdue_s for s in snap.stale_leases), default=0.0))
        yield overdue

    if snap.groups:
        yield from group_families(snap, max_groups)
    if snap.latency is not None:  # wait and run times, throughput, failures: per window
        yield from latency_families(snap, busiest_groups(snap.latency.groups, max_groups))

    sections = _gauge(
        "section_age_seconds",
        "How old each section of the snapshot is: a "
        "section costing more than its share of the budget is read less often",
        ("table", "section"),
    )
    for section in snap.sections:
        if section.age_s is not None:
            sections.add_metric([table, section.name], section.age_s)
    yield sections
    if snap.monitor_load is not None:
        load = _gauge(
            "monitor_load_ratio",
            "The monitor's own database time per second of wall time, over the last minute",
            ("table",),
        )
        load.add_metric([table], snap.monitor_load)
        yield load

    waiting = _gauge(
        "waiting_sessions",
        "Sessions on the server waiting on a lock "
        "(every database: the monitor reads pg_stat_activity)",
    )
    waiting.add_metric([], len(snap.waiting))
    yield waiting
    longest = _gauge("waiting_max_seconds", "Longest current lock wait (0 when none)")
    longest.add_metric([], max((w.wait_s for w in snap.waiting), default=0.0))
    yield longest

    if snap.deadlocks_total is not None:
        yield from deadlock_families(snap)

    idle = _gauge(
        "idle_in_transaction_sessions",
        "Sessions on the server idle in a transaction (they hold locks and the xmin horizon)",
    )
    idle.add_metric([], len(snap.idle_in_transaction))
    yield idle
    oldest_idle = _gauge(
        "idle_in_transaction_max_age_seconds",
        "Age of the oldest transaction left idle (0 when none)",
    )
    oldest_idle.add_metric([], max((idle_age(i) for i in snap.idle_in_transaction), default=0.0))
    yield oldest_idle


def deadlock_families(snap: Snapshot) -> Iterator[Metric]:
    """The server's own deadlock count for the database (pg_stat_database.deadlocks), and
    its rise per second between the monitor's last two polls."""
    database = snap.server.database
    total = CounterMetricFamily(
        f"{PREFIX}_deadlocks",
        "Deadlocks the server detected in this database (pg_stat_database.deadlocks)",
        labels=["database"],
    )
    total.add_metric([database], snap.deadlocks_total or 0)
    yield total
    if snap.deadlocks_per_s is not None:
        rate = _gauge(
            "deadlocks_per_second",
            "Deadlocks per second in this database between the monitor's last two polls",
            ("database",),
        )
        rate.add_metric([database], snap.deadlocks_per_s)
        yield rate


def group_families(snap: Snapshot, max_groups: int = DEFAULT_MAX_GROUPS) -> Iterator[Metric]:
    """Active jobs per group (the spec's group column: queue name, task kind), the busiest
    `max_groups` (see capped_groups)."""
    table = snap.queue
    jobs = _gauge("group_jobs", "Active jobs per group and role", ("table", "queue", "role"))
    oldest = _gauge(
        "group_oldest_ready_age_seconds",
        "Age of the oldest ready job per group (0 when none)",
        ("table", "queue"),
    )
    stale = _gauge("group_stale_leases", "Stale leases per group", ("table", "queue"))
    for g in capped_groups(snap.groups, max_groups):
        for role in ("ready", "scheduled", "running"):
            if role in snap.roles:
                jobs.add_metric([table, g.name, role], getattr(g, role))
        oldest.add_metric([table, g.name], g.oldest_ready_age_s or 0.0)
        stale.add_metric([table, g.name], g.stale_leases)
    yield from (jobs, oldest, stale)


def exporter_families(stats: PollStats, snap: Snapshot | None) -> Iterator[Metric]:
    """The monitor's own health: up, how stale the served values are, poll cost, errors."""
    up = _gauge(
        "up",
        "1 if the last poll of the database succeeded; 0 while it fails "
        "(the other values are then the last ones read)",
    )
    up.add_metric([], 1.0 if stats.up else 0.0)
    yield up
    if snap is not None:
        taken = snap.taken_at.timestamp()
        last = _gauge("last_success_timestamp_seconds", "Unix time of the snapshot served")
        last.add_metric([], taken)
        yield last
        age = _gauge("snapshot_age_seconds", "Age of the snapshot served")
        age.add_metric([], max(stats.now_unix - taken, 0.0))
        yield age
    duration = SummaryMetricFamily(
        f"{PREFIX}_poll_duration_seconds", "Wall time of each poll of the database, failed ones too"
    )
    duration.add_metric([], count_value=stats.polls, sum_value=stats.poll_seconds_sum)
    yield duration
    if stats.last_poll_s is not None:
        last_poll = _gauge("last_poll_duration_seconds", "Wall time of the last poll")
        last_poll.add_metric([], stats.last_poll_s)
        yield last_poll
    errors = CounterMetricFamily(
        f"{PREFIX}_poll_errors", "Polls that failed, by reason", labels=["reason"]
    )
    for reason in ERROR_REASONS:
        errors.add_metric([reason], stats.errors.get(reason, 0))
    yield errors
