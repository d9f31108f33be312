"""Which jobs a session holds row-locked, and which job a waiter waits for."""

from __future__ import annotations

import pytest
from demo_queue import setup_demo
from helpers import is_waiting_on_lock, wait_until

from dashboard import db, monitor

# every server of the matrix (tests/servers.py)
pytestmark = pytest.mark.matrix


def test_holders_and_waiters_name_their_jobs(dsn, connect, background):
    spec = setup_demo(dsn, jobs=4)
    holder = connect(application_name="holder")
    held = [
        r[0]
        for r in holder.execute(
            "SELECT id FROM queuetop_demo.jobs WHERE id IN (1, 2) FOR UPDATE"
        ).fetchall()
    ]
    waiter = connect(application_name="waiter")
    job = background(
        lambda: waiter.execute(
            "SELECT id FROM queuetop_demo.jobs WHERE id = 2 FOR UPDATE"
        ).fetchall()
    )
    with db.connect_monitor(dsn) as mon:
        wait_until(lambda: is_waiting_on_lock(mon, waiter.info.backend_pid))
        snap = monitor.collect(mon, spec)
    assert sorted(held) == [1, 2]
    assert snap.held_jobs[holder.info.backend_pid] == (1, 2)
    [hold] = [h for h in snap.row_lock_holders if h.pid == holder.info.backend_pid]
    assert hold.job_ids == (1, 2) and hold.rows == 2
    [wait] = [w for w in snap.waiting if w.pid == waiter.info.backend_pid]
    assert wait.job_id == 2 and wait.first_in_line  # the row it is queued on: its tuple lock
    queued = [lk for lk in snap.locks if lk.is_row_queue]
    assert [(lk.pid, lk.job_id) for lk in queued] == [(waiter.info.backend_pid, 2)]
    holder.rollback()
    job.join()
