"""`queuetop check`: exit 0 under every threshold, 1 over any, 2 on error (one line)."""

from __future__ import annotations

import json

import psycopg
import pytest
from demo_queue import setup_demo
from export_stage import StagedQueue
from test_cli_errors import assert_one_line_error, run_cli

from dashboard.cli import main

# On the staged queue: 2 stale leases, oldest ready 6 minutes, 1 session waiting on a lock,
# 2 idle in a transaction (ages a second or so). Each flag alone: (flag, value, exit code).
CASES = [
    ("--max-stale", "1", 1),
    ("--max-stale", "2", 0),
    ("--max-oldest-ready", "5m", 1),
    ("--max-oldest-ready", "10 minutes", 0),
    ("--max-waiting", "0", 1),
    ("--max-waiting", "1", 0),
    ("--max-idle-tx", "0", 1),
    ("--max-idle-tx", "1h", 0),
]


def check(capsys, dsn: str, *flags: str) -> tuple[int, str]:
    code = main(["check", "--dsn", dsn, *flags])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out


@pytest.mark.matrix
def test_each_threshold_over_and_under(dsn, connect, background, capsys):
    staged = StagedQueue(dsn, connect, background)
    try:
        for flag, value, expected in CASES:
            code, out = check(capsys, dsn, flag, value)
            assert code == expected, (flag, value, out)
            line = out.strip()
            assert len(line.splitlines()) == 1 and flag in line
            assert line.startswith("OVER" if expected else "ok"), line
        code, out = check(capsys, dsn, "--max-stale", "5", "--max-waiting", "0")
        assert code == 1  # one over is enough
        assert out.splitlines()[0].startswith("OVER") and "--max-waiting" in out.splitlines()[0]
        assert "stale leases: 2 <= max 5" in out
    finally:
        staged.release()


def test_a_quiet_queue_is_under_every_threshold_at_zero(dsn, capsys):
    setup_demo(dsn)
    code, out = check(
        capsys,
        dsn,
        "--max-stale",
        "0",
        "--max-oldest-ready",
        "0",
        "--max-waiting",
        "0",
        "--max-idle-tx",
        "0",
    )
    assert code == 0, out
    assert len(out.splitlines()) == 4 and all(x.startswith("ok") for x in out.splitlines())


@pytest.mark.matrix
def test_json(dsn, connect, background, capsys):
    staged = StagedQueue(dsn, connect, background)
    try:
        code, out = check(capsys, dsn, "--max-stale", "0", "--max-waiting", "3", "--json")
    finally:
        staged.release()
    doc = json.loads(out)
    assert code == 1 and doc["status"] == "over" and doc["queue"] == "queuetop_demo.jobs"
    assert doc["checks"] == [
        {"check": "stale_leases", "value": 2, "max": 0, "over": True},
        {"check": "waiting_sessions", "value": 1, "max": 3, "over": False},
    ]


def test_no_threshold_is_an_error(tmp_path):
    result = run_cli("check", env_home=str(tmp_path))
    assert_one_line_error(result, "no threshold given", "--max-stale")
    assert not (tmp_path / "pgdata").exists()  # refused before starting anything


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--max-stale", "-1"),
        ("--max-waiting", "two"),
        ("--max-oldest-ready", "soon"),
        ("--max-idle-tx", "-5s"),
    ],
)
def test_bad_threshold_is_one_line_and_exit_2(flag, value, tmp_path):
    result = run_cli("check", f"{flag}={value}", env_home=str(tmp_path))
    assert_one_line_error(result, f"argument {flag}: expected", repr(value))


def test_a_threshold_the_spec_cannot_measure_is_unknown_never_ok(dsn, tmp_path):
    # --table alone on a table without time or lease columns (none to find)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE bare_jobs (id serial PRIMARY KEY, status text)")
        conn.execute("INSERT INTO bare_jobs (status) VALUES ('pending'), ('running')")
    for flag, value, why in (
        ("--max-oldest-ready", "5m", "no created_at column"),
        ("--max-stale", "0", "no lease_until or started_at"),
    ):
        result = run_cli(
            "check", "--dsn", dsn, "--table", "bare_jobs", flag, value, env_home=str(tmp_path)
        )
        assert (result.returncode, result.stderr) == (3, ""), result  # UNKNOWN
        lines = result.stdout.strip().splitlines()
        assert any(line.startswith(f"UNKNOWN  {flag}:") and why in line for line in lines)
        assert not any(line.startswith("ok") for line in lines if flag in line)


def test_unreachable_database_is_exit_2(tmp_path):
    result = run_cli(
        "check",
        "--dsn",
        "host=127.0.0.1 port=1 connect_timeout=1",
        "--max-stale",
        "0",
        env_home=str(tmp_path),
    )
    assert_one_line_error(result, "cannot connect")
