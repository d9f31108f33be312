"""Ground truth for the lock oracle (bench/lock_oracle.py): what PostgreSQL holds, read
from its own views (pgrowlocks for the rows, pg_locks and pg_blocking_pids for the rest),
and every way a queuetop snapshot of the same moment differs from it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import psycopg

from dashboard.models import Snapshot
from dashboard.render.who_holds import lock_state, lock_target

JOBS = "queuetop_demo.jobs"
ACTIVE = ("ready", "running")  # the demo's states whose rows index mode reads
SIDE = "queuetop_demo.side"  # another table a held transaction also holds rows of
# pgrowlocks' words for the modes pg_get_multixact_members abbreviates
MODES = {
    "For Key Share": "keysh",
    "For Share": "sh",
    "For No Key Update": "fornokeyupd",
    "For Update": "forupd",
    "No Key Update": "nokeyupd",
    "Update": "upd",
}


@dataclass(frozen=True)
class Truth:
    """One reading of what PostgreSQL holds, from its own views."""

    held: frozenset  # (pid, job, multixact mode or None)
    waiting: dict  # pid -> frozenset of pg_blocking_pids
    queued: dict  # pid -> (job or None, granted) for a tuple lock on the queue table
    idle: frozenset  # pids idle in a transaction
    locks: Counter  # (pid, locktype, mode, granted, relation, page, tuple)
    # held rows in a finished state that nobody is queued on: a FOR UPDATE claimer whose
    # snapshot still saw them ready locked them in passing (PostgreSQL keeps that lock) and
    # moved on. Index mode reads only the active states' rows (and rows queued on), so it
    # cannot see these without reading the finished rows; scan mode does.
    finished: frozenset = frozenset()


def read_truth(conn: psycopg.Connection, skip: set[int]) -> Truth:
    """pgrowlocks for the rows (a full read of the table, as the monitor must not), and
    pg_locks / pg_blocking_pids / pg_stat_activity for the rest; `skip`: our own sessions."""
    held = set()
    rows = conn.execute(f"SELECT locked_row, multi, modes, pids FROM pgrowlocks('{JOBS}')")
    locked = rows.fetchall()
    tids = [r[0] for r in locked]
    found = conn.execute(
        f"SELECT ctid::text, id, status FROM {JOBS} WHERE ctid = ANY (%s::tid[])", (tids,)
    ).fetchall()
    jobs = {tid: job for tid, job, _ in found}
    done = {job for _, job, status in found if status not in ACTIVE}
    for tid, multi, modes, pids in locked:
        for mode, pid in zip(modes, pids, strict=True):
            if pid:  # a member that ended reads pid 0: it holds nothing now
                held.add((pid, jobs.get(str(tid)), MODES[mode] if multi else None))
    # waiting: a lock not granted (pg_stat_activity may still say so for a moment after
    # the lock was granted, until the process runs again)
    waiting = {
        pid: frozenset(by)
        for pid, by in conn.execute(
            "SELECT pid, pg_blocking_pids(pid) FROM "
            "(SELECT DISTINCT pid FROM pg_locks WHERE NOT granted AND pid <> ALL (%s)) AS w",
            (list(skip),),
        ).fetchall()
    }
    queued = {}
    for pid, page, tup, granted in conn.execute(
        "SELECT pid, page, tuple, granted FROM pg_locks "
        "WHERE locktype = 'tuple' AND relation = %s::regclass",
        (JOBS,),
    ).fetchall():
        job = conn.execute(
            f"SELECT id FROM {JOBS} WHERE ctid = %s::tid", (f"({page},{tup})",)
        ).fetchone()
        queued[pid] = (job[0] if job else None, granted)
    idle = frozenset(
        r[0]
        for r in conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE state LIKE 'idle in transaction%%' "
            "AND pid <> ALL (%s)",
            (list(skip),),
        ).fetchall()
    )
    locks = Counter(
        tuple(r)
        for r in conn.execute(
            "SELECT pid, locktype, mode, granted, relation::regclass::text, page, tuple "
            "FROM pg_locks WHERE pid <> ALL (%s) AND NOT (locktype = 'virtualxid' AND granted) "
            "AND (database IS NULL OR database = "
            "(SELECT oid FROM pg_database WHERE datname = current_database()))",
            (list(skip),),
        ).fetchall()
    )
    queued_on = {job for job, _ in queued.values()}
    finished = frozenset(h for h in held if h[1] in done and h[1] not in queued_on)
    return Truth(frozenset(held), waiting, queued, idle, locks, finished)


def compare(
    snap: Snapshot, truth: Truth, *, carried: bool = False, index_mode: bool = False
) -> list[str]:
    """Every way the snapshot differs from the truth of the same moment. `carried`: the
    holders of rows nobody is queued on come from an earlier pass over the table (scan
    mode between two passes): each must still be true, newer ones may be missing.
    `index_mode`: the finished rows held in passing (Truth.finished) are out of its reach
    unless it saw a session queued on one before: each it shows must be true, the others
    may be missing (the oracle counts the samples that had some)."""
    out: list[str] = []
    shown = {
        (h.pid, job, h.mode)
        for h in snap.row_lock_holders
        for job in h.job_ids  # each holder of these scenes holds fewer than 5 rows
    }
    rows = Counter()
    for h in snap.row_lock_holders:
        rows[(h.pid, h.mode)] += h.rows
    want = Counter((pid, mode) for pid, _, mode in truth.held)
    # what must be shown: all of it, but for the finished rows index mode cannot reach
    must = truth.held - truth.finished if index_mode else truth.held
    if carried:  # (a carried plain holding may have become a multixact's since: no mode)
        pairs, true_pairs = {(p, j) for p, j, _ in shown}, {(p, j) for p, j, _ in truth.held}
        if not pairs <= true_pairs:
            out.append(f"holders not held: {sorted(pairs - true_pairs, key=str)}")
        per_pid, true_per_pid = Counter(), Counter()
        for (pid, _), n in rows.items():
            per_pid[pid] += n
        for (pid, _), n in want.items():
            true_per_pid[pid] += n
        if any(n > true_per_pid[pid] for pid, n in per_pid.items()):
            out.append(f"rows held: queuetop {dict(per_pid)} more than truth {dict(true_per_pid)}")
    elif must != truth.held:  # each shown must be true, the finished ones may be missing
        if not must <= shown <= truth.held:
            out.append(
                f"holders: queuetop {sorted(shown, key=str)} truth {sorted(truth.held, key=str)}"
                f" (of which finished, held in passing: {sorted(truth.finished, key=str)})"
            )
        least = Counter((pid, mode) for pid, _, mode in must)
        if any(not least[k] <= rows[k] <= want[k] for k in set(rows) | set(want)):
            out.append(
                f"rows held: queuetop {dict(rows)} truth {dict(want)}, at least {dict(least)}"
            )
    else:
        if shown != truth.held:
            out.append(
                f"holders: queuetop {sorted(shown, key=str)} truth {sorted(truth.held, key=str)}"
            )
        if rows != want:
            out.append(f"rows held: queuetop {dict(rows)} truth {dict(want)}")
    waiting = {w.pid: w for w in snap.waiting}
    if set(waiting) != set(truth.waiting):
        odd = set(waiting) ^ set(truth.waiting)
        seen = [(lk.pid, lk.locktype, lk.mode, lk.granted) for lk in snap.locks if lk.pid in odd]
        out.append(
            f"waiters: queuetop {sorted(waiting)} truth {sorted(truth.waiting)} "
            f"(blocked by {[truth.waiting.get(p) for p in odd]}; queuetop's locks of them {seen})"
        )
    graph = truth.waiting
    for pid, w in waiting.items():
        if frozenset(w.blocked_by) != graph.get(pid):
            out.append(f"{pid} blocked by {w.blocked_by}, truth {sorted(graph.get(pid, ()))}")
        chain = w.chain
        if chain[-1] != pid or any(
            a not in graph.get(b, ()) for a, b in zip(chain, chain[1:], strict=False)
        ):
            out.append(f"{pid} chain {chain} is no path of pg_blocking_pids {graph}")
        job, granted = truth.queued.get(pid, (None, False))
        if (w.job_id, w.first_in_line) != (job, granted):
            out.append(
                f"{pid} queued for {w.job_id} first={w.first_in_line}, truth {job} {granted}"
            )
        if job is not None:
            holders = {p for p, j, _ in truth.held if j == job}
            if set(w.row_holders) != holders:
                out.append(f"{pid} queued for job {job} held by {w.row_holders}, truth {holders}")
    idle = {i.pid: i for i in snap.idle_in_transaction}
    if set(idle) != truth.idle:
        out.append(f"idle: queuetop {sorted(idle)} truth {sorted(truth.idle)}")
    for pid, i in idle.items():
        jobs = sorted({j for p, j, _ in truth.held if p == pid})
        least = sorted({j for p, j, _ in must if p == pid})
        if carried or least != jobs:
            wrong = not set(i.job_ids) <= set(jobs) or (
                not carried and len(jobs) <= 5 and not set(least) <= set(i.job_ids)
            )
        else:
            wrong = list(i.job_ids) != jobs[:5]
        if wrong:
            out.append(f"idle {pid} holds {i.job_ids}, truth {jobs}")
    locks = Counter(
        (lk.pid, lk.locktype, lk.mode, lk.granted, lk.relation, lk.page, lk.tuple_index)
        for lk in snap.locks
    )
    if locks != truth.locks:
        out.append(f"locks: only queuetop {locks - truth.locks}, only truth {truth.locks - locks}")
    for lk in snap.locks:  # a place in a row's queue never reads as a row lock held
        if lk.is_row_queue and (
            lock_state(lk) == "yes" or not lock_target(lk).startswith("queued for")
        ):
            out.append(f"{lk.pid}'s tuple lock reads {lock_state(lk)} {lock_target(lk)}")
    return out


def in_cycle(pid: int, graph: dict) -> bool:
    """Whether `pid` waits, through others, on itself (a deadlock the server will break)."""
    seen, todo = set(), list(graph.get(pid, ()))
    while todo:
        p = todo.pop()
        if p == pid:
            return True
        if p not in seen:
            seen.add(p)
            todo.extend(graph.get(p, ()))
    return False
