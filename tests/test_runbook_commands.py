"""Runbook commands: requeue --all-stale and dead-letter --state, selected by age, worker and
group, shown under --dry-run, acted on batch by batch (each its own transaction), guarded
row by row, one audit record per job."""

from __future__ import annotations

import json

from demo_queue import audit_rows, job
from helpers.cli import run_main


def _stale(conn, n: int, overdue_s: int, worker: str = "w-gone") -> list[int]:
    rows = conn.execute(
        "INSERT INTO queuetop_demo.jobs (status, worker, lease_token, attempts, started_at,"
        " leased_until) SELECT 'running', %s, 1, 1, now() - make_interval(secs => %s + 60),"
        " now() - make_interval(secs => %s) FROM generate_series(1, %s) RETURNING id",
        (worker, overdue_s, overdue_s, n),
    ).fetchall()
    return [r[0] for r in rows]


def _failed(conn, n: int, age_s: int) -> list[int]:
    rows = conn.execute(
        "INSERT INTO queuetop_demo.jobs (status, attempts, started_at, last_error) "
        "SELECT 'failed', 3, now() - make_interval(secs => %s), 'boom' "
        "FROM generate_series(1, %s) RETURNING id",
        (age_s, n),
    ).fetchall()
    return [r[0] for r in rows]


def test_requeue_all_stale_dry_run_then_in_batches(dsn, demo, capsys):
    _, setup, _ = demo
    live = setup.execute(
        "INSERT INTO queuetop_demo.jobs (status, worker, lease_token, started_at, leased_until) "
        "VALUES ('running', 'w-live', 1, now(), now() + interval '1 hour') RETURNING id"
    ).fetchone()[0]
    stale = _stale(setup, 5, 120)
    code, out, err = run_main(capsys, "requeue", "--all-stale", "--dry-run", "--json", "--dsn", dsn)
    assert code == 0 and json.loads(out)["changed"] == stale and json.loads(out)["dry_run"]
    assert {job(setup, i)["status"] for i in stale} == {"running"} and audit_rows(setup) == []

    code, out, err = run_main(
        capsys,
        "requeue",
        "--all-stale",
        "--batch-size",
        "2",
        "--reason",
        "night shift",
        "--dsn",
        dsn,
    )
    assert code == 0 and out.startswith("requeued: 5 job(s)")
    assert err.splitlines() == [
        "batch 1: changed 2, skipped 0",
        "batch 2: changed 2, skipped 0",
        "batch 3: changed 1, skipped 0",
    ]
    assert {job(setup, i)["status"] for i in stale} == {"ready"}
    assert job(setup, live)["status"] == "running"  # its lease has not run out
    rows = setup.execute(
        "SELECT target, outcome, reason, at FROM queuetop.audit_log ORDER BY audit_id"
    ).fetchall()
    assert [r[:3] for r in rows] == [(str(i), "changed", "night shift") for i in stale]
    assert len({r[3] for r in rows}) == 3  # now() of three transactions, one per batch


def test_requeue_selects_by_age_worker_and_limit(dsn, demo, capsys):
    _, setup, _ = demo
    recent = _stale(setup, 2, 60, worker="w-1")
    old_w1 = _stale(setup, 3, 3600, worker="w-1")
    old_w2 = _stale(setup, 2, 3600, worker="w-2")
    code, out, _ = run_main(
        capsys,
        "requeue",
        "--all-stale",
        "--older-than",
        "30m",
        "--worker",
        "w-1",
        "--dry-run",
        "--json",
        "--dsn",
        dsn,
    )
    assert code == 0 and json.loads(out)["changed"] == old_w1
    code, out, _ = run_main(
        capsys,
        "requeue",
        "--all-stale",
        "--older-than",
        "30m",
        "--limit",
        "3",
        "--batch-size",
        "2",
        "--json",
        "--dsn",
        dsn,
    )
    assert code == 0 and json.loads(out)["changed"] == (old_w1 + old_w2)[:3]
    assert {job(setup, i)["status"] for i in recent} == {"running"}


def test_dead_letter_failed_older_than_with_a_reason(dsn, demo, capsys):
    _, setup, _ = demo
    old = _failed(setup, 3, 7200)
    young = _failed(setup, 2, 60)
    code, out, _ = run_main(
        capsys,
        "dead-letter",
        "--state",
        "failed",
        "--older-than",
        "1h",
        "--reason",
        "gave up after the outage",
        "--dry-run",
        "--dsn",
        dsn,
    )
    assert code == 0 and out.startswith(
        "would be dead-lettered: 3 job(s) (" + ", ".join(map(str, old)) + ")"
    )
    code, out, _ = run_main(
        capsys,
        "dead-letter",
        "--state",
        "failed",
        "--older-than",
        "1h",
        "--reason",
        "gave up after the outage",
        "--json",
        "--dsn",
        dsn,
    )
    assert code == 0 and json.loads(out)["changed"] == old
    moved = [
        r[0] for r in setup.execute("SELECT id FROM queuetop_demo.jobs_dead ORDER BY id").fetchall()
    ]
    assert moved == old and {job(setup, i)["status"] for i in young} == {"failed"}
    assert [(r["target"], r["action"]) for r in audit_rows(setup)] == [
        (str(i), "dead-letter") for i in old
    ]


def test_a_row_a_worker_holds_is_skipped_not_waited_for(dsn, demo, capsys, connect):
    _, setup, _ = demo
    stale = _stale(setup, 3, 120)
    holder = connect(application_name="late-worker")
    holder.execute("SELECT 1 FROM queuetop_demo.jobs WHERE id = %s FOR UPDATE", (stale[1],))
    code, out, _ = run_main(capsys, "requeue", "--all-stale", "--json", "--dsn", dsn)
    holder.rollback()
    assert code == 1
    assert json.loads(out) == {
        "action": "requeue",
        "dry_run": False,
        "changed": [stale[0], stale[2]],
        "skipped": [{"id": stale[1], "reason": "locked"}],
    }


def test_nothing_matches_and_bad_selections_are_one_line(dsn, demo, capsys):
    code, out, err = run_main(capsys, "requeue", "--all-stale", "--dsn", dsn)
    assert code == 0 and out.startswith("requeued: 0 job(s)") and "no job matches" in err
    # a dry run says what would be, even of nothing; nothing changed writes no state line
    code, out, err = run_main(capsys, "requeue", "--all-stale", "--dry-run", "--dsn", dsn)
    assert code == 0 and out == "would be requeued: 0 job(s)\n" and "no job matches" in err
    code, out, err = run_main(capsys, "requeue", "987654", "--reason", "x", "--dsn", dsn)
    assert code == 1 and out == "requeued: 0 job(s)\nskipped: 1 (987654: not found)\n", out
    for argv, said in (
        (["requeue"], "give job ids, or select jobs"),
        (["requeue", "1", "--all-stale"], "not both"),
        (["requeue", "--older-than", "1h"], "add --all-stale or --state"),
        (["requeue", "--state", "faild"], "bad --state 'faild'"),
        (["requeue", "--state", "done"], "requeue does not apply to done jobs"),
        (["requeue", "--all-stale", "--older-than", "soon"], "bad --older-than 'soon'"),
    ):
        code, _, err = run_main(capsys, *argv, "--dsn", dsn)
        assert code == 2 and err.count("\n") == 1 and said in err, (argv, err)
