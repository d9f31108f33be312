"""What the command line does with a DSN: an empty one is an error, a misplaced or unparsable
one is quoted back without its password, a password given with --dsn is warned about."""

from __future__ import annotations

import json

import pytest
from demo_queue import claim, expire, job, setup_demo
from test_cli_errors import assert_one_line_error, run_cli

from dashboard.cli import main
from dashboard.text import redact

pytestmark = pytest.mark.cli  # tier: see tests/conftest.py

PASSWORD = "Pct%Secret"


@pytest.fixture(autouse=True)
def _no_known_passwords():
    redact.forget_all()  # each test on its own: a password seen earlier is not masked by luck
    yield
    redact.forget_all()


def test_raw_percent_in_a_url_password_is_not_printed(tmp_path):
    result = run_cli(
        "snapshot", "--dsn", f"postgresql://app:{PASSWORD}@/db?host=/tmp", env_home=str(tmp_path)
    )
    assert_one_line_error(result, "cannot connect", "not a valid connection string", "%25")
    assert "Secret" not in result.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["--dsn", f"postgresql://u:{PASSWORD}@/db", "snapshot"],  # the option before the command
        ["db", "status", "--dsn", f"postgresql://u:{PASSWORD}@/db"],  # a command without --dsn
        ["snapshot", f"postgresql://u:{PASSWORD}@/db"],  # --dsn forgotten
        ["snapshot", f"host=/tmp password={PASSWORD}"],
    ],
    ids=["option-first", "db-status", "no-flag", "key-value"],
)
def test_usage_errors_quote_no_password(argv, tmp_path):
    result = run_cli(*argv, env_home=str(tmp_path))
    assert_one_line_error(result, "error:")
    assert "Secret" not in result.stderr and "Pct" not in result.stderr


def test_option_before_the_command_says_where_it_goes(tmp_path):
    result = run_cli("--dsn", "postgresql://u@/db", "snapshot", env_home=str(tmp_path))
    assert_one_line_error(result, "a DSN goes after the command")


def test_empty_dsn_is_an_error_not_the_next_server(dsn, connect, tmp_path, monkeypatch, capsys):
    spec = setup_demo(dsn, jobs=1)
    worker = connect(autocommit=True, application_name="worker-1")
    job_id, _ = claim(worker, "worker-1")
    expire(worker, job_id)
    monkeypatch.setenv("DATABASE_URL", dsn)  # where `--dsn "$UNSET"` fell through to
    with pytest.raises(SystemExit) as exit_:
        main(["requeue", str(job_id), "--dsn", "", "--audit-file", str(tmp_path / "a.jsonl")])
    assert exit_.value.code == 2
    assert "argument --dsn: an empty DSN was given" in capsys.readouterr().err
    assert job(worker, job_id)["status"] == "running"  # nothing changed there
    assert spec.table.name == "jobs"


@pytest.mark.parametrize(
    "flag",
    [
        "--table",
        "--queue",
        "--preset",
        "--id-column",
        "--status-column",
        "--stale-after",
        "--audit-file",
    ],
)
def test_empty_text_flag_is_an_error_not_the_default(flag, tmp_path):
    result = run_cli(
        "requeue",
        "1",
        flag,
        "",
        "--dsn",
        "postgresql://nobody@127.0.0.1:1/none",
        env_home=str(tmp_path),
    )
    assert_one_line_error(result, f"argument {flag}: expected", "empty value")


def test_password_in_dsn_is_warned_about_once_by_long_running_commands(dsn, capsys):
    from psycopg import conninfo

    setup_demo(dsn)
    with_password = conninfo.make_conninfo(dsn, password="not-needed-here")
    args = ["--workers", "1", "--jobs", "1", "--work-ms", "0", "--duration", "60", "--json"]
    assert main(["load", "--dsn", with_password, *args]) == 0
    out, err = capsys.readouterr()
    assert err.count("the password in --dsn can be read by other users") == 1
    assert "PGPASSWORD" in err and "not-needed-here" not in err + out
    assert json.loads(out)["completed"] == 1

    assert main(["load", "--dsn", dsn, *args]) == 0  # no password given: nothing to say
    assert "the password in --dsn" not in capsys.readouterr().err


def test_redact_masks_dsn_shapes_and_known_passwords():
    text = (
        "postgresql://u:p@ss%word@host/db and host=h password='a b' port=1 "
        "and PASSWORD=xyz and later sekrit-pw"
    )
    redact.remember(["sekrit-pw"])
    masked = redact.scrub(text)
    for secret in ("p@ss%word", "'a b'", "xyz", "sekrit-pw"):
        assert secret not in masked
    assert "postgresql://u:***@host/db" in masked and "port=1" in masked
    assert redact.password_in("postgresql://u:Pct%Secret@/db") == "Pct%Secret"  # unparsable
    assert redact.password_in("postgresql://u:pw%21@/db") == "pw!"
    assert redact.password_in("host=h user=u") is None
