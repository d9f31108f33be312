"""The rescuer (opt-in: `queuetop load --rescue`): expired leases back to ready, audited.

A rescue changes jobs the load generator may never have claimed (leases left by
other workers, from before the run), so it keeps the operator's rules: one short
transaction that locks the expired leases it sees (skipping rows a worker holds),
changes only those still as observed (running, same worker, same lease token) and
still past their lease, and writes one audit record per changed job in the same
transaction (with an audit file: ahead of the commit, see actions/audit.py).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import psycopg
from psycopg.rows import class_row

from dashboard.audit.writers import AuditEntry, AuditSink, commit
from dashboard.errors import UserError
from dashboard.loadgen.strategies import QueueSql
from dashboard.models import QueueSpec
from dashboard.observed.records import JobState  # an expired lease, observed and locked

ACTION = "rescue"  # the audit log's action: an automatic requeue of an expired lease
ACTOR = "queuetop load generator (--rescue)"
REASON = "lease expired; rescued by the queuetop load generator"
RESCUE_LIMIT = 1000  # jobs per transaction; the next round takes the rest
APPLICATION_NAME = "queuetop-rescuer"
CONNECT_OPTIONS = "-c lock_timeout=1000 -c statement_timeout=10000"  # as an action's


@dataclass(frozen=True)
class Rescued:
    """A job the guarded statement changed: its new state (ready or terminal) and token."""

    id: str
    status: str
    new_token: str | None


def check_rescue(spec: QueueSpec) -> None:
    """Refuse --rescue on a queue whose spec cannot tell that a lease expired."""
    if not (spec.columns.lease_until or spec.columns.started_at):
        raise UserError(
            f"--rescue: the queue spec of {spec.table} names neither lease_until nor "
            "started_at, so no lease can be seen to expire; name one or drop --rescue"
        )


def connect(dsn: str) -> psycopg.Connection:
    """The rescuer's own session: transactions, short lock and statement timeouts."""
    return psycopg.connect(
        dsn,
        autocommit=False,
        application_name=APPLICATION_NAME,
        connect_timeout=5,
        options=CONNECT_OPTIONS,
    )


def rescue_expired(
    conn: psycopg.Connection,
    queue_sql: QueueSql,
    table: str,
    audit: AuditSink,
    stale_after_s: float,
    limit: int = RESCUE_LIMIT,
    reason: str = REASON,
) -> list[Rescued]:
    """One transaction on `conn` (not autocommit): lock, guarded requeue, audit, commit.

    Returns the jobs changed. Any failure rolls back the change and its records alike.
    """
    if queue_sql.expired_leases is None or queue_sql.rescue is None:
        return []
    params = queue_sql.params(stale_after_s=stale_after_s, limit=limit)
    try:
        with conn.cursor(row_factory=class_row(JobState)) as cur:
            seen = {lease.id: lease for lease in cur.execute(queue_sql.expired_leases, params)}
        if not seen:
            conn.rollback()
            return []
        observed = list(seen.values())
        with conn.cursor(row_factory=class_row(Rescued)) as cur:
            rescued = cur.execute(
                queue_sql.rescue,
                {
                    **params,
                    "ids": [o.id for o in observed],
                    "workers": [o.worker for o in observed],
                    "tokens": [o.lease_token for o in observed],
                },
            ).fetchall()
        if rescued:
            audit.record(
                conn,
                ACTION,
                table,
                reason,
                [
                    AuditEntry(
                        target=r.id,
                        from_state=seen[r.id].as_state(),
                        to_state=r.status,
                        outcome="changed",
                        detail={"actor": ACTOR, "new_lease_token": r.new_token},
                    )
                    for r in rescued
                ],
            )
    except BaseException:
        with contextlib.suppress(psycopg.Error):  # a lost connection has nothing to roll back
            conn.rollback()
        audit.finish("rolled back")
        raise
    commit(conn, audit)
    return rescued
