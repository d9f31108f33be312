"""The snapshot against the three seed schemas, with real concurrent sessions."""

from __future__ import annotations

import time

import pytest

from dashboard import config, db, monitor
from tests import seeds
from tests.helpers import is_waiting_on_lock, wait_until

READY = 5


@pytest.fixture(params=seeds.SEEDS, ids=lambda s: s.preset)
def seeded(request, dsn, connect):
    """A seed schema with READY ready rows and one stale lease: (seed, spec, monitor conn)."""
    seed: seeds.Seed = request.param
    setup = connect(autocommit=True)
    seeds.create(setup, seed)
    seeds.fill_ready(setup, seed, READY)
    setup.execute(seed.insert_stale)
    mon = db.connect_monitor(dsn, timeout_ms=2000)
    spec = config.validate(mon, config.load_preset(seed.preset))
    yield seed, spec, mon
    mon.close()


@pytest.mark.matrix
def test_locked_ready_rows_are_counted_and_attributed(seeded, connect):
    seed, spec, mon = seeded
    holder = connect(application_name="holder-a")
    locked_ids = holder.execute(seed.ready_rows + " FOR UPDATE").fetchall()
    assert len(locked_ids) == READY

    claimer = connect(application_name="claimer-b")
    with claimer.transaction():
        skipped = claimer.execute(seed.ready_rows + " LIMIT 1 FOR UPDATE SKIP LOCKED").fetchall()
    assert skipped == []  # SKIP LOCKED says "empty"...

    snap = monitor.collect(mon, spec)
    assert snap.queue == seed.table
    assert snap.counts["ready"] == READY  # ...but the ordinary count tells the truth
    assert snap.by_status[seed.ready_value] == READY
    assert snap.locked["ready"] == READY
    assert [(h.pid, h.role, h.rows) for h in snap.row_lock_holders] == [
        (holder.info.backend_pid, "ready", READY)
    ]
    holder.rollback()
    assert monitor.collect(mon, spec).locked["ready"] == 0


@pytest.mark.matrix
def test_plain_for_update_waiter_is_listed_with_its_blocker(seeded, connect, background):
    seed, spec, mon = seeded
    holder = connect(application_name="holder-a")
    holder.execute(seed.ready_rows + " FOR UPDATE")
    waiter = connect(application_name="waiter-b")
    waiter_pid = waiter.info.backend_pid
    job = background(lambda: waiter.execute(seed.ready_rows + " LIMIT 1 FOR UPDATE").fetchall())
    wait_until(lambda: is_waiting_on_lock(mon, waiter_pid))

    snap = monitor.collect(mon, spec)
    waits = {w.pid: w for w in snap.waiting}
    assert waiter_pid in waits
    assert waits[waiter_pid].blocked_by == (holder.info.backend_pid,)
    assert waits[waiter_pid].chain == (holder.info.backend_pid, waiter_pid)
    assert "FOR UPDATE" in waits[waiter_pid].query
    assert holder.info.backend_pid in {b.pid for b in snap.blockers}
    assert any(lk.pid == waiter_pid and not lk.granted for lk in snap.locks)
    assert any(lk.on_queue_table and lk.pid == holder.info.backend_pid for lk in snap.locks)

    holder.rollback()
    assert len(job.join()) == 1
    waiter.rollback()


def test_idle_transaction_appears_with_its_age(seeded, connect):
    seed, spec, mon = seeded
    idle = connect(application_name="idle-c")
    idle.execute(seed.ready_rows + " LIMIT 1 FOR UPDATE")
    time.sleep(1.2)
    snap = monitor.collect(mon, spec)
    found = {i.pid: i for i in snap.idle_in_transaction}
    entry = found[idle.info.backend_pid]
    assert entry.application_name == "idle-c"
    assert entry.xact_age_s >= 1.0
    assert entry.idle_s >= 1.0
    assert entry.locks_held >= 2  # the relation lock and its own transaction id
    # the same count as the locks view lists for it (its virtualxid is in neither)
    assert entry.locks_held == sum(lk.pid == entry.pid for lk in snap.locks)
    assert entry.xmin_age is not None and entry.xmin_age >= 0


@pytest.mark.matrix
def test_stale_lease_is_reported_with_worker_and_token(seeded):
    seed, spec, mon = seeded
    snap = monitor.collect(mon, spec)
    assert len(snap.stale_leases) == 1
    lease = snap.stale_leases[0]
    assert lease.worker == "w-dead"
    assert lease.worker_alive is False  # no session is named w-dead
    assert lease.overdue_s > 0
    if spec.columns.lease_token:
        assert lease.lease_token == 7
    else:
        assert lease.lease_token is None
    assert snap.counts["running"] == 1


def test_live_worker_session_is_recognised(seeded, connect):
    seed, spec, mon = seeded
    connect(autocommit=True, application_name="w-dead")  # the "dead" worker is in fact alive
    lease = monitor.collect(mon, spec).stale_leases[0]
    assert lease.worker_alive is True
