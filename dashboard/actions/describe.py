"""What a job action's guard checks and what its change fences, in words, from the spec.

The guard itself is SQL (actions/still_as_observed.sql, in every requeue and dead-letter
statement): a column the spec lacks is compared as NULL to NULL there, so it guards
nothing. These sentences say which columns really take part, so a confirmation never
promises a fence the table lacks.
"""

from __future__ import annotations

from dashboard.models import QueueSpec


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def guarded_columns(spec: QueueSpec) -> list[str]:
    """What must still be as observed: 'status', 'worker', 'lease token' (the spec's)."""
    cols = spec.columns
    named = [f"state ({cols.status})"]
    if cols.worker:
        named.append(f"worker ({cols.worker})")
    if cols.lease_token:
        named.append(f"lease token ({cols.lease_token})")
    return named


def expiry_rule(spec: QueueSpec) -> str:
    """How a running job's lease counts as expired, or that it cannot."""
    cols = spec.columns
    # an adapter's own liveness expression also expires the job of a worker it knows dead
    dead = f" or its worker is known dead ({cols.worker_alive})" if cols.worker_alive else ""
    if cols.lease_until:
        return f"its lease has run out ({cols.lease_until}){dead}"
    if cols.started_at:
        return f"it started over {spec.policy.stale_after_s:g}s ago ({cols.started_at}){dead}"
    return "never: the spec has no lease_until or started_at column, so only force requeues it"


def guard_text(spec: QueueSpec, force: bool) -> str:
    """'Guarded: a job changes only while its state, worker and lease token are as shown…'"""
    named = guarded_columns(spec)
    text = (
        f"Guarded: a job changes only while its {_and(named)} "
        + ("is" if len(named) == 1 else "are")
        + " as shown"
    )
    if not force:
        text += f"; a running one only once {expiry_rule(spec)}"
    return text + ". Rows that changed since you looked are skipped, each with its reason."


def fencing_text(spec: QueueSpec, action: str) -> str:
    """What stops the old worker's late write, or '' when nothing does (see fencing_warning)."""
    dead = spec.policy.dead_letter
    if action == "dead-letter" and dead is not None and dead.kind == "table":
        return (
            "The row leaves the queue table, so the old worker's late completion matches nothing."
        )
    if spec.columns.lease_token:
        return (
            f"The lease token ({spec.columns.lease_token}) advances, so the old worker's "
            "late completion changes nothing."
        )
    return ""


def fencing_warning(spec: QueueSpec, action: str) -> str:
    """A warning when the change is not fenced: the spec has no lease token to advance."""
    if fencing_text(spec, action):
        return ""
    guarded = "state and worker" if spec.columns.worker else "state"
    return (
        f"NOT FENCED: {spec.table} has no lease token in its spec, so only the {guarded} "
        "are guarded. A worker that wakes up afterwards and completes by id alone can "
        "overwrite the new owner's work; add a lease_token column (README: Fencing)."
    )
