"""Retry from the dead-letter table: one statement moves a job back as ready, guarded on what
the operator saw, token advanced, audited; a moved job reads `already dead-lettered`."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from demo_queue import audit_rows, claim, expire, job

from dashboard.actions import TableAudit, dead_letter, observe_jobs, requeue
from dashboard.actions.dead_letters import ALREADY_BACK, CHANGED, observe_dead, retry_dead
from dashboard.cli import main
from dashboard.errors import UserError
from dashboard.models import Policy

# every server of the matrix (tests/servers.py)
pytestmark = pytest.mark.matrix


def _moved(spec, worker, action, reason="poison payload") -> tuple[int, int]:
    """A claimed job whose worker died, dead-lettered into queuetop_demo.jobs_dead."""
    job_id, token = claim(worker, "worker-1")
    expire(worker, job_id)
    seen, _ = observe_jobs(action, spec, [str(job_id)])
    assert dead_letter(action, spec, seen, audit=TableAudit(), reason=reason).changed
    return job_id, token


def test_retry_moves_the_row_back_as_ready_with_its_token_advanced(demo):
    spec, worker, action = demo
    job_id, token = _moved(spec, worker, action)
    seen, missing = observe_dead(action, spec, [str(job_id), "777"])
    assert [s.id for s in seen] == [str(job_id)] and [(m.id, m.reason) for m in missing] == [
        ("777", "not found")
    ]
    result = retry_dead(action, spec, seen, audit=TableAudit(), reason="fixed the parser")
    assert result.changed == (str(job_id),) and not result.skipped
    assert result.detail["new_lease_tokens"] == {str(job_id): str(token + 1)}
    back = job(worker, job_id)
    assert (
        back["status"],
        back["worker"],
        back["leased_until"],
        back["lease_token"],
        back["attempts"],
    ) == ("ready", None, None, token + 1, 1)
    assert worker.execute("SELECT count(*) FROM queuetop_demo.jobs_dead").fetchone()[0] == 0
    payload = worker.execute(
        "SELECT payload FROM queuetop_demo.jobs WHERE id = %s", (job_id,)
    ).fetchone()[0]
    assert payload == f"job {job_id}"  # every column came back
    rows = [r for r in audit_rows(worker) if r["action"] == "retry-dead"]
    assert [(r["target"], r["outcome"], r["to_state"], r["reason"]) for r in rows] == [
        (str(job_id), "changed", "ready", "fixed the parser")
    ]
    assert rows[0]["from_state"]["table"] == "queuetop_demo.jobs_dead"
    # the same observation again: it is back in the queue already
    again = retry_dead(action, spec, seen, audit=TableAudit())
    assert [(s.id, s.reason) for s in again.skipped] == [(str(job_id), ALREADY_BACK)]


def test_retry_skips_a_row_that_changed_and_a_dry_run_changes_nothing(demo):
    spec, worker, action = demo
    job_id, _ = _moved(spec, worker, action)
    seen, _ = observe_dead(action, spec, [str(job_id)])
    dry = retry_dead(action, spec, seen, audit=TableAudit(), dry_run=True)
    assert dry.changed == (str(job_id),) and dry.dry_run
    assert job(worker, job_id) is None and audit_rows(worker)[-1]["action"] == "dead-letter"
    stale = [replace(seen[0], lease_token="0")]  # not what the dead table holds
    result = retry_dead(action, spec, stale, audit=TableAudit())
    assert [(s.id, s.reason) for s in result.skipped] == [(str(job_id), CHANGED)]
    assert job(worker, job_id) is None


def test_an_id_taken_in_the_queue_is_not_overwritten(demo):
    spec, worker, action = demo
    job_id, _ = _moved(spec, worker, action)
    seen, _ = observe_dead(action, spec, [str(job_id)])
    worker.execute("INSERT INTO queuetop_demo.jobs (id, payload) VALUES (%s, 'new')", (job_id,))
    result = retry_dead(action, spec, seen, audit=TableAudit())
    assert [(s.id, s.reason) for s in result.skipped] == [(str(job_id), ALREADY_BACK)]
    assert worker.execute("SELECT count(*) FROM queuetop_demo.jobs_dead").fetchone()[0] == 1


def test_acting_on_a_moved_job_says_already_dead_lettered(demo):
    spec, worker, action = demo
    job_id, _ = _moved(spec, worker, action)
    seen, missing = observe_jobs(action, spec, [str(job_id), "999"])
    assert seen == [] and [(m.id, m.reason) for m in missing] == [
        (str(job_id), "already dead-lettered"),
        ("999", "not found"),
    ]
    # observed before the move, acted on after it
    other, _ = claim(worker, "worker-2")
    expire(worker, other)
    before, _ = observe_jobs(action, spec, [str(other)])
    _moved_again = dead_letter(action, spec, before, audit=TableAudit(), reason="r")
    assert _moved_again.changed == (str(other),)
    late = requeue(action, spec, before, audit=TableAudit())
    assert [(s.id, s.reason) for s in late.skipped] == [(str(other), "already dead-lettered")]


def test_retry_needs_a_dead_letter_table(demo):
    spec, _, action = demo
    status_spec = replace(spec, policy=replace(Policy(), dead_letter=None))
    with pytest.raises(UserError, match="nothing to retry from"):
        observe_dead(action, status_spec, ["1"])


def test_retry_dead_command(dsn, demo, capsys):
    spec, worker, action = demo
    job_id, _ = _moved(spec, worker, action)
    code = main(["retry-dead", str(job_id), "4242", "--json", "--dsn", dsn])
    out = capsys.readouterr().out
    assert code == 1
    assert json.loads(out) == {
        "action": "retry-dead",
        "dry_run": False,
        "changed": [job_id],
        "skipped": [{"id": 4242, "reason": "not found"}],
    }
    assert job(worker, job_id)["status"] == "ready"
    code = main(["requeue", str(job_id), "--dsn", dsn])
    assert code == 1 and "already ready" in capsys.readouterr().out
