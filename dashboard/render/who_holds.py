"""Who holds what, in words: the jobs a session holds row-locked, the job it is queued on,
and what each pg_locks row means.

A row lock a transaction holds is written into the row itself (xmax), not into pg_locks:
the monitor decodes the xmax of the rows that matter (RowLockHolder, Snapshot.held_jobs).
pg_locks shows a row only while someone waits for it, as a `tuple` lock, which is no
row lock held: it is a place in the queue for the row. Granted, it means first in line
(the session then waits on the holder's transaction id); not granted, behind the one
that is. Its mode is the row lock the session asked for.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from dashboard.models import FINISHED_ROLES, LockInfo, Snapshot

# A tuple lock's mode is the row-level lock its statement asked for (heapam's
# tupleLockExtraInfo): FOR KEY SHARE, FOR SHARE, FOR NO KEY UPDATE (an UPDATE that keeps
# the key), FOR UPDATE (a DELETE, or an UPDATE of the key).
ROW_LOCK_MODES = {
    "AccessShareLock": "FOR KEY SHARE",
    "RowShareLock": "FOR SHARE",
    "ExclusiveLock": "FOR NO KEY UPDATE",
    "AccessExclusiveLock": "FOR UPDATE",
}
# pg_get_multixact_members' modes: the row locks, and the updates, of a multixact's members
MEMBER_MODES = {
    "keysh": "FOR KEY SHARE",
    "sh": "FOR SHARE",
    "fornokeyupd": "FOR NO KEY UPDATE",
    "forupd": "FOR UPDATE",
    "nokeyupd": "UPDATE (key kept)",
    "upd": "UPDATE",
}
# Table locks every reader and writer takes: never a conflict with one another, so the
# locks tab folds them into one line per session (their count), the rest stand out.
ORDINARY_TABLE_MODES = frozenset({"AccessShareLock", "RowShareLock", "RowExclusiveLock"})
JOBS_WIDTH = 12


@dataclass(frozen=True)
class HeldRows:
    """The queue rows one session holds row-locked right now (the locks view shows it as a
    row of its own: these locks are in the rows, not in pg_locks)."""

    pid: int
    application_name: str
    rows: int
    job_ids: tuple[Any, ...]  # the first few
    queue: str
    mode: str | None = None  # a multixact member's mode; None: a plain xmax (not known)
    # Of `rows`, those that read finished (done, failed, dead): rows the session queued for
    # while another transaction held them, locked once that one finished them, and passed
    # over as no longer matching. PostgreSQL keeps such a lock until the transaction ends,
    # so a held FOR UPDATE claim can hold several rows while it works on one.
    passed_over: int = 0
    active_ids: tuple[Any, ...] = ()  # the first few of the others (its claim)

    # read like a LockInfo where the locks view treats its rows alike
    locktype = "rows"
    granted = True
    on_queue_table = True
    query = ""
    wait_s = None

    def describe(self) -> str:
        how = f" ({MEMBER_MODES.get(self.mode, self.mode)})" if self.mode else ""
        text = f"row locks{how} on {jobs_text(self.job_ids, self.rows, 60)} of {self.queue}"
        if self.passed_over:
            text += (
                f"; {self.passed_over} of them finished rows it queued for and passed over "
                "once they no longer matched (PostgreSQL keeps those locks until the "
                "transaction ends)"
            )
        return text

    def target(self, width: int = JOBS_WIDTH) -> str:
        """What the locks tab's `on` column says: 'jobs 1,2', or 'job 7 +2 finished' where
        some of the rows are finished ones it passed over."""
        if not self.job_ids:
            return f"{self.rows} rows of {self.queue}"
        if not self.passed_over:
            return f"jobs {jobs_text(self.job_ids, self.rows, width)}"
        claimed = self.rows - self.passed_over
        tail = f" +{self.passed_over} finished"
        if not claimed:  # only rows it passed over: it holds no claim (yet)
            word = "job" if self.rows == 1 else "jobs"
            return f"{word} {jobs_text(self.job_ids, self.rows, width - 9)} finished"
        word = "job" if claimed == 1 else "jobs"
        return f"{word} {jobs_text(self.active_ids, claimed, width - len(tail))}{tail}"


def held_rows(snap: Snapshot) -> dict[int, HeldRows]:
    """pid -> the queue rows it holds row-locked, from the snapshot's decoded xmax (its
    mode where every row it holds is held in the same known mode)."""
    rows: Counter[int] = Counter()
    finished: Counter[int] = Counter()
    active: dict[int, list[Any]] = {}
    apps: dict[int, str] = {}
    modes: dict[int, set[str | None]] = {}
    for h in snap.row_lock_holders:
        rows[h.pid] += h.rows
        apps[h.pid] = h.application_name
        modes.setdefault(h.pid, set()).add(h.mode)
        if h.role in FINISHED_ROLES:
            finished[h.pid] += h.rows
        else:
            active.setdefault(h.pid, []).extend(h.job_ids)
    out = {}
    for pid, ids in snap.held_jobs.items():
        if not ids:
            continue
        mode = modes.get(pid, {None})
        one = next(iter(mode)) if len(mode) == 1 else None
        out[pid] = HeldRows(
            pid,
            apps.get(pid, ""),
            max(rows[pid], len(ids)),
            ids,
            snap.queue,
            one,
            passed_over=finished[pid],
            active_ids=tuple(active.get(pid, ())),
        )
    return out


def jobs_text(ids: tuple[Any, ...], rows: int, width: int = JOBS_WIDTH) -> str:
    """'1,2,3', or '1,2 +6' when it does not fit; '8 rows' when not even one id does."""
    shown = [str(i) for i in ids]
    while shown:
        more = rows - len(shown)
        text = ",".join(shown) + (f" +{more}" if more > 0 else "")
        if len(text) <= width:
            return text
        shown.pop()
    return f"{rows} rows" if rows else ""


def row_lock_mode(lock: LockInfo) -> str:
    """A place in a row's queue: 'wants FOR UPDATE' (the row lock it asked for, not one it
    holds); a table lock's mode without its 'Lock' suffix."""
    if lock.is_row_queue:
        return "wants " + ROW_LOCK_MODES.get(lock.mode, lock.mode.removesuffix("Lock"))
    return lock.mode.removesuffix("Lock")


def lock_state(lock: LockInfo) -> str:
    """'yes' (held), 'WAIT', or 'first' for a row queue's head: next to get the row."""
    if not lock.granted:
        return "WAIT"
    return "first" if lock.is_row_queue else "yes"


def lock_kind(lock: LockInfo) -> str:
    return "row queue" if lock.is_row_queue else lock.locktype


def lock_target(lock: LockInfo, waits_for: Any = None) -> str:
    """What the lock is on: 'queued for job 42' for a place in a queue row's line, a
    relation, or what a lock on no relation is; a wait for a transaction id that holds the
    row its session is queued on: 'holder of job 42'."""
    if lock.is_row_queue:
        if lock.job_id is not None:
            return f"queued for job {lock.job_id}"
        where = f" ({lock.page},{lock.tuple_index})" if lock.page is not None else ""
        return f"queued for row{where} of {lock.relation or '?'}"
    if lock.relation:
        return lock.relation
    if lock.job_id is not None:  # a library's advisory lock: the job it stands for
        return f"job {lock.job_id}"
    if waits_for is not None and not lock.granted:
        return f"holder of job {waits_for}"
    return f"({lock.locktype})"


def describe_lock(lock: LockInfo) -> str:
    """'queued for job 42 (wants FOR UPDATE, first in line)', 'RowExclusive lock on app.jobs'."""
    if lock.is_row_queue:
        place = "first in line" if lock.granted else "waiting behind the first"
        return f"{lock_target(lock)} ({row_lock_mode(lock)}, {place})"
    return f"{row_lock_mode(lock)} lock on {lock_target(lock)}"


def is_ordinary(lock: LockInfo) -> bool:
    """A granted table lock of the kinds every reader and writer takes, or a transaction's
    own id: nothing anyone waits behind unless a stronger lock is asked for."""
    if not lock.granted:
        return False
    if lock.locktype == "relation":
        return lock.mode in ORDINARY_TABLE_MODES
    return lock.locktype == "transactionid" and lock.mode == "ExclusiveLock"


@dataclass(frozen=True)
class FoldedLocks:
    """A session's ordinary locks (RowShare / RowExclusive / AccessShare on tables and
    indexes, its own transaction id) as one line: they conflict with no one's reads or
    writes, and listed one by one they bury the locks that matter."""

    pid: int
    application_name: str
    count: int
    relations: tuple[str, ...]  # the tables and indexes, the queue table first
    strongest: str  # the strongest table-lock mode among them, without 'Lock'
    query: str = ""
    on_queue_table: bool = False  # one of them is on the queue table

    locktype = "folded"
    granted = True
    wait_s = None

    def describe(self) -> str:
        return ", ".join(self.relations[:2]) + (
            f" +{len(self.relations) - 2}" if len(self.relations) > 2 else ""
        )


MODE_ORDER = ("AccessShareLock", "RowShareLock", "RowExclusiveLock")


def fold_ordinary(locks: list[LockInfo]) -> tuple[list[LockInfo], list[FoldedLocks]]:
    """The locks that matter, one by one; the ordinary ones folded per session."""
    kept: list[LockInfo] = []
    folded: dict[int, list[LockInfo]] = {}
    for lk in locks:
        (folded.setdefault(lk.pid, []) if is_ordinary(lk) else kept).append(lk)
    lines = []
    for pid, group in folded.items():
        rels = sorted(
            {lk.relation for lk in group if lk.relation},
            key=lambda r: (not any(g.on_queue_table and g.relation == r for g in group), r),
        )
        modes = [lk.mode for lk in group if lk.locktype == "relation"]
        top = max(modes, key=MODE_ORDER.index, default="ExclusiveLock")
        first = group[0]
        lines.append(
            FoldedLocks(
                pid,
                first.application_name,
                len(group),
                tuple(rels),
                top.removesuffix("Lock"),
                first.query,
                any(lk.on_queue_table for lk in group),
            )
        )
    return kept, lines
