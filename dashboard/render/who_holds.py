"""Who holds what, in words: the jobs a session holds row-locked or waits for, and a row lock
named as the row lock it is.

A row lock a transaction holds is written into the row itself (xmax), not into pg_locks:
the monitor finds those rows with the same xmax join that counts them (Snapshot.held_jobs,
RowLockHolder). pg_locks shows a row only while someone waits for it: the waiter's
`tuple` lock, whose mode says what it asked for, and the monitor reads which job that row
is (LockInfo.job_id, WaitingSession.job_id).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from dashboard.models import LockInfo, Snapshot

# A tuple lock's mode is the row-level lock its statement asked for (heapam's
# tupleLockExtraInfo): FOR KEY SHARE, FOR SHARE, FOR NO KEY UPDATE (an UPDATE that keeps
# the key), FOR UPDATE (a DELETE, or an UPDATE of the key).
ROW_LOCK_MODES = {
    "AccessShareLock": "FOR KEY SHARE",
    "RowShareLock": "FOR SHARE",
    "ExclusiveLock": "FOR NO KEY UPDATE",
    "AccessExclusiveLock": "FOR UPDATE",
}
JOBS_WIDTH = 12


@dataclass(frozen=True)
class HeldRows:
    """The queue rows one session holds row-locked right now (the locks view shows it as a
    row of its own: these locks are in the rows, not in pg_locks)."""

    pid: int
    application_name: str
    rows: int
    job_ids: tuple[str, ...]  # the first few
    queue: str

    # read like a LockInfo where the locks view treats its rows alike
    locktype = "rows"
    granted = True
    on_queue_table = True
    query = ""
    wait_s = None

    def describe(self) -> str:
        return f"row locks on {jobs_text(self.job_ids, self.rows, 60)} of {self.queue}"


def held_rows(snap: Snapshot) -> dict[int, HeldRows]:
    """pid -> the queue rows it holds row-locked, from the snapshot's xmax join (the
    sessions whose jobs it names)."""
    rows: Counter[int] = Counter()
    apps: dict[int, str] = {}
    for h in snap.row_lock_holders:
        rows[h.pid] += h.rows
        apps[h.pid] = h.application_name
    return {
        pid: HeldRows(pid, apps.get(pid, ""), max(rows[pid], len(ids)), ids, snap.queue)
        for pid, ids in snap.held_jobs.items()
        if ids
    }


def jobs_text(ids: tuple[str, ...], rows: int, width: int = JOBS_WIDTH) -> str:
    """'1,2,3', or '1,2 +6' when it does not fit; '8 rows' when not even one id does."""
    shown = list(ids)
    while shown:
        more = rows - len(shown)
        text = ",".join(shown) + (f" +{more}" if more > 0 else "")
        if len(text) <= width:
            return text
        shown.pop()
    return f"{rows} rows" if rows else ""


def row_lock_mode(lock: LockInfo) -> str:
    """'FOR UPDATE' for a row lock; a table lock's mode without its 'Lock' suffix."""
    if lock.is_row_lock:
        return ROW_LOCK_MODES.get(lock.mode, lock.mode.removesuffix("Lock"))
    return lock.mode.removesuffix("Lock")


def lock_target(lock: LockInfo, waits_for: str | None = None) -> str:
    """What the lock is on: 'job 42' for a row lock on the queue, a relation, or what a
    lock on no relation is; a wait for a transaction id that holds the row its session
    waits for: 'holder of job 42'."""
    if lock.is_row_lock:
        if lock.job_id is not None:
            return f"job {lock.job_id}"
        where = f" ({lock.page},{lock.tuple_index})" if lock.page is not None else ""
        return f"row{where} of {lock.relation or '?'}"
    if lock.relation:
        return lock.relation
    if lock.job_id is not None:  # a library's advisory lock: the job it stands for
        return f"job {lock.job_id}"
    if waits_for is not None and not lock.granted:
        return f"holder of job {waits_for}"
    return f"({lock.locktype})"


def describe_lock(lock: LockInfo) -> str:
    """'row lock (FOR UPDATE) on job 42', 'RowExclusive lock on app.jobs'."""
    if lock.is_row_lock:
        return f"row lock ({row_lock_mode(lock)}) on {lock_target(lock)}"
    return f"{row_lock_mode(lock)} lock on {lock_target(lock)}"
