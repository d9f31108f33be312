"""Numeric flags out of range: one line naming the flag, exit 2, nothing written anywhere."""

from __future__ import annotations

import pytest
from test_cli_errors import assert_one_line_error, run_cli

from dashboard.cli import build_parser
from dashboard.cli.common import MAX_INTERVAL_S, MIN_INTERVAL_S
from dashboard.ui.app import INTERVALS

BAD_FLAGS = [
    # the refresh interval: 0 froze the dashboard, a negative one spun the CPU
    (["watch", "--interval", "-1"], "--interval"),
    (["watch", "--interval", "0"], "--interval"),
    (["watch", "--interval", "0.1"], "--interval"),
    (["watch", "--interval", "3601"], "--interval"),
    (["watch", "--interval", "nan"], "--interval"),
    (["demo", "--interval", "0"], "--interval"),
    (["demo", "--interval", "-1"], "--interval"),
    (["snapshot", "--interval", "inf"], "--interval"),
    (["requeue", "1", "--interval", "0"], "--interval"),
    (["dead-letter", "1", "--reason", "x", "--interval", "-2"], "--interval"),
    (["load", "--interval", "0"], "--interval"),
    # the load generator (the bad value is always the last word)
    (["demo", "--workers", "-1"], "--workers"),
    (["load", "--workers", "0"], "--workers"),
    (["load", "--workers", "65"], "--workers"),
    (["demo", "--workers", "10000"], "--workers"),
    (["load", "--workers", "two"], "--workers"),
    (["load", "--jobs", "0"], "--jobs"),
    (["load", "--duration", "0"], "--duration"),
    (["load", "--duration", "-5"], "--duration"),
    (["load", "--rate", "-1"], "--rate"),
    (["load", "--rate", "inf"], "--rate"),
    (["load", "--work-ms", "-1"], "--work-ms"),
    (["load", "--batch", "0"], "--batch"),
    (["load", "--fail-rate", "1.5"], "--fail-rate"),
    (["load", "--fail-rate", "-0.1"], "--fail-rate"),
    (["load", "--crash-rate", "2"], "--crash-rate"),
    (["load", "--lease", "0"], "--lease"),
    (["load", "--payload-bytes", "-1"], "--payload-bytes"),
    # backends
    (["cancel", "0"], "PID"),
    (["terminate", "-5"], "PID"),
]

BAD_DURATIONS = [
    ["snapshot", "--stale-after", "0"],
    ["watch", "--stale-after", "0 minutes"],
    ["requeue", "1", "--stale-after", "0s"],
    ["load", "--stale-after", "0"],
]


def queuetop_schemas(conn) -> int:
    return conn.execute(
        "SELECT count(*) FROM pg_namespace WHERE nspname IN ('queuetop', 'queuetop_demo')"
    ).fetchone()[0]


@pytest.mark.parametrize(("argv", "flag"), BAD_FLAGS, ids=[" ".join(a) for a, _ in BAD_FLAGS])
def test_out_of_range_flag_is_one_line_and_exit_2(argv, flag, dsn, connect, tmp_path):
    # demo and load create the demo schema first thing: with a bad flag they must not
    result = run_cli(*argv, "--dsn", dsn, env_home=str(tmp_path))
    assert_one_line_error(result, f"argument {flag}: expected", f"got {argv[-1]!r}")
    assert queuetop_schemas(connect(autocommit=True)) == 0
    assert not (tmp_path / "pgdata").exists()  # no embedded server started either


@pytest.mark.parametrize("argv", BAD_DURATIONS, ids=" ".join)
def test_zero_stale_after_is_one_line_and_exit_2(argv, dsn, connect, tmp_path):
    result = run_cli(*argv, "--dsn", dsn, env_home=str(tmp_path))
    assert_one_line_error(result, "bad --stale-after", "above zero")
    assert queuetop_schemas(connect(autocommit=True)) == 0


@pytest.mark.parametrize(
    "argv",
    [
        ["watch", "--interval", str(MIN_INTERVAL_S)],
        ["watch", "--interval", str(MAX_INTERVAL_S)],
        ["demo", "--interval", "0.5", "--workers", "0"],
        [
            "load",
            "--workers",
            "1",
            "--jobs",
            "1",
            "--duration",
            "0.5",
            "--rate",
            "0",
            "--work-ms",
            "0",
            "--batch",
            "1",
            "--fail-rate",
            "0",
            "--crash-rate",
            "1",
            "--lease",
            "0.1",
            "--payload-bytes",
            "0",
        ],
        ["cancel", "1"],
    ],
    ids=" ".join,
)
def test_sensible_edge_values_are_accepted(argv):
    build_parser().parse_args(argv)  # raises SystemExit on a refusal


def test_fastest_interval_is_the_dashboards_fastest_step():
    assert MIN_INTERVAL_S == INTERVALS[0]
    assert MAX_INTERVAL_S >= INTERVALS[-1]
