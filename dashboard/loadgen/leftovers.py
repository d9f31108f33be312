"""Leases an earlier demo run left behind, cleared at the start of the next one.

A crashed worker's job stays `running` under its name until someone requeues it; a
demo started later showed those as stale leases it never made, burying the one the
person watching makes with `!`. So the demo starts by requeueing the expired ones
through the rescuer (rescuer.py): locked with SKIP LOCKED, changed only while still
as observed and still past their lease, one audit record per job in the same
transaction, as an operator's requeue. A lease still inside its expiry may belong
to a live worker (another demo on the same database): it is left alone and counted.
"""

from __future__ import annotations

from dataclasses import dataclass

import queries
from dashboard.audit.writers import AuditSink
from dashboard.loadgen import rescuer
from dashboard.loadgen.strategies import build
from dashboard.models import QueueSpec
from dashboard.queue_sql.parts import queue_parts

REASON = "lease left by an earlier demo run; requeued at the start of the next"


@dataclass(frozen=True)
class Leftovers:
    requeued: int  # expired leases handed back to ready (or dead past max_attempts)
    stale: int  # expired leases left as they were (no audit trail to requeue them with)
    still_leased: int  # running jobs inside their lease: left alone

    def note(self) -> str | None:
        """One line for the person starting the demo; None when there was nothing."""
        parts = []
        if self.requeued:
            parts.append(
                f"requeued {_jobs(self.requeued, 'stale lease')} an earlier run left "
                "(audited: queuetop audit)"
            )
        if self.stale:
            parts.append(
                f"{_jobs(self.stale, 'stale lease')} from an earlier run (tab 4; no audit "
                "trail to requeue them with: queuetop init-audit)"
            )
        if self.still_leased:
            parts.append(
                f"{_jobs(self.still_leased, 'running job')} from before this run, still inside "
                "the lease: tab 4 shows them once it runs out"
            )
        return "; ".join(parts) or None


def _jobs(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def clear_leftovers(dsn: str, spec: QueueSpec, audit: AuditSink | None) -> Leftovers:
    """Requeue the expired leases of `spec`'s table, guarded and audited (none without an
    audit sink); count what is left."""
    queue_sql = build(spec)
    stale_after_s = spec.policy.stale_after_s
    requeued = 0
    with rescuer.connect(dsn) as conn:
        while audit is not None and (
            batch := rescuer.rescue_expired(
                conn, queue_sql, str(spec.table), audit, stale_after_s, reason=REASON
            )
        ):
            requeued += len(batch)
            if len(batch) < rescuer.RESCUE_LIMIT:
                break
        count = queries.get("loadgen/count_running_leases", **queue_parts(spec))
        stale, leased = conn.execute(
            count, queue_sql.params(stale_after_s=stale_after_s)
        ).fetchone()
        conn.rollback()
    return Leftovers(requeued, int(stale), int(leased))
