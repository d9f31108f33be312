"""Typed action requests: what an action will do, built up front, shown, then run as is.

A UI (or any caller) asks for a request with `job_request` or `session_request`;
the request names the action, the ids and their observed state, the guard the SQL
applies, what it changes, how it is fenced, what the audit trail records, and the
warnings an operator must read. The confirmation shows exactly those words and the
runner calls `request.run(conn, audit=…, reason=…)`: no action names as strings,
no payload dicts between the layers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from enum import Enum

import psycopg

from dashboard.actions import backends, dead_letters, jobs
from dashboard.actions.describe import fencing_text, fencing_warning, guard_text
from dashboard.actions.results import ActionResult, Skipped
from dashboard.actions.statements import adapter_statement
from dashboard.audit.writers import AuditSink
from dashboard.models import QueueSpec
from dashboard.observed.records import ObservedJob, ObservedSession


class ActionKind(str, Enum):
    """The actions there are. A str enum: the value is the action's name in the audit
    trail, in capabilities() and in ActionResult.action, and compares equal to it."""

    REQUEUE = "requeue"
    DEAD_LETTER = "dead-letter"
    RETRY_DEAD = "retry-dead"
    CANCEL = "cancel"
    TERMINATE = "terminate"

    def __str__(self) -> str:
        return self.value


JOB_ACTIONS = (ActionKind.REQUEUE, ActionKind.DEAD_LETTER, ActionKind.RETRY_DEAD)
SESSION_ACTIONS = (ActionKind.CANCEL, ActionKind.TERMINATE)


@dataclass(frozen=True)
class JobRequest:
    """Requeue, dead-letter or retry-dead these jobs, as observed."""

    kind: ActionKind
    spec: QueueSpec
    jobs: tuple[ObservedJob, ...]
    force: bool
    left_out: tuple[Skipped, ...]  # chosen, but the action would skip them as observed
    guard: str  # what must still hold for a job to change (the SQL guard, in words)
    changes: str  # what a job that changes gets
    fence: str  # what stops the old owner's late write ("" when nothing does)
    audit: str  # what the audit trail records, in the same transaction
    warnings: tuple[str, ...] = ()
    needs_reason: bool = False

    @property
    def ids(self) -> list[str]:
        return [j.id for j in self.jobs]

    def run(
        self, conn: psycopg.Connection, *, audit: AuditSink, reason: str | None
    ) -> ActionResult:
        """One guarded, audited transaction on `conn` (an action connection)."""
        if self.kind is ActionKind.REQUEUE:
            return jobs.requeue(
                conn, self.spec, self.jobs, audit=audit, force=self.force, reason=reason
            )
        if self.kind is ActionKind.RETRY_DEAD:
            return dead_letters.retry_dead(conn, self.spec, self.jobs, audit=audit, reason=reason)
        return jobs.dead_letter(
            conn, self.spec, self.jobs, audit=audit, reason=reason or "", force=self.force
        )


@dataclass(frozen=True)
class SessionRequest:
    """Cancel or terminate one backend, as observed."""

    kind: ActionKind
    session: ObservedSession
    guard: str
    changes: str
    audit: str
    needs_reason: bool = False

    @property
    def ids(self) -> list[str]:
        return [str(self.session.pid)]

    def run(
        self, conn: psycopg.Connection, *, audit: AuditSink, reason: str | None
    ) -> ActionResult:
        signal = backends.cancel if self.kind is ActionKind.CANCEL else backends.terminate
        return signal(conn, self.session, audit=audit, reason=reason)


ActionRequest = JobRequest | SessionRequest

_JOB_AUDIT = (
    "The audit trail records the action, the table, your reason and, per job, its state "
    "before and the state it gets (or why it was skipped), in the same transaction."
)


def state_change(spec: QueueSpec, jobs: Sequence[ObservedJob], role: str) -> str:
    """'status: running -> queued': the state column, the states the jobs are in as
    observed, and the exact value they get (never a guess: see actions/writes.py)."""
    froms = ", ".join(dict.fromkeys(str(j.status) for j in jobs)) or "(none)"
    value = spec.written_value(role)
    flag = "--ready-value" if role == "ready" else "--dead-value"
    to = value if value is not None else f"(not known: pass {flag})"
    return f"{spec.columns.status}: {froms} -> {to}"


def _requeue_changes(spec: QueueSpec, jobs: Sequence[ObservedJob]) -> str:
    cols = spec.columns
    cleared = [name for name, col in (("worker", cols.worker), ("lease", cols.lease_until)) if col]
    own = (
        f" as {spec.adapter}'s own retry does"
        if adapter_statement(spec, "actions/do_requeue")
        else ""
    )
    return (
        f"Back to ready ({state_change(spec, jobs, 'ready')}){own}"
        + (f", {' and '.join(cleared)} cleared" if cleared else "")
        + (", attempts kept" if cols.attempts else "")
        + "."
    )


def _dead_letter_changes(spec: QueueSpec, jobs: Sequence[ObservedJob]) -> str:
    dead = spec.policy.dead_letter
    where = (
        f"moved to {dead.table} in one transaction (reason, time and actor kept)"
        if dead and dead.kind == "table" and dead.table
        else f"set to the dead state ({state_change(spec, jobs, 'dead')})"
        ", the reason kept with the job"
    )
    return f"Each job is {where}."


def _retry_dead_changes(spec: QueueSpec, jobs: Sequence[ObservedJob]) -> str:
    dead = spec.policy.dead_letter.table if spec.policy.dead_letter else None
    cols = spec.columns
    cleared = [name for name, col in (("worker", cols.worker), ("lease", cols.lease_until)) if col]
    token = f", its lease token ({cols.lease_token}) advanced" if cols.lease_token else ""
    return (
        f"Each job is moved from {dead} back into {spec.table} in one statement (deleted "
        f"there, inserted here) as ready ({state_change(spec, jobs, 'ready')})"
        + (f", {' and '.join(cleared)} cleared" if cleared else "")
        + (", attempts kept" if cols.attempts else "")
        + token
        + "."
    )


RETRY_DEAD_GUARD = (
    "Guarded: only while it is still in the dead-letter table as shown and its id is free "
    "in the queue; the others are skipped, each with its reason."
)


def overdue_s(job: ObservedJob, now: datetime | None = None) -> float | None:
    """Seconds past the lease expiry (negative: not expired yet); None without an expiry."""
    if job.lease_until is None:
        return None
    return ((now or datetime.now(timezone.utc)) - job.lease_until).total_seconds()


def unexpired(jobs: Sequence[ObservedJob], spec: QueueSpec) -> list[ObservedJob]:
    """Running jobs whose lease has not expired: a requeue of those needs force."""
    running = set(spec.values("running"))
    return [j for j in jobs if j.status in running and (overdue_s(j) or 0.0) < 0]


def job_request(
    kind: ActionKind,
    spec: QueueSpec,
    jobs: Sequence[ObservedJob],
    *,
    force: bool = False,
    left_out: Sequence[Skipped] = (),
) -> JobRequest:
    """The complete request for a job action on `jobs` as observed."""
    kind = ActionKind(kind)
    if kind not in JOB_ACTIONS:
        raise ValueError(f"not a job action: {kind}")
    warnings: list[str] = []
    if kind is ActionKind.RETRY_DEAD:
        guard, changes, fence = RETRY_DEAD_GUARD, _retry_dead_changes(spec, jobs), ""
    else:
        # what the guard and the fence really are for this spec: never a token it lacks
        guard, fence = guard_text(spec, force), fencing_text(spec, kind.value)
        describe = _requeue_changes if kind is ActionKind.REQUEUE else _dead_letter_changes
        changes = describe(spec, jobs)
        if kind is ActionKind.REQUEUE and force:
            live = unexpired(jobs, spec)
            warnings.append(
                f"FORCE: {len(live)} of these leases have not expired; their workers "
                "may still be running them. Only the expiry check is lifted."
                if live
                else "FORCE: the lease expiry check is lifted (these leases have expired already)."
            )
        if fencing_warning(spec, kind.value):
            warnings.append(fencing_warning(spec, kind.value))
    return JobRequest(
        kind=kind,
        spec=spec,
        jobs=tuple(jobs),
        force=force,
        left_out=tuple(left_out),
        guard=guard,
        changes=changes,
        fence=fence,
        audit=_JOB_AUDIT,
        warnings=tuple(warnings),
        needs_reason=kind is ActionKind.DEAD_LETTER,
    )


def session_request(kind: ActionKind, seen: ObservedSession) -> SessionRequest:
    """The complete request to cancel or terminate the backend `seen`."""
    kind = ActionKind(kind)
    if kind not in SESSION_ACTIONS:
        raise ValueError(f"not a session action: {kind}")
    changes = (
        "cancel its current query (the session stays)"
        if kind is ActionKind.CANCEL
        else "end the backend: its open transaction rolls back, its locks are released"
    )
    return SessionRequest(
        kind=kind,
        session=seen,
        guard="Guarded: only if pid and backend start still match"
        + (" and it is still idle in the same transaction." if seen.state else "."),
        changes=f"This will {changes}.",
        audit="The audit trail records the session as it was before the signal is sent.",
    )
