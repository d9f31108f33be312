"""The action commands end to end: JSON, exit codes, one-line errors, read-only."""

from __future__ import annotations

import json

import psycopg
import pytest
from demo_queue import claim, expire, job
from helpers.cli import run_main

from dashboard.cli import main
from dashboard.observed.records import typed_id


def test_requeue_json_exit_0_then_1_when_skipped(dsn, demo, capsys):
    _, worker, _ = demo
    job_id, _ = claim(worker, "worker-1")
    expire(worker, job_id)
    code, out, _ = run_main(
        capsys, "requeue", str(job_id), "--reason", "dead worker", "--json", "--dsn", dsn
    )
    assert code == 0
    assert json.loads(out) == {
        "action": "requeue",
        "dry_run": False,
        "changed": [job_id],
        "skipped": [],
    }
    code, out, _ = run_main(capsys, "requeue", str(job_id), "42", "--json", "--dsn", dsn)
    assert code == 1
    assert json.loads(out)["skipped"] == [
        {"id": 42, "reason": "not found"},
        {"id": job_id, "reason": "already ready"},
    ]


def test_dry_run_text_output_changes_nothing(dsn, demo, capsys):
    _, worker, _ = demo
    job_id, _ = claim(worker, "worker-1")
    code, out, _ = run_main(
        capsys, "dead-letter", str(job_id), "--reason", "r", "--force", "--dry-run", "--dsn", dsn
    )
    assert code == 0 and out.startswith("would be dead-lettered: 1 job(s)")
    assert job(worker, job_id)["status"] == "running"


def test_errors_are_one_line_with_exit_2(dsn, demo, capsys, tmp_path):
    code, out, err = run_main(capsys, "requeue", "abc", "--dsn", dsn)
    assert code == 2 and err.count("\n") == 1 and "bad job id" in err and "bigint" in err
    code, _, err = run_main(capsys, "requeue", "1", "--read-only", "--dsn", dsn)
    assert code == 2 and "read-only mode: requeue is disabled" in err
    with pytest.raises(SystemExit) as exit_info:
        main(["dead-letter", "1", "--dsn", dsn])  # --reason is required
    assert exit_info.value.code == 2 and "--reason" in capsys.readouterr().err
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE queuetop.audit_log")
    code, _, err = run_main(capsys, "requeue", "1", "--dsn", dsn)
    assert code == 2 and "queuetop init-audit" in err and "--audit-file" in err
    code, out, err = run_main(
        capsys,
        "requeue",
        "1",
        "--json",
        "--dsn",
        dsn,
        "--audit-file",
        str(tmp_path / "audit.jsonl"),
    )
    assert code == 1 and json.loads(out)["skipped"] == [{"id": 1, "reason": "already ready"}]


def test_cancel_and_terminate_by_pid(dsn, connect, demo, capsys):
    idle = connect(application_name="forgetful")
    idle.execute("SELECT 1")
    pid = idle.info.backend_pid
    code, out, _ = run_main(
        capsys,
        "terminate",
        str(pid),
        "--backend-start",
        "2001-01-01 00:00:00+00",
        "--json",
        "--dsn",
        dsn,
    )
    assert code == 1 and json.loads(out)["skipped"] == [
        {"id": pid, "reason": "pid reused: backend start differs"}
    ]
    code, out, _ = run_main(capsys, "terminate", str(pid), "--dsn", dsn)
    assert code == 0 and out.strip() == f"terminated: 1 session(s) ({pid})"
    code, out, _ = run_main(capsys, "cancel", "999999", "--json", "--dsn", dsn)
    assert code == 1 and json.loads(out)["skipped"] == [{"id": 999999, "reason": "session gone"}]
    code, _, err = run_main(
        capsys, "cancel", str(pid), "--backend-start", "yesterday", "--dsn", dsn
    )
    assert code == 2 and "bad --backend-start" in err


def test_a_job_id_has_one_json_type_in_snapshot_and_action_output(dsn, demo, capsys):
    _, worker, _ = demo
    job_id, _ = claim(worker, "worker-1")
    expire(worker, job_id)
    code, out, _ = run_main(capsys, "snapshot", "--json", "--dsn", dsn)
    assert code == 0
    [lease] = json.loads(out)["stale_leases"]
    code, out, _ = run_main(capsys, "requeue", str(job_id), "--json", "--dsn", dsn, "--dry-run")
    [changed] = json.loads(out)["changed"]
    assert changed == lease["id"] == job_id and type(changed) is type(lease["id"]) is int
    code, out, _ = run_main(
        capsys, "dead-letter", str(job_id), "--reason", "r", "--json", "--dsn", dsn
    )
    assert json.loads(out)["changed"] == [job_id]


def test_only_integer_id_columns_give_numbers():
    assert typed_id("42", "bigint") == 42 and typed_id("-7", "smallint") == -7
    # text ids stay text, leading zeros and all; uuids and numerics as PostgreSQL prints them
    assert typed_id("0042", "text") == "0042"
    assert typed_id("42", "numeric(10,0)") == "42"
    uid = "7b6e1c1e-2f1e-4a34-9d7e-1b9a8a5d2c11"
    assert typed_id(uid, "uuid") == uid
