"""Guarded recovery actions: the only layer of queuetop that changes anything.

Every action takes the state the operator observed and changes only what
still matches it, in one short transaction that never waits behind a worker,
with its audit record; it returns an ActionResult (changed, skipped + reason).

    conn = db.connect_action(dsn)
    sink = choose_sink(conn, audit_file)           # refuses if no audit trail
    result = requeue(conn, spec, [ObservedJob.from_stale(s) for s in picked], audit=sink)
"""

from dashboard.actions.backends import cancel, observe_session, terminate
from dashboard.actions.capabilities import capabilities
from dashboard.actions.grants import require_grants
from dashboard.actions.guards import foresee
from dashboard.actions.jobs import (
    BadJobId,
    dead_letter,
    job_id_problem,
    observe_jobs,
    requeue,
)
from dashboard.actions.results import ActionResult, Skipped
from dashboard.audit.writers import AuditSink, FileAudit, TableAudit, choose_sink
from dashboard.observed.records import ObservedJob, ObservedSession

__all__ = [
    "ActionResult",
    "AuditSink",
    "BadJobId",
    "FileAudit",
    "ObservedJob",
    "ObservedSession",
    "Skipped",
    "TableAudit",
    "cancel",
    "capabilities",
    "choose_sink",
    "dead_letter",
    "foresee",
    "job_id_problem",
    "observe_jobs",
    "observe_session",
    "require_grants",
    "requeue",
    "terminate",
]
