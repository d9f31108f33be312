"""Why a job was skipped, and the privileges an action needs, in words an operator can act on.

The guard itself lives in SQL (the WHERE of each do_*.sql); this module only
explains a row the guard refused, from the row's current state, which the
action holds locked, so the explanation cannot race the guard.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import psycopg

from dashboard.actions.grants import table_grants
from dashboard.actions.results import Skipped
from dashboard.errors import UserError
from dashboard.models import QueueSpec, TableName
from dashboard.observed.records import JobState, ObservedJob

NOT_FOUND = "not found"
LOCKED = "locked"


@dataclass(frozen=True)
class JobRow(JobState):
    """A job's current state, as lock_jobs.sql / observe_jobs.sql return it."""

    queuetop_given: str
    expired: bool | None
    # why the queue's library forbids the action on this job (adapters), else None
    requeue_refusal: str | None = None
    dead_letter_refusal: str | None = None

    def refusal(self, action: str) -> str | None:
        return self.requeue_refusal if action == "requeue" else self.dead_letter_refusal

    def observed(self) -> ObservedJob:
        return ObservedJob(
            id=self.id,
            status=self.status,
            worker=self.worker,
            lease_token=self.lease_token,
            lease_until=self.lease_until,
            expired=self.expired,
            requeue_refusal=self.requeue_refusal,
            dead_letter_refusal=self.dead_letter_refusal,
        )


# The roles each job action changes jobs from; the SQL guard's from_values come from these.
# A requeue runs a job again: a stuck one, one waiting for its retry, or one that will never
# run again on its own (a person's retry; the library's own retry where its adapter has one).
FROM_ROLES = {
    "requeue": ("running", "failed", "dead"),
    "dead-letter": ("ready", "scheduled", "running", "failed"),
}
_ALREADY = {"ready": "already ready", "done": "already done", "dead": "already dead-lettered"}


_MOVED_ON = {
    "done": "completed meanwhile",
    "failed": "failed meanwhile",
    "ready": "already requeued",
    "dead": "already dead-lettered",
    "running": "claimed again",
}


def skip_reason(
    spec: QueueSpec,
    seen: ObservedJob,
    now: JobRow,
    from_roles: tuple[str, ...],
    force: bool,
    action: str = "requeue",
) -> str:
    """Why the guard refused `now`, which the operator saw as `seen`."""
    if now.refusal(action):
        return str(now.refusal(action))
    if now.status != seen.status:
        return _MOVED_ON.get(spec.role_of(now.status) or "", f"state changed to {now.status}")
    role = spec.role_of(now.status)
    if role not in from_roles:
        return _ALREADY.get(role or "", f"not allowed from {now.status}")
    if now.worker != seen.worker:
        return "owner changed"
    if now.lease_token != seen.lease_token:
        return "lease renewed"
    if role == "running" and not force and not now.expired:
        if now.expired is None:
            return "lease expiry unknown (use --force)"
        if seen.lease_until is not None and now.lease_until != seen.lease_until:
            return "lease renewed"
        return "lease not expired (use --force)"
    return "state changed"  # the guard disagreed with every explanation above


def foreseen_skip(spec: QueueSpec, job: ObservedJob, action: str, force: bool) -> str | None:
    """Why `action` would skip `job` if it is still as observed; None if it would change it.

    A forecast from the observation, to spare the operator a pointless question; the job
    may move on before the action runs, and the SQL guard has the last word.
    """
    role = spec.role_of(job.status)
    refusal = job.requeue_refusal if action == "requeue" else job.dead_letter_refusal
    if refusal:
        return refusal
    if role not in FROM_ROLES[action]:
        return _ALREADY.get(role or "", f"not allowed from {job.status}")
    if role == "running" and not force and not job.expired:
        return "lease expiry unknown" if job.expired is None else "lease not expired"
    return None


def foresee(
    spec: QueueSpec, jobs: Sequence[ObservedJob], action: str, force: bool
) -> tuple[list[ObservedJob], list[Skipped]]:
    """The jobs `action` would change as observed, and the others with their reason."""
    change: list[ObservedJob] = []
    skip: list[Skipped] = []
    for job in jobs:
        why = foreseen_skip(spec, job, action, force)
        if why is None:
            change.append(job)
        else:
            skip.append(Skipped(job.id, why))
    return change, skip


def missing_privileges(
    conn: psycopg.Connection, table: TableName, needed: tuple[str, ...]
) -> str | None:
    """The GRANTs an action on `table` lacks (schema USAGE too), as one sentence; None when
    nothing is missing."""
    grants = table_grants(conn, table, needed)
    if not grants:
        return None
    return (
        f"role {conn.info.user} lacks what this action needs on {table}: "
        f"{'; '.join(grants)} (or use a role that has it)"
    )


def require_privileges(conn: psycopg.Connection, table: TableName, needed: tuple[str, ...]) -> None:
    """Refuse with the GRANT that is missing, before anything changes."""
    why = missing_privileges(conn, table, needed)
    if why:
        raise UserError(why)
