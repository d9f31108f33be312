"""Guarded requeue against a real server: stale leases, races, zombies, locks, audit."""

from __future__ import annotations

import time

import pytest
from demo_queue import audit_rows, claim, expire, finish, job

from dashboard import db
from dashboard.actions import ObservedJob, TableAudit, observe_jobs, requeue
from dashboard.errors import UserError

# every server of the matrix (tests/servers.py)
pytestmark = pytest.mark.matrix


def _look(action, spec, *ids):
    observed, missing = observe_jobs(action, spec, [str(i) for i in ids])
    assert not missing
    return observed


def test_requeue_stale_lease_clears_lease_keeps_attempts_advances_token(demo):
    spec, worker, action = demo
    job_id, token = claim(worker, "worker-1")
    expire(worker, job_id)
    result = requeue(
        action, spec, _look(action, spec, job_id), audit=TableAudit(), reason="worker died"
    )
    assert result.changed == (str(job_id),) and result.skipped == ()
    after = job(worker, job_id)
    assert after["status"] == "ready" and after["worker"] is None
    assert after["leased_until"] is None and after["attempts"] == 1
    assert after["lease_token"] == token + 1
    [row] = audit_rows(worker)
    assert (row["action"], row["target"], row["outcome"]) == ("requeue", str(job_id), "changed")
    assert row["from_state"]["worker"] == "worker-1" and row["to_state"] == "ready"
    assert row["reason"] == "worker died" and row["db_user"] and row["os_user"]


def test_live_lease_is_skipped_unless_forced(demo):
    spec, worker, action = demo
    job_id, _ = claim(worker, "worker-1")
    seen = _look(action, spec, job_id)
    result = requeue(action, spec, seen, audit=TableAudit())
    assert [(s.id, s.reason) for s in result.skipped] == [
        (str(job_id), "lease not expired (use --force)")
    ]
    assert job(worker, job_id)["status"] == "running"
    assert requeue(action, spec, seen, audit=TableAudit(), force=True).changed == (str(job_id),)
    assert job(worker, job_id)["status"] == "ready"


def test_race_worker_completes_between_look_and_requeue(demo):
    spec, worker, action = demo
    job_id, token = claim(worker, "worker-1")
    expire(worker, job_id)
    seen = _look(action, spec, job_id)
    assert finish(worker, job_id, token)  # the slow worker was alive after all
    result = requeue(action, spec, seen, audit=TableAudit())
    assert result.changed == ()
    assert [(s.id, s.reason) for s in result.skipped] == [(str(job_id), "completed meanwhile")]
    assert job(worker, job_id)["status"] == "done"
    assert [r["outcome"] for r in audit_rows(worker)] == ["skipped"]


def test_zombie_completion_after_requeue_changes_nothing(demo, connect):
    spec, worker, action = demo
    job_id, old_token = claim(worker, "worker-1")
    expire(worker, job_id)
    assert requeue(action, spec, _look(action, spec, job_id), audit=TableAudit()).changed
    assert not finish(worker, job_id, old_token, status="failed")  # the zombie wakes up
    assert job(worker, job_id)["status"] == "ready"
    other = connect(autocommit=True, application_name="worker-2")
    new_id, new_token = claim(other, "worker-2")
    assert new_id == job_id and new_token > old_token + 1
    assert not finish(worker, job_id, old_token)
    assert finish(other, job_id, new_token)
    assert job(worker, job_id)["status"] == "done"


def test_owner_changed_and_lease_renewed(demo, connect):
    spec, worker, action = demo
    a, _ = claim(worker, "worker-1")
    b, _ = claim(worker, "worker-1")
    expire(worker, a)
    expire(worker, b)
    seen = _look(action, spec, a, b)
    # a: requeued by someone else and claimed again by worker-2; b: its worker renews the lease
    requeue(action, spec, [o for o in seen if o.id == str(a)], audit=TableAudit())
    other = connect(autocommit=True, application_name="worker-2")
    assert claim(other, "worker-2")[0] == a
    worker.execute(
        "UPDATE queuetop_demo.jobs SET leased_until = now() + interval '1 minute' WHERE id = %s",
        (b,),
    )
    result = requeue(action, spec, seen, audit=TableAudit())
    assert {s.id: s.reason for s in result.skipped} == {
        str(a): "owner changed",
        str(b): "lease renewed",
    }
    assert job(worker, a)["worker"] == "worker-2" and job(worker, b)["status"] == "running"


def test_row_locked_by_a_worker_is_skipped_without_waiting(demo, connect):
    spec, worker, action = demo
    job_id, _ = claim(worker, "worker-1")
    expire(worker, job_id)
    seen = _look(action, spec, job_id)
    busy = connect(application_name="worker-1")
    busy.execute("SELECT 1 FROM queuetop_demo.jobs WHERE id = %s FOR UPDATE", (job_id,))
    started = time.monotonic()
    result = requeue(action, spec, seen, audit=TableAudit())
    assert time.monotonic() - started < 1.0  # skipped, not queued behind the worker
    assert [(s.id, s.reason) for s in result.skipped] == [(str(job_id), "locked")]
    busy.rollback()


def test_not_found_bad_id_and_not_running(demo):
    spec, worker, action = demo
    observed, missing = observe_jobs(action, spec, ["1", "999"])
    assert [o.id for o in observed] == ["1"] and [(s.id, s.reason) for s in missing] == [
        ("999", "not found")
    ]
    result = requeue(action, spec, observed, audit=TableAudit())
    assert [(s.id, s.reason) for s in result.skipped] == [("1", "already ready")]
    gone = requeue(action, spec, [ObservedJob("999", "running", "w", "1")], audit=TableAudit())
    assert [(s.id, s.reason) for s in gone.skipped] == [("999", "not found")]
    with pytest.raises(UserError, match="bad job id.*bigint"):
        observe_jobs(action, spec, ["abc"])


def test_dry_run_changes_nothing_and_writes_no_audit(demo):
    spec, worker, action = demo
    job_id, token = claim(worker, "worker-1")
    expire(worker, job_id)
    result = requeue(action, spec, _look(action, spec, job_id), audit=TableAudit(), dry_run=True)
    assert result.dry_run and result.changed == (str(job_id),)
    after = job(worker, job_id)
    assert after["status"] == "running" and after["lease_token"] == token
    assert audit_rows(worker) == []


def test_requeue_from_a_stale_lease_of_the_snapshot(demo, dsn):
    from dashboard import monitor

    spec, worker, action = demo
    job_id, _ = claim(worker, "worker-1")
    expire(worker, job_id)
    with db.connect_monitor(dsn) as mon:
        snap = monitor.collect(mon, spec)
    picked = [ObservedJob.from_stale(s) for s in snap.stale_leases]
    assert requeue(action, spec, picked, audit=TableAudit()).changed == (str(job_id),)
