"""The observed-job record: what an operator (or the rescuer) saw of a job or a backend.

Shared by every layer that reads jobs before a guarded change (actions, browse, the load
generator's rescuer, the UI), so it lives below all of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dashboard.models import IdleTransaction, SessionInfo, StaleLease, WaitingSession, id_text


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


INTEGER_ID_TYPES = ("smallint", "integer", "bigint")


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
        return cls(
            id=id_text(lease.id),
            status=lease.status,
            worker=_text(lease.worker),
            lease_token=lease.lease_token_text
            if lease.lease_token_text is not None
            else _text(lease.lease_token),
            lease_until=lease.lease_until,
            expired=True,
        )  # listed as stale because its lease ran out


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
        return cls(
            pid=idle.pid,
            backend_start=idle.backend_start,
            state="idle in transaction",
            xact_start=idle.xact_start,
        )

    @classmethod
    def from_session(cls, session: SessionInfo | WaitingSession) -> ObservedSession:
        return cls(pid=session.pid, backend_start=session.backend_start)


@dataclass(frozen=True)
class JobState:
    """A job's state as a guarded change reads it (and its audit record keeps it)."""

    id: str
    status: str
    worker: str | None
    lease_token: str | None
    attempts: int | None
    lease_until: datetime | None

    def as_state(self) -> dict[str, object]:
        return {
            "status": self.status,
            "worker": self.worker,
            "lease_token": self.lease_token,
            "attempts": self.attempts,
            "lease_until": self.lease_until,
        }
