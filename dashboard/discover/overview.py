"""One row per queue found: what `watch` shows before the user picks one (and `snapshot`
prints), each read by the monitor's own poll of that queue."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

from dashboard import config, monitor
from dashboard.discover.found import FoundQueue
from dashboard.errors import UserError
from dashboard.models import QueueSpec, Snapshot


@dataclass(frozen=True)
class OverviewRow:
    """A queue's line in the overview; `error` says why its numbers are missing."""

    found: FoundQueue
    ready: int | None = None
    running: int | None = None
    oldest_ready_age_s: float | None = None
    stale_leases: int | None = None
    waiting: int | None = None  # sessions waiting on a lock of the queue table
    error: str | None = None

    def as_json(self, dsn_hint: str | None = None) -> dict[str, object]:
        return {
            **self.found.as_json(dsn_hint),
            "ready": self.ready,
            "running": self.running,
            "oldest_ready_age_s": self.oldest_ready_age_s,
            "stale_leases": self.stale_leases,
            "waiting_sessions": self.waiting,
            "error": self.error,
        }


def _row(found: FoundQueue, snap: Snapshot) -> OverviewRow:
    waiting = {lk.pid for lk in snap.locks if lk.on_queue_table and not lk.granted}
    return OverviewRow(
        found,
        ready=snap.counts.get("ready", 0),
        running=snap.counts.get("running", 0),
        oldest_ready_age_s=snap.oldest_ready_age_s,
        stale_leases=snap.stale_count,
        waiting=len(waiting),
    )


class Overview:
    """The queues found and a monitor per queue (each keeps its own count plan)."""

    def __init__(
        self,
        found: list[FoundQueue],
        specs: list[QueueSpec | None],
        interval: float,
        errors: list[str | None] | None = None,
    ):
        self.found = found
        self.specs = specs
        self.errors = errors or [None] * len(found)  # why a queue has no spec
        self.monitors = [monitor.Monitor(s, interval) if s else None for s in specs]

    @classmethod
    def open(
        cls, conn: psycopg.Connection, found: list[FoundQueue], interval: float, spec_for
    ) -> Overview:
        """Each queue's spec validated against the catalog (None where it cannot be)."""
        specs: list[QueueSpec | None] = []
        errors: list[str | None] = []
        for queue in found:
            try:
                specs.append(config.validate(conn, spec_for(queue)))
                errors.append(None)
            except UserError as exc:  # e.g. a version its adapter refuses
                specs.append(None)
                errors.append(str(exc))
        return cls(found, specs, interval, errors)

    def poll(self, conn: psycopg.Connection) -> list[OverviewRow]:
        rows = []
        for queue, watching, why in zip(self.found, self.monitors, self.errors, strict=True):
            if watching is None:
                rows.append(OverviewRow(queue, error=why))
                continue
            try:
                rows.append(_row(queue, watching.poll(conn)))
            except (UserError, psycopg.Error) as exc:
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                rows.append(OverviewRow(queue, error=first))
        return rows
