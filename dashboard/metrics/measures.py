"""What a spec lets the metrics and the checks know, and how an idle transaction's age is
read: shared by families.py (which needs prometheus_client) and checks.py (which must not,
so that `queuetop check` starts without it)."""

from __future__ import annotations

from dashboard.models import Durations, QueueSpec, Snapshot


def oldest_ready_known(spec: QueueSpec) -> bool:
    return spec.columns.created_at is not None or spec.columns.scheduled_at is not None


def stale_leases_known(spec: QueueSpec) -> bool:
    return spec.can_find_stale()


def idle_age(session) -> float:
    """A transaction's age; an aborted one without xact_start counts from its idle time."""
    return session.xact_age_s if session.xact_age_s is not None else session.idle_s


def _durations(snap: Snapshot, kind: str) -> Durations | None:
    latency = snap.latency
    return None if latency is None else getattr(latency.queue, kind)


def latency_p95(snap: Snapshot, kind: str) -> float:
    """The whole queue's p95 wait or run time (0 where no job started or finished in the
    window: nothing waited); only asked where latency_unread says it was read."""
    durations = _durations(snap, kind)
    return durations.p95_s if durations is not None and durations.p95_s is not None else 0.0


def latency_unread(snap: Snapshot, kind: str) -> str | None:
    """Why the snapshot holds no `kind` ('wait' or 'run') durations: the section not read
    (and why), or the timestamps the spec lacks (each named with its flag); None: read."""
    latency = snap.latency
    if latency is None:
        return "the latency was not read"
    if latency.error is not None:
        return f"the latency could not be read: {latency.error}"
    if _durations(snap, kind) is None:
        word = "wait" if kind == "wait" else "run"
        lines = [m for m in latency.missing if word in m] or list(latency.missing)
        return "; ".join(lines) or f"the spec cannot measure the {word} time"
    return None
