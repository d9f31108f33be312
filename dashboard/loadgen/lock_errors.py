"""The lock errors a claim may meet, by kind: counted, never fatal to a worker."""

from __future__ import annotations

from psycopg import errors

LOCK_ERRORS = (errors.LockNotAvailable, errors.DeadlockDetected, errors.QueryCanceled)


def lock_error_counter(exc: BaseException, strategy: str) -> str | None:
    """The per-kind counter of a lock error. NOWAIT and lock_timeout share one SQLSTATE
    (55P03): a NOWAIT claim never waits, so under nowait it is NOWAIT's, else the timeout's.
    A statement timeout (57014) counts in lock_errors only."""
    if isinstance(exc, errors.DeadlockDetected):
        return "deadlocks"
    if isinstance(exc, errors.LockNotAvailable):
        return "nowait_errors" if strategy == "nowait" else "lock_timeouts"
    return None
