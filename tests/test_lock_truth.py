"""Issue 18's lock truth, each item against real sessions and PostgreSQL's own views:
a waiter is never read as a holder (1), rows held by a multixact have their holders and a
waiter that moved on is holder and waiter at once (2), the locks tab puts what matters
first (5), job ids keep one type in JSON and idle entries name their jobs (8), and the
database's deadlocks are counted (10)."""

from __future__ import annotations

import json

import psycopg
import pytest
from demo_queue import setup_demo
from helpers import is_waiting_on_lock, wait_until

from dashboard import db, monitor
from dashboard.cli import main
from dashboard.metrics.families import snapshot_families
from dashboard.render.who_holds import held_rows
from dashboard.ui.widgets.tables import LocksTable

JOBS = "queuetop_demo.jobs"
CLAIM = f"SELECT id FROM {JOBS} WHERE status = 'ready' ORDER BY id LIMIT 1 FOR UPDATE"


def rowlocks(conn: psycopg.Connection) -> dict[int, set[int]]:
    """Ground truth: job id -> the pids holding its row (pgrowlocks, running members)."""
    conn.execute("CREATE EXTENSION IF NOT EXISTS pgrowlocks")
    out: dict[int, set[int]] = {}
    for tid, pids in conn.execute(f"SELECT locked_row, pids FROM pgrowlocks('{JOBS}')").fetchall():
        job = conn.execute(f"SELECT id FROM {JOBS} WHERE ctid = %s", (tid,)).fetchone()[0]
        out[job] = {p for p in pids if p}
    return out


def blocking(conn: psycopg.Connection, pid: int) -> list[int]:
    return conn.execute("SELECT pg_blocking_pids(%s)", (pid,)).fetchone()[0]


@pytest.fixture
def pile_up(dsn, connect, background):
    """A holder of job 1 (FOR UPDATE), a waiter first in line for it, one behind it."""
    setup_demo(dsn, jobs=4)
    holder = connect(application_name="holder")
    holder.execute(CLAIM)
    first, second = connect(application_name="first"), connect(application_name="second")
    jobs = []
    for c in (first, second):  # one after the other: first in line, then behind it
        jobs.append(background(lambda c=c: c.execute(CLAIM).fetchall()))
        wait_until(lambda c=c: is_waiting_on_lock(holder, c.info.backend_pid))
    yield holder, first, second
    holder.rollback()
    for c, job in zip((first, second), jobs, strict=True):
        job.join()
        c.rollback()


def test_a_waiter_reads_as_queued_never_as_a_holder(dsn, pile_up, capsys):
    """Item 1: `snapshot` printed `<waiter pid>  FOR UPDATE  yes  row lock  job 1`."""
    holder, first, second = pile_up
    assert rowlocks(holder) == {1: {holder.info.backend_pid}}  # the truth: one holder
    assert main(["snapshot", "--dsn", dsn, "--preset", "demo"]) == 0
    out = capsys.readouterr().out
    locks = out[out.index("locks (") :].splitlines()
    for waiter in (first, second):
        pid = str(waiter.info.backend_pid)
        lines = [line.split() for line in locks if line.split()[:1] == [pid]]
        assert not any("yes" in cells and "UPDATE" in cells for cells in lines), lines
        assert any("queued for job 1" in " ".join(cells) for cells in lines), lines
    assert main(["snapshot", "--dsn", dsn, "--preset", "demo", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    holders = {h["pid"] for h in data["row_lock_holders"]}
    assert holders == {holder.info.backend_pid}  # waiters hold nothing
    waits = {w["pid"]: w for w in data["waiting"]}
    assert waits[first.info.backend_pid]["first_in_line"] is True
    assert waits[second.info.backend_pid]["first_in_line"] is False
    assert {w["job_id"] for w in waits.values()} == {1}
    assert waits[first.info.backend_pid]["row_holders"] == [holder.info.backend_pid]


def test_a_waiter_behind_rows_held_for_share_is_no_holder(dsn, connect, background):
    """Items 1 and 2: two sessions share job 2 (its xmax is a multixact); a third waits."""
    spec = setup_demo(dsn, jobs=3)
    sharers = [connect(application_name=f"sharer-{i}") for i in (1, 2)]
    for s in sharers:
        s.execute(f"SELECT id FROM {JOBS} WHERE id = 2 FOR SHARE")
    waiter = connect(application_name="waiter")
    job = background(
        lambda: waiter.execute(f"SELECT id FROM {JOBS} WHERE id = 2 FOR UPDATE").fetchall()
    )
    wait_until(lambda: is_waiting_on_lock(sharers[0], waiter.info.backend_pid))
    pids = {s.info.backend_pid for s in sharers}
    with db.connect_monitor(dsn) as mon:
        snap = monitor.collect(mon, spec)
        assert rowlocks(sharers[0]) == {2: pids}  # the truth, read in the same frozen scene
        blocked_by = blocking(sharers[0], waiter.info.backend_pid)
    held = {(h.pid, h.mode): h.job_ids for h in snap.row_lock_holders}
    assert held == {(pid, "sh"): (2,) for pid in pids}  # main: no holder at all
    assert snap.locked["ready"] == 1  # one row, however many hold it
    [wait] = snap.waiting
    assert (wait.pid, wait.job_id, set(wait.row_holders)) == (waiter.info.backend_pid, 2, pids)
    assert list(wait.blocked_by) == blocked_by
    for s in sharers:
        s.rollback()
    job.join()


def test_a_waiter_that_moved_on_is_holder_and_waiter(dsn, connect, background):
    """Item 2: the holder of job 1 finishes it; a waiter locks job 1's new version (and
    keeps that lock), moves on to job 2, held by another: it waits while it holds. The
    other waiter queued on job 1 now waits for the first.

    Which waiter moves on is PostgreSQL's race, not ours: the first in line drops its tuple
    lock on the old version before it locks the new one, and the second can get there
    first (CI saw it once). The roles are read from pg_blocking_pids, then checked."""
    spec = setup_demo(dsn, jobs=4)
    h1, h2 = connect(application_name="h1"), connect(application_name="h2")
    h1.execute(CLAIM)  # job 1
    w1, w2 = connect(application_name="w1"), connect(application_name="w2")
    jobs = []
    for c in (w1, w2):
        jobs.append(background(lambda c=c: c.execute(CLAIM).fetchall()))
        wait_until(lambda c=c: is_waiting_on_lock(h1, c.info.backend_pid))
    holder = h2.info.backend_pid
    pids = (w1.info.backend_pid, w2.info.backend_pid)

    def roles() -> tuple[int, int] | None:
        """(the waiter that moved on to job 2, the one queued behind it), once settled."""
        by = {pid: blocking(h2, pid) for pid in pids}
        for a, b in (pids, pids[::-1]):
            if by[a] == [holder] and by[b] == [a]:
                return a, b
        return None

    with db.connect_monitor(dsn) as mon:
        watching = monitor.Monitor(spec, 1.0)  # the dashboard: it sees w1 queued on job 1
        watching.poll(mon)
        h2.execute(f"SELECT id FROM {JOBS} WHERE id = 2 FOR UPDATE")
        h1.execute(f"UPDATE {JOBS} SET status = 'done' WHERE id = 1")
        h1.commit()
        # a guard against a hang (30 s: a loaded 2-core CI took over 10 s to get there)
        a, b = wait_until(roles, 30)
        truth = rowlocks(h2)
        snap = watching.poll(mon)
        fresh = monitor.collect(mon, spec)  # a first look (`snapshot`) sees it too: b waits
    assert truth == {1: {a}, 2: {holder}}
    for s in (snap, fresh):
        waits = {w.pid: w for w in s.waiting}
        assert (waits[a].job_id, waits[a].blocked_by) == (2, (holder,))
        assert s.held_jobs[a] == (1,)  # and holds the done job 1
        assert (waits[b].job_id, waits[b].blocked_by, waits[b].row_holders) == (1, (a,), (a,))
        assert waits[b].chain == (holder, a, b)
    h2.rollback()  # a gets job 2; once it ends, b moves on past job 1 as well
    first = 0 if a == pids[0] else 1
    jobs[first].join()
    (w1, w2)[first].rollback()
    jobs[1 - first].join()
    (w1, w2)[1 - first].rollback()


def test_a_waiter_that_moved_on_alone_still_reads_as_holder(dsn, connect, background):
    """Item 2, with nobody queued behind: the finished job 1 the waiter keeps locked is
    found again by id, as long as its transaction is the one seen queued on it."""
    spec = setup_demo(dsn, jobs=4)
    h1, h2, w1 = (connect(application_name=n) for n in ("h1", "h2", "w1"))
    h1.execute(CLAIM)
    job = background(lambda: w1.execute(CLAIM).fetchall())
    wait_until(lambda: is_waiting_on_lock(h1, w1.info.backend_pid))
    with db.connect_monitor(dsn) as mon:
        watching = monitor.Monitor(spec, 1.0)
        assert [w.job_id for w in watching.poll(mon).waiting] == [1]
        h2.execute(f"SELECT id FROM {JOBS} WHERE id = 2 FOR UPDATE")
        h1.execute(f"UPDATE {JOBS} SET status = 'done' WHERE id = 1")
        h1.commit()
        wait_until(lambda: blocking(h2, w1.info.backend_pid) == [h2.info.backend_pid])
        truth = rowlocks(h2)
        snap = watching.poll(mon)
    assert truth == {1: {w1.info.backend_pid}, 2: {h2.info.backend_pid}}
    [wait] = snap.waiting
    assert (wait.pid, wait.job_id) == (w1.info.backend_pid, 2)
    assert snap.held_jobs == {w1.info.backend_pid: (1,), h2.info.backend_pid: (2,)}
    h2.rollback()
    job.join()
    w1.rollback()


def test_the_locks_tab_puts_what_matters_first(dsn, pile_up):
    """Item 5: 26 lines for 4 workers, mostly RowShare/RowExclusive table locks."""
    holder, first, second = pile_up
    spec = setup_demo(dsn)
    with db.connect_monitor(dsn) as mon:
        snap = monitor.collect(mon, spec)
    table = LocksTable()
    table.update_from(snap)
    lines = [
        dict(zip([c.key for c in table.COLUMNS], table.row_texts(i), strict=True))
        for i in range(table.row_count)
    ]
    kinds = [line["type"] for line in lines]
    # the row locks held, then the waits, then the places in the row's queue
    assert kinds[0] == "row locks" and lines[0]["pid"].strip() == str(holder.info.backend_pid)
    waits = [i for i, line in enumerate(lines) if line["granted"].strip() == "WAIT"]
    assert waits == list(range(1, 1 + len(waits))) and len(waits) == 2
    # ordinary table locks: one line per session, after everything else
    folded = [line for line in lines if line["type"] == "table locks"]
    assert sorted(int(line["pid"]) for line in folded) == sorted(
        c.info.backend_pid for c in (holder, first, second)
    )
    assert all(kinds[i] == "table locks" for i in range(len(lines) - len(folded), len(lines)))
    assert not any(
        line["mode"].strip() in ("RowShare", "RowExclusive") and line["type"] == "relation"
        for line in lines
    )
    ordinary = sum(
        lk.granted and lk.mode in ("AccessShareLock", "RowShareLock", "RowExclusiveLock")
        for lk in snap.locks
    )
    assert sum(int(line["n"]) for line in folded) >= ordinary  # all of them, counted
    table.folded = False  # the key `f` shows them all
    table.update_from(snap)
    assert table.row_count >= len(lines) - len(folded) + ordinary


def test_json_ids_keep_the_id_columns_type_and_idle_entries_name_their_jobs(dsn, pile_up, capsys):
    """Item 8: row_lock_holders[].job_ids were strings; idle entries had no job ids."""
    holder, first, _ = pile_up
    assert main(["snapshot", "--dsn", dsn, "--preset", "demo", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    [held] = data["row_lock_holders"]
    assert held["job_ids"] == [1]
    assert data["held_jobs"] == {str(holder.info.backend_pid): [1]}
    assert {w["job_id"] for w in data["waiting"]} == {1}
    queued = [lk for lk in data["locks"] if lk["locktype"] == "tuple"]
    assert queued and all(lk["job_id"] == 1 for lk in queued)
    [idle] = [i for i in data["idle_in_transaction"] if i["pid"] == holder.info.backend_pid]
    assert (idle["job_ids"], idle["rows_held"]) == ([1], 1)
    assert all(isinstance(s["id"], int) for s in data["stale_leases"])


def test_deadlocks_are_counted_from_the_server(dsn, connect, background):
    """Item 10: two transactions lock two rows in opposite order; the server breaks the
    cycle (40P01) and counts it; the snapshot, its JSON and the exporter carry it."""
    spec = setup_demo(dsn, jobs=2)
    a, b = connect(application_name="a"), connect(application_name="b")
    with db.connect_monitor(dsn) as mon:
        watching = monitor.Monitor(spec, 1.0)
        before = watching.poll(mon)
        a.execute(f"SELECT id FROM {JOBS} WHERE id = 1 FOR UPDATE")
        b.execute(f"SELECT id FROM {JOBS} WHERE id = 2 FOR UPDATE")
        job = background(
            lambda: a.execute(f"SELECT id FROM {JOBS} WHERE id = 2 FOR UPDATE").fetchall()
        )
        wait_until(lambda: is_waiting_on_lock(mon, a.info.backend_pid))
        victims = []
        try:  # the server breaks the cycle: one of the two is the victim
            b.execute(f"SELECT id FROM {JOBS} WHERE id = 1 FOR UPDATE")
        except psycopg.errors.DeadlockDetected:
            victims.append("b")
        b.rollback()
        try:
            job.join()
        except psycopg.errors.DeadlockDetected:
            victims.append("a")
        a.rollback()
        assert len(victims) == 1
        wait_until(lambda: watching.poll(mon).deadlocks_total == before.deadlocks_total + 1)
        after = watching.poll(mon)
    assert before.deadlocks_per_s is None  # no earlier count to compare with
    assert after.deadlocks_per_s is not None and after.deadlocks_per_s >= 0
    truth = (
        connect(autocommit=True)
        .execute("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
        .fetchone()[0]
    )
    assert after.deadlocks_total == truth
    names = {m.name: m for m in snapshot_families(after, spec)}
    assert names["queuetop_deadlocks"].samples[0].value == truth
    assert "queuetop_deadlocks_per_second" in names


def test_held_rows_of_a_snapshot_name_the_mode_of_a_multixact_member(dsn, connect):
    spec = setup_demo(dsn, jobs=2)
    a, b = connect(), connect()
    for s in (a, b):
        s.execute(f"SELECT id FROM {JOBS} WHERE id = 1 FOR KEY SHARE")
    with db.connect_monitor(dsn) as mon:
        snap = monitor.collect(mon, spec)
    rows = held_rows(snap)
    assert {pid: (h.mode, h.job_ids) for pid, h in rows.items()} == {
        a.info.backend_pid: ("keysh", (1,)),
        b.info.backend_pid: ("keysh", (1,)),
    }
    assert "FOR KEY SHARE" in rows[a.info.backend_pid].describe()


def test_a_held_claim_that_passed_over_finished_rows_says_so(dsn, connect, background):
    """Issue 32: a held FOR UPDATE claim showed one worker holding three rows, unexplained.
    A claim queued on a row whose holder finishes it locks the row's new version, finds it
    no longer ready, keeps that lock and takes the next row: pgrowlocks shows it holding
    both; the locks tab says which one it claimed and how many finished ones it holds."""
    spec = setup_demo(dsn, jobs=4)
    holder = connect(application_name="holder")
    holder.execute(CLAIM)
    waiter = connect(application_name="waiter")
    claim = background(lambda: waiter.execute(CLAIM).fetchall())
    wait_until(lambda: is_waiting_on_lock(holder, waiter.info.backend_pid))
    mon = db.connect_monitor(dsn)
    watching = monitor.Monitor(spec)
    watching.poll(mon)  # the dashboard polls on: it sees the waiter queued for job 1
    holder.execute(f"UPDATE {JOBS} SET status = 'done' WHERE id = 1")
    holder.commit()
    assert claim.join() == [(2,)]
    pid = waiter.info.backend_pid
    truth = connect(autocommit=True)
    held = {job for job, pids in rowlocks(truth).items() if pid in pids}
    status = dict(truth.execute(f"SELECT id, status FROM {JOBS} WHERE id = ANY(%s)", (list(held),)))
    finished = sorted(job for job in held if status[job] == "done")
    assert held == {1, 2} and finished == [1], (held, status)  # PostgreSQL's own account
    with mon:
        snap = watching.poll(mon)
    rows = held_rows(snap)[pid]
    assert (rows.rows, rows.passed_over, rows.active_ids) == (len(held), len(finished), (2,))
    assert rows.target(16) == "job 2 +1 finished"
    assert "passed over" in rows.describe()
    waiter.rollback()
