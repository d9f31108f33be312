"""`queuetop check`'s logic: one snapshot measured against thresholds (pure, no I/O)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dashboard.metrics import measures
from dashboard.models import QueueSpec, Snapshot
from dashboard.render.report import age


@dataclass(frozen=True)
class Check:
    """One threshold: what it measures, the flag that sets it, and whether it is a duration."""

    name: str  # the key in --json
    flag: str
    label: str
    seconds: bool
    measure: Callable[[Snapshot], float]
    known: Callable[[QueueSpec], bool] = lambda spec: True
    unknown_why: str = ""
    # why this snapshot could not measure it (None: it did), for a value read by a section
    # that can time out or that the spec's timestamps may not allow (the latency)
    unread: Callable[[Snapshot], str | None] = lambda snap: None


CHECKS: tuple[Check, ...] = (
    Check(
        "stale_leases",
        "--max-stale",
        "stale leases",
        False,
        lambda s: s.stale_count if s.stale_count is not None else len(s.stale_leases),
        measures.stale_leases_known,
        "the spec names no lease_until or started_at column, heartbeat or workers table",
    ),
    Check(
        "oldest_ready_age_s",
        "--max-oldest-ready",
        "oldest ready job",
        True,
        lambda s: s.oldest_ready_age_s or 0.0,
        measures.oldest_ready_known,
        "the spec names no created_at column (nor scheduled_at)",
    ),
    Check(
        "waiting_sessions",
        "--max-waiting",
        "sessions waiting on a lock",
        False,
        lambda s: len(s.waiting),
    ),
    Check(
        "idle_in_transaction_max_age_s",
        "--max-idle-tx",
        "oldest idle transaction",
        True,
        lambda s: max((measures.idle_age(i) for i in s.idle_in_transaction), default=0.0),
    ),
    Check(
        "wait_p95_s",
        "--max-wait-p95",
        "p95 wait time",
        True,
        lambda s: measures.latency_p95(s, "wait"),
        unread=lambda s: measures.latency_unread(s, "wait"),
    ),
    Check(
        "run_p95_s",
        "--max-run-p95",
        "p95 run time",
        True,
        lambda s: measures.latency_p95(s, "run"),
        unread=lambda s: measures.latency_unread(s, "run"),
    ),
)


@dataclass(frozen=True)
class Result:
    check: Check
    value: float
    limit: float

    @property
    def over(self) -> bool:
        return self.value > self.limit

    def text(self) -> str:
        show = age if self.check.seconds else (lambda n: f"{n:g}")
        verdict = "OVER" if self.over else "ok"
        relation = ">" if self.over else "<="
        return (
            f"{verdict:4}  {self.check.label}: {show(self.value)} {relation} "
            f"max {show(self.limit)}  ({self.check.flag})"
        )

    def as_dict(self) -> dict:
        return {"check": self.check.name, "value": self.value, "max": self.limit, "over": self.over}


def unmeasurable(spec: QueueSpec, limits: dict[str, float]) -> list[str]:
    """The thresholds given that the spec cannot measure: unknown, never a silent pass."""
    return [
        f"{check.flag}: {check.label} unknown: {check.unknown_why}; add it to the queue "
        "spec or drop the flag"
        for check in CHECKS
        if check.name in limits and not check.known(spec)
    ]


def unread(snap: Snapshot, spec: QueueSpec, limits: dict[str, float]) -> list[str]:
    """The thresholds given that this snapshot could not measure: unknown, never a pass."""
    out = []
    for check in CHECKS:
        if check.name in limits and check.known(spec):
            why = check.unread(snap)
            if why is not None:
                out.append(f"{check.flag}: {check.label} unknown: {why}")
    return out


def evaluate(snap: Snapshot, spec: QueueSpec, limits: dict[str, float]) -> list[Result]:
    """Each threshold given that the spec can measure and the snapshot did, in CHECKS
    order, with the value the snapshot measures."""
    return [
        Result(c, c.measure(snap), limits[c.name])
        for c in CHECKS
        if c.name in limits and c.known(spec) and c.unread(snap) is None
    ]


# The monitoring-plugins convention (Nagios, Icinga, Sensu), where it fits queuetop's codes:
# 0 OK, 1 over a threshold (WARNING), 3 UNKNOWN; 2 stays queuetop's "could not run" (bad
# input, no database), which those tools read as CRITICAL.
EXIT_OK, EXIT_OVER, EXIT_UNKNOWN = 0, 1, 3


def verdict(results: list[Result], unknowns: list[str]) -> tuple[str, int]:
    """A threshold over wins (it is known to be bad); else anything unknown; else ok."""
    if any(r.over for r in results):
        return "over", EXIT_OVER
    if unknowns:
        return "unknown", EXIT_UNKNOWN
    return "ok", EXIT_OK
