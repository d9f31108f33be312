"""What an action is given (the state the operator observed) and what it returns."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from dashboard.models import IdleTransaction, SessionInfo, StaleLease, WaitingSession


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


INTEGER_ID_TYPES = ("smallint", "integer", "bigint")
SESSION_ACTIONS = ("cancel", "terminate")


def typed_id(value: str, sql_type: str) -> int | str:
    """An id as JSON carries it: a number for an integer column (as `snapshot --json` gives
    it), else the text PostgreSQL prints (uuid, text, numeric)."""
    if sql_type in INTEGER_ID_TYPES and re.fullmatch(r"[+-]?[0-9]+", value):
        return int(value)
    return value


@dataclass(frozen=True)
class ObservedJob:
    """A job as the operator saw it. Values are in their text form, as PostgreSQL prints them.

    The action changes the job only if id, status, worker and lease token still match.
    `lease_until` is not guarded; it only tells "lease renewed" from "lease not expired".
    `expired` (the lease had run out when observed; None: unknown) is not guarded either;
    it lets the dashboard say beforehand that a requeue would skip a live lease.
    """

    id: str
    status: str
    worker: str | None = None
    lease_token: str | None = None
    lease_until: datetime | None = None
    expired: bool | None = None
    # why the queue's library forbids each action on this job (adapters), if it does
    requeue_refusal: str | None = None
    dead_letter_refusal: str | None = None

    @classmethod
    def from_stale(cls, lease: StaleLease) -> ObservedJob:
        """The observed state of a row of Snapshot.stale_leases."""
        return cls(id=str(lease.id), status=lease.status, worker=_text(lease.worker),
                   lease_token=lease.lease_token_text if lease.lease_token_text is not None
                   else _text(lease.lease_token), lease_until=lease.lease_until,
                   expired=True)  # listed as stale because its lease ran out


@dataclass(frozen=True)
class ObservedSession:
    """A backend as the operator saw it: pid and backend start (against pid reuse), and
    optionally its state and transaction start (against a session that moved on)."""

    pid: int
    backend_start: datetime
    state: str | None = None
    xact_start: datetime | None = None

    @classmethod
    def from_idle(cls, idle: IdleTransaction) -> ObservedSession:
        """An idle-in-transaction session: still idle, still in the same transaction."""
        return cls(pid=idle.pid, backend_start=idle.backend_start, state="idle in transaction",
                   xact_start=idle.xact_start)

    @classmethod
    def from_session(cls, session: SessionInfo | WaitingSession) -> ObservedSession:
        return cls(pid=session.pid, backend_start=session.backend_start)


@dataclass(frozen=True)
class Skipped:
    id: str
    reason: str


@dataclass(frozen=True)
class ActionResult:
    """changed: ids (or pids) that changed; skipped: the others, each with its reason."""

    action: str
    changed: tuple[str, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    dry_run: bool = False
    detail: dict[str, Any] = field(default_factory=dict)
    # SQL type of the job id column: the type the ids take in JSON (pids are integers)
    id_type: str = "text"

    @property
    def ok(self) -> bool:
        """True when everything asked for changed (or would, in a dry run)."""
        return not self.skipped

    def with_skipped(self, extra: list[Skipped]) -> ActionResult:
        return replace(self, skipped=tuple(extra) + self.skipped)

    def as_dict(self) -> dict[str, Any]:
        kind = "integer" if self.action in SESSION_ACTIONS else self.id_type
        return {
            "action": self.action,
            "dry_run": self.dry_run,
            "changed": [typed_id(i, kind) for i in self.changed],
            "skipped": [{"id": typed_id(s.id, kind), "reason": s.reason} for s in self.skipped],
        }

    def to_json(self) -> str:
        return json.dumps(self.as_dict())

    def summary(self) -> str:
        """One or two lines for a terminal or a notification."""
        verb = {"requeue": "requeued", "dead-letter": "dead-lettered",
                "retry-dead": "retried from the dead-letter table",
                "cancel": "cancelled", "terminate": "terminated"}.get(self.action, self.action)
        what = "session(s)" if self.action in ("cancel", "terminate") else "job(s)"
        head = f"would be {verb}" if self.dry_run else verb
        lines = [f"{head}: {len(self.changed)} {what}"
                 + (f" ({', '.join(self.changed)})" if self.changed else "")]
        if self.skipped:
            lines.append(f"skipped: {len(self.skipped)} ("
                         + ", ".join(f"{s.id}: {s.reason}" for s in self.skipped) + ")")
        return "\n".join(lines)
