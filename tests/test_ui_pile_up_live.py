"""The main screen during a real for-update pile-up (the load generator's claim, its
transaction held), checked against PostgreSQL's own view, then as SVG snapshots at 80x24
and 120x40 of what the monitor read, with what varies between runs made fixed."""

from __future__ import annotations

import pytest
from pile_up_live import poll, stable, staged_pile_up
from test_lock_truth import rowlocks
from ui_snapshots import demo_spec

from dashboard.ui.app import QueuetopApp


@pytest.fixture
def pile_up_snapshot(dsn, connect, background):
    """The monitor's snapshot of the staged pile-up, and the truth read with the sessions
    still frozen in place: (snapshot, pids, row holders, each waiter's blocking pids)."""
    with staged_pile_up(dsn, connect, background) as (spec, pids):
        snap = poll(dsn, spec)
        with connect(autocommit=True) as truth:
            rows = rowlocks(truth)
            waiters = [
                pid
                for (pid,) in truth.execute(
                    "SELECT DISTINCT pid FROM pg_locks WHERE NOT granted ORDER BY pid"
                )
            ]
            blockers = {
                pid: set(truth.execute("SELECT pg_blocking_pids(%s)", (pid,)).fetchone()[0])
                for pid in waiters
            }
    return snap, pids, rows, blockers


def test_the_pile_up_read_is_the_one_postgresql_holds(pile_up_snapshot):
    snap, pids, rows, blockers = pile_up_snapshot
    holder, *queued = pids
    assert rows == {1: {holder}}  # pgrowlocks: one row held, by the holder alone
    assert sorted(blockers) == sorted(queued)
    assert {h.pid for h in snap.row_lock_holders} == {holder}
    assert snap.held_jobs.get(holder) == (1,)
    waits = {w.pid: w for w in snap.waiting}
    assert sorted(waits) == sorted(queued)
    for pid in queued:
        assert set(waits[pid].blocked_by) == blockers[pid], pid
        assert waits[pid].job_id == 1
    assert [waits[pid].first_in_line for pid in queued] == [True, False, False]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
@pytest.mark.parametrize("tab", ["1", "2"])
def test_live_pile_up_snapshot(snap_compare, pile_up_snapshot, size, tab):
    snap, pids, _, _ = pile_up_snapshot
    app = QueuetopApp(demo_spec(), None, poll=False, snapshots=[stable(snap, pids)])
    assert snap_compare(app, terminal_size=size, press=[tab])
