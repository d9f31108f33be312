"""What a spec lets the metrics and the checks know, and how an idle transaction's age is
read: shared by families.py (which needs prometheus_client) and checks.py (which must not,
so that `queuetop check` starts without it)."""

from __future__ import annotations

from dashboard.models import QueueSpec


def oldest_ready_known(spec: QueueSpec) -> bool:
    return spec.columns.created_at is not None or spec.columns.scheduled_at is not None


def stale_leases_known(spec: QueueSpec) -> bool:
    return spec.can_find_stale()


def idle_age(session) -> float:
    """A transaction's age; an aborted one without xact_start counts from its idle time."""
    return session.xact_age_s if session.xact_age_s is not None else session.idle_s
