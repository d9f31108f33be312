"""`queuetop audit`: the latest actions from queuetop.audit_log or an --audit-file, newest
first, a file's pending records joined with their outcome line; reads only."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from demo_queue import claim, expire
from helpers.cli import run_main
from test_actions_permissions import watcher  # noqa: F401 - a fixture

from dashboard import db
from dashboard.audit.trail import read_file, read_table
from dashboard.cli import main
from dashboard.cli.audit_command import parse_since
from dashboard.errors import UserError
from dashboard.setup import schema


def stale_job(worker) -> int:
    job_id, _ = claim(worker, "worker-1")
    expire(worker, job_id)
    return job_id


def test_audit_lists_the_table_newest_first_with_skips_and_their_reasons(dsn, demo, capsys):
    _, worker, _ = demo
    job_id = stale_job(worker)
    assert main(["requeue", str(job_id), "--reason", "worker died", "--dsn", dsn]) == 0
    assert main(["requeue", str(job_id), "--dsn", dsn]) == 1  # already ready: skipped
    capsys.readouterr()
    code, out, _ = run_main(capsys, "audit", "--json", "--dsn", dsn)
    assert code == 0
    doc = json.loads(out)
    assert doc["source"] == "queuetop.audit_log" and doc["unreadable_lines"] == 0
    newest, oldest = doc["records"]
    assert (newest["action"], newest["target"], newest["outcome"], newest["skip_reason"]) == (
        "requeue",
        str(job_id),
        "skipped",
        "already ready",
    )
    assert (oldest["outcome"], oldest["reason"], oldest["to_state"]) == (
        "changed",
        "worker died",
        "ready",
    )
    assert oldest["from_state"]["status"] == "running"
    assert datetime.fromisoformat(oldest["at"]).tzinfo is not None

    code, out, _ = run_main(capsys, "audit", "--dsn", dsn)
    lines = out.splitlines()
    assert lines[0] == "2 latest record(s) of queuetop.audit_log, newest first"
    assert lines[1].split() == [
        "at",
        "action",
        "target",
        "from",
        "->",
        "to",
        "outcome",
        "reason",
        "who",
    ]
    assert "skipped: already ready" in lines[2] and "running -> ready" in lines[3]
    assert "worker died" in lines[3]

    _, out, _ = run_main(capsys, "audit", "--json", "--limit", "1", "--dsn", dsn)
    assert [r["outcome"] for r in json.loads(out)["records"]] == ["skipped"]
    _, out, _ = run_main(capsys, "audit", "--json", "--since", "1h", "--dsn", dsn)
    assert len(json.loads(out)["records"]) == 2
    tomorrow = (datetime.now(timezone.utc) + timedelta(days=1)).isoformat()
    code, out, _ = run_main(capsys, "audit", "--since", tomorrow, "--dsn", dsn)
    assert code == 0 and out.strip() == "no audited action in queuetop.audit_log"


def test_a_file_joins_pending_records_with_their_outcome(dsn, demo, capsys, tmp_path):
    _, worker, _ = demo
    audit_file = tmp_path / "audit.jsonl"
    job_id = stale_job(worker)
    assert (
        main(
            [
                "requeue",
                str(job_id),
                "--reason",
                "r1",
                "--dsn",
                dsn,
                "--audit-file",
                str(audit_file),
            ]
        )
        == 0
    )
    # a crash between the write-ahead record and the commit, then a cut last line
    now = datetime.now(timezone.utc)
    with audit_file.open("a") as f:
        f.write(
            json.dumps(
                {
                    "action_id": "a-lost",
                    "at": now.isoformat(),
                    "action": "requeue",
                    "target": "777",
                    "outcome": "pending",
                    "reason": "r2",
                }
            )
            + "\n"
        )
        f.write(
            json.dumps(
                {
                    "action_id": "a-back",
                    "at": now.isoformat(),
                    "action": "dead-letter",
                    "target": "778",
                    "outcome": "pending",
                    "reason": "r3",
                }
            )
            + "\n"
        )
        f.write(
            json.dumps({"action_id": "a-back", "at": now.isoformat(), "outcome": "rolled back"})
            + "\n"
        )
        f.write('{"action_id": "a-cut", "at": "20')
    capsys.readouterr()
    code, out, _ = run_main(capsys, "audit", "--json", "--audit-file", str(audit_file))
    assert code == 0
    doc = json.loads(out)
    assert doc["source"] == str(audit_file) and doc["unreadable_lines"] == 1
    assert [(r["target"], r["outcome"]) for r in doc["records"]] == [
        ("778", "rolled back"),
        ("777", "no outcome"),
        (str(job_id), "changed"),
    ]
    code, out, _ = run_main(capsys, "audit", "--audit-file", str(audit_file))
    assert "1 line(s) of" in out.splitlines()[-1] and "not audit records" in out


def test_a_long_file_is_read_from_its_end(tmp_path):
    path = tmp_path / "audit.jsonl"
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    with path.open("w") as f:
        for i in range(5000):  # more than one block of 64 KiB
            at = (start + timedelta(seconds=i)).isoformat()
            f.write(
                json.dumps(
                    {
                        "action_id": f"a{i}",
                        "at": at,
                        "action": "requeue",
                        "target": str(i),
                        "outcome": "pending",
                        "reason": "x" * 40,
                    }
                )
                + "\n"
            )
            f.write(json.dumps({"action_id": f"a{i}", "at": at, "outcome": "committed"}) + "\n")
    page = read_file(path, limit=3)
    assert [r.target for r in page.records] == ["4999", "4998", "4997"]
    assert all(r.outcome == "changed" for r in page.records)
    since = read_file(path, since=start + timedelta(seconds=4990), limit=100)
    assert [r.target for r in since.records] == [str(i) for i in range(4999, 4989, -1)]


def test_without_the_table_or_the_grant_one_line_says_what_to_do(
    dsn,
    demo,
    capsys,
    tmp_path,
    watcher,  # noqa: F811 - the fixture imported above
):
    with db.connect_admin(dsn) as conn:
        conn.execute("DROP TABLE queuetop.audit_log")
        conn.commit()
        code, out, err = run_main(capsys, "audit", "--dsn", dsn)
        assert code == 2 and out == "" and err.count("\n") == 1
        assert "no audit table queuetop.audit_log" in err and "--audit-file" in err
        schema.init_audit(conn)
    code, _, err = run_main(capsys, "audit", "--dsn", watcher)
    assert code == 2 and err.count("\n") == 1 and "may not read queuetop.audit_log" in err
    assert (
        "GRANT USAGE ON SCHEMA queuetop TO " in err and "GRANT SELECT ON queuetop.audit_log" in err
    )
    code, _, err = run_main(capsys, "audit", "--audit-file", str(tmp_path / "nope.jsonl"))
    assert code == 2 and "no audit file" in err
    code, _, err = run_main(capsys, "audit", "--since", "yesterday", "--dsn", dsn)
    assert code == 2 and "bad --since 'yesterday'" in err


def test_the_table_is_read_on_a_read_only_connection(dsn, demo):
    with db.connect_monitor(dsn) as conn:  # autocommit, read-only, statement timeout
        assert conn.execute("SHOW default_transaction_read_only").fetchone()[0] == "on"
        assert read_table(conn).records == ()


def test_since_takes_a_duration_or_a_timestamp_with_its_zone():
    now = datetime(2026, 1, 15, 12, 0, tzinfo=timezone.utc)
    assert parse_since("2h", now) == now - timedelta(hours=2)
    assert parse_since("30 minutes", now) == now - timedelta(minutes=30)
    assert parse_since("2026-01-15 09:00:00+01", now) == datetime(
        2026, 1, 15, 8, 0, tzinfo=timezone.utc
    )
    with pytest.raises(UserError):
        parse_since("2026-01-15 09:00:00", now)  # which zone? refused, not guessed


def _hostile_lines(now: datetime) -> list[str]:
    """Lines an audit file may hold that no action wrote: each must be skipped and counted."""
    at = now.isoformat()
    base = {"action_id": "h", "at": at, "action": "requeue", "target": "1", "outcome": "changed"}
    return [
        "[" * 200_000 + "]" * 200_000,  # nested past any recursion limit
        json.dumps({**base, "reason": {"an": "object"}}),
        json.dumps({**base, "target": ["a", "list"]}),
        json.dumps({**base, "at": 12345}),
        json.dumps({**base, "detail": "not an object"}),
        json.dumps(
            {
                **base,
                "detail": {
                    "x": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]
                },
            }
        ),
        json.dumps({**base, "action_id": True}),
        json.dumps(["a", "list"]),
    ]


def test_hostile_lines_are_skipped_and_counted_never_a_crash(capsys, tmp_path):
    audit_file = tmp_path / "audit.jsonl"
    now = datetime.now(timezone.utc)
    # an action while it records (a recording keeps none from before it started)
    during = (now + timedelta(seconds=30)).isoformat()
    good = {"action_id": "g", "at": during, "action": "requeue", "target": "42",
            "outcome": "changed", "reason": "fine"}  # fmt: skip
    hostile = _hostile_lines(now)
    audit_file.write_text("\n".join([json.dumps(good), *hostile]) + "\n")
    code, out, err = run_main(capsys, "audit", "--json", "--audit-file", str(audit_file))
    assert code == 0, err
    doc = json.loads(out)
    assert [r["target"] for r in doc["records"]] == ["42"]
    assert doc["unreadable_lines"] == len(hostile)
    code, out, err = run_main(capsys, "audit", "--audit-file", str(audit_file))
    assert code == 0 and f"{len(hostile)} line(s) of" in out and "Traceback" not in err


def test_record_goes_on_past_hostile_audit_lines(dsn, demo, tmp_path):
    import subprocess
    import sys

    from dashboard.recorder import Recording

    audit_file = tmp_path / "audit.jsonl"
    now = datetime.now(timezone.utc)
    # an action while it records (a recording keeps none from before it started)
    during = (now + timedelta(seconds=30)).isoformat()
    good = {"action_id": "g", "at": during, "action": "requeue", "target": "42",
            "outcome": "changed", "reason": "fine"}  # fmt: skip
    audit_file.write_text("\n".join([*_hostile_lines(now), json.dumps(good)]) + "\n")
    out = tmp_path / "r.qtr"
    done = subprocess.run(
        [sys.executable, "-m", "dashboard", "record", "--dsn", dsn, "--out", str(out),
         "--frames", "3", "--interval", "0.2", "--audit-file", str(audit_file)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    recording = Recording(out)
    b = recording.bounds()
    assert b.frames == 3
    assert [r.target for r in recording.audit()] == ["42"]
    recording.close()
