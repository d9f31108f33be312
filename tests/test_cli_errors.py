"""Bad input: one line on stderr that says what and what to do, exit 2, no traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests import seeds

pytestmark = pytest.mark.cli  # tier: see tests/conftest.py


def run_cli(*args: str, env_home: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL" and not k.startswith("PG")}
    env["QUEUETOP_HOME"] = env_home
    return subprocess.run(
        [sys.executable, "-m", "dashboard", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def assert_one_line_error(result: subprocess.CompletedProcess, *fragments: str) -> None:
    assert result.returncode == 2, result
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert result.stdout == ""
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture
def node_jobs_db(dsn, connect):
    seeds.create(connect(autocommit=True), seeds.NODE_JOBS)
    return dsn


def test_unparsable_dsn(tmp_path):
    result = run_cli("snapshot", "--dsn", "host=x port=", env_home=str(tmp_path))
    assert_one_line_error(result, "cannot connect", "--dsn")


def test_unreachable_server(tmp_path):
    result = run_cli(
        "snapshot", "--dsn", "postgresql://nobody@127.0.0.1:1/none", env_home=str(tmp_path)
    )
    assert_one_line_error(result, "cannot connect", "127.0.0.1")


def test_password_never_printed(tmp_path):
    result = run_cli(
        "snapshot", "--dsn", "postgresql://u:s3cret-pw@127.0.0.1:1/none", env_home=str(tmp_path)
    )
    assert_one_line_error(result, "cannot connect")
    assert "s3cret-pw" not in result.stderr


def test_missing_table_lists_what_exists(node_jobs_db, tmp_path):
    result = run_cli("snapshot", "--dsn", node_jobs_db, "--table", "fila", env_home=str(tmp_path))
    assert_one_line_error(result, "table fila not found", "public.jobs")


def test_missing_column_lists_columns(node_jobs_db, tmp_path):
    result = run_cli(
        "snapshot",
        "--dsn",
        node_jobs_db,
        "--preset",
        "node-jobs",
        "--status-column",
        "estado",
        env_home=str(tmp_path),
    )
    assert_one_line_error(result, "column 'estado' (status) not found", "worker_id")


def test_bad_toml(tmp_path):
    spec = tmp_path / "queue.toml"
    spec.write_text("[queue\ntable = 'jobs'\n")
    result = run_cli("snapshot", "--queue", str(spec), env_home=str(tmp_path))
    assert_one_line_error(result, "bad TOML", str(spec))


def test_unknown_key_in_spec(tmp_path):
    spec = tmp_path / "queue.toml"
    spec.write_text("[queue]\ntable = 'jobs'\nstatuz = 'x'\n")
    result = run_cli("snapshot", "--queue", str(spec), env_home=str(tmp_path))
    assert_one_line_error(result, "unknown key(s) statuz")


def test_missing_queue_file(tmp_path):
    result = run_cli("snapshot", "--queue", str(tmp_path / "nope.toml"), env_home=str(tmp_path))
    assert_one_line_error(result, "does not exist")


def test_unknown_preset(tmp_path):
    result = run_cli("snapshot", "--preset", "sidekiq", env_home=str(tmp_path))
    assert_one_line_error(result, "unknown preset 'sidekiq'", "node-jobs")


def test_unknown_flag(tmp_path):
    result = run_cli("snapshot", "--frobnicate", env_home=str(tmp_path))
    assert_one_line_error(result, "unrecognized arguments: --frobnicate")


def test_bad_duration(tmp_path):
    result = run_cli("snapshot", "--stale-after", "soon", env_home=str(tmp_path))
    assert_one_line_error(result, "bad --stale-after 'soon'")


def snapshot_warnings(db_dsn: str, home: str) -> tuple[list[str], list[str]]:
    """The warnings of `snapshot` as text and as JSON (both runs exit 0, stderr empty)."""
    text = run_cli("snapshot", "--dsn", db_dsn, "--preset", "node-jobs", env_home=home)
    as_json = run_cli("snapshot", "--dsn", db_dsn, "--preset", "node-jobs", "--json", env_home=home)
    for result in (text, as_json):
        assert (result.returncode, result.stderr) == (0, ""), result
    assert "ready    1" in text.stdout
    return (
        [
            line.removeprefix("warning: ")
            for line in text.stdout.splitlines()
            if line.startswith("warning: ")
        ],
        json.loads(as_json.stdout)["warnings"],
    )


def test_state_value_matching_no_row_is_a_warning_not_an_error(node_jobs_db, connect, tmp_path):
    # a typo in the data or the spec: 'procesing' is no role's; 'processing' matches nothing
    connect(autocommit=True).execute(
        "INSERT INTO jobs (status) VALUES ('pending'), ('done'), ('procesing')"
    )
    text, as_json = snapshot_warnings(node_jobs_db, str(tmp_path))
    # no failed row is healthy: only the running value is named
    assert (
        text
        == as_json
        == [
            "no rows in public.jobs with running='processing'; "
            "if such rows should exist, check [queue.states]",
        ]
    )
    # the row itself is in no count: unknown, never an all-clear (exit 0: a snapshot reports)
    unknown = run_cli(
        "snapshot", "--dsn", node_jobs_db, "--preset", "node-jobs", "--json", env_home=str(tmp_path)
    )
    assert json.loads(unknown.stdout)["unknowns"] == [
        "1 row of public.jobs has status = 'procesing', which no role claims: its job is in "
        "no count and no stale lease; map it with --running-values procesing (or the "
        "--ROLE-values of its role)"
    ]


def test_quiet_queue_with_nothing_running_warns_nowhere(node_jobs_db, connect, tmp_path):
    connect(autocommit=True).execute("INSERT INTO jobs (status) VALUES ('pending'), ('done')")
    assert snapshot_warnings(node_jobs_db, str(tmp_path)) == ([], [])


def test_healthy_queue_without_failed_rows_warns_nowhere(node_jobs_db, connect, tmp_path):
    connect(autocommit=True).execute(
        "INSERT INTO jobs (status) VALUES ('pending'), ('processing'), ('done')"
    )
    assert snapshot_warnings(node_jobs_db, str(tmp_path)) == ([], [])


def test_exact_count_limit_that_is_not_a_number(tmp_path):
    spec = tmp_path / "queue.toml"
    spec.write_text(
        "[queue]\ntable = 'jobs'\n[queue.states]\nready = 'a'\nrunning = 'b'\n"
        "[queue.policy]\nexact_count_limit = 'lots'\n"
    )
    result = run_cli("snapshot", "--queue", str(spec), env_home=str(tmp_path))
    assert_one_line_error(result, "exact_count_limit must be a whole number")
