"""Dead-letter to a table (one statement) or to a state, and the audit sinks."""

from __future__ import annotations

import json
import threading
from dataclasses import replace

import psycopg
import pytest
from demo_queue import audit_rows, claim, expire, finish, job, setup_demo

from dashboard import db, monitor
from dashboard.actions import FileAudit, TableAudit, choose_sink, dead_letter, observe_jobs
from dashboard.errors import UserError
from dashboard.models import DeadLetter


@pytest.mark.matrix
def test_move_to_dead_table_keeps_every_column_and_records_why(demo):
    spec, worker, action = demo
    job_id, token = claim(worker, "worker-1")
    expire(worker, job_id)
    seen, _ = observe_jobs(action, spec, [str(job_id), "2"])
    result = dead_letter(action, spec, seen, audit=TableAudit(), reason="poison payload")
    assert sorted(result.changed) == sorted([str(job_id), "2"]) and not result.skipped
    assert job(worker, job_id) is None
    dead = worker.execute(
        "SELECT id, status, worker, lease_token, attempts, payload, "
        "dead_reason, dead_by FROM queuetop_demo.jobs_dead WHERE id = %s",
        (job_id,),
    ).fetchone()
    assert dead[:6] == (job_id, "running", "worker-1", token, 1, f"job {job_id}")
    assert dead[6] == "poison payload" and dead[7].startswith("postgres")
    rows = audit_rows(worker)
    assert {r["target"] for r in rows} == {str(job_id), "2"}
    assert all(r["to_state"] == "table:queuetop_demo.jobs_dead" for r in rows)
    with db.connect_monitor(spec_dsn(worker)) as mon:  # the dead role reads the dead table
        snap = monitor.collect(mon, spec)
    assert (snap.counts["dead"], snap.counts["ready"], snap.counts["running"]) == (2, 1, 0)
    assert "dead" not in snap.estimated


def spec_dsn(conn: psycopg.Connection) -> str:
    return conn.info.dsn


@pytest.mark.matrix
def test_dead_letter_needs_a_reason_and_skips_a_live_lease(demo):
    spec, worker, action = demo
    job_id, _ = claim(worker, "worker-1")
    seen, _ = observe_jobs(action, spec, [str(job_id)])
    with pytest.raises(UserError, match="--reason"):
        dead_letter(action, spec, seen, audit=TableAudit(), reason=" ")
    result = dead_letter(action, spec, seen, audit=TableAudit(), reason="x")
    assert [s.reason for s in result.skipped] == ["lease not expired (use --force)"]
    assert dead_letter(action, spec, seen, audit=TableAudit(), reason="x", force=True).changed


@pytest.mark.matrix
def test_dead_letter_to_a_state_writes_last_error_and_fences(demo):
    spec, worker, action = demo
    spec = replace(spec, policy=replace(spec.policy, dead_letter=DeadLetter("status", "dead")))
    job_id, token = claim(worker, "worker-1")
    expire(worker, job_id)
    seen, _ = observe_jobs(action, spec, [str(job_id)])
    assert dead_letter(action, spec, seen, audit=TableAudit(), reason="too many tries").changed
    after = job(worker, job_id)
    assert (after["status"], after["last_error"]) == ("dead", "too many tries")
    assert after["lease_token"] == token + 1
    assert not finish(worker, job_id, token)  # the zombie cannot resurrect it
    again = dead_letter(action, spec, seen, audit=TableAudit(), reason="again")
    assert [s.reason for s in again.skipped] == ["already dead-lettered"]


def test_dead_letter_under_concurrent_load_conserves_rows(dsn):
    spec = setup_demo(dsn, jobs=300)
    stop = threading.Event()
    errors: list[BaseException] = []

    def work(name: str) -> None:
        try:
            with psycopg.connect(dsn, autocommit=True, application_name=name) as conn:
                while not stop.is_set():
                    got = claim(conn, name)
                    if got is None:
                        conn.execute(
                            "UPDATE queuetop_demo.jobs SET status = 'ready' "
                            "WHERE id IN (SELECT id FROM queuetop_demo.jobs "
                            "WHERE status = 'done' LIMIT 5)"
                        )
                        continue
                    finish(conn, *got)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(f"w{i}",)) for i in range(3)]
    for t in threads:
        t.start()
    moved = 0
    try:
        with db.connect_action(dsn) as action:
            for start in range(1, 301, 20):
                seen, _ = observe_jobs(action, spec, [str(i) for i in range(start, start + 20)])
                result = dead_letter(
                    action, spec, seen, audit=TableAudit(), reason="load", force=True
                )
                moved += len(result.changed)
    finally:
        stop.set()
        for t in threads:
            t.join(10)
    assert not errors
    with psycopg.connect(dsn) as conn:
        live, dead, both = conn.execute(
            "SELECT (SELECT count(*) FROM queuetop_demo.jobs), "
            "(SELECT count(*) FROM queuetop_demo.jobs_dead), "
            "(SELECT count(*) FROM queuetop_demo.jobs j JOIN queuetop_demo.jobs_dead d USING (id))"
        ).fetchone()
        changed = conn.execute(
            "SELECT count(*) FROM queuetop.audit_log WHERE outcome = 'changed'"
        ).fetchone()[0]
    assert moved > 0 and (live + dead, dead, both, changed) == (300, moved, 0, moved)


def test_file_sink_writes_ahead_then_the_outcome(demo, tmp_path):
    spec, worker, action = demo
    job_id, _ = claim(worker, "worker-1")
    expire(worker, job_id)
    path = tmp_path / "audit.jsonl"
    seen, _ = observe_jobs(action, spec, [str(job_id)])
    assert dead_letter(action, spec, seen, audit=FileAudit(path), reason="r").changed
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["outcome"] for line in lines] == ["pending", "committed"]
    assert lines[0]["target"] == str(job_id) and lines[0]["action"] == "dead-letter"
    assert lines[0]["action_id"] == lines[1]["action_id"] and lines[0]["db_user"] == "postgres"


@pytest.mark.matrix
def test_without_an_audit_table_actions_refuse_unless_a_file_is_given(dsn, tmp_path):
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert isinstance(choose_sink(conn, tmp_path / "a.jsonl"), FileAudit)
        with pytest.raises(UserError, match="init-audit.*--audit-file"):
            choose_sink(conn, None)
    with pytest.raises(UserError, match="--audit-file"):
        FileAudit(tmp_path / "no" / "such" / "dir.jsonl")
