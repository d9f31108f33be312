"""The hostile-text matrix over every plain-text command: the same hostile values in every
field (query text, application_name, worker, group, payload, last_error, status value, a
text job id, a reason, a table name with odd characters), real rows and real sessions;
each command's output holds no terminal control and shows the markup as text. JSON keeps
the exact text."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers.cli import run_text as run
from hostile import QUIT, RAW, TABLE_NAME, assert_inert, plant, table_sql

MARKUP = "[@click=app.screenshot("


@pytest.fixture
def hostile(dsn, connect, background, tmp_path, capsys):
    planted = plant(dsn, connect, background, tmp_path)
    capsys.readouterr()  # what planting printed
    return planted


def queue_args(h) -> list[str]:
    return ["--dsn", h.dsn, "--queue", str(h.spec_file)]


def test_snapshot_text_escapes_and_its_json_keeps_the_exact_text(hostile, capsys):
    h = hostile
    code, out = run(capsys, "snapshot", *queue_args(h))
    assert code == 0
    # the worker of the stale lease, the status value no role claims, the table, the query
    assert_inert(
        out,
        "snapshot",
        shows=[MARKUP, "\\x1b]52;c;", "\\u202e", QUIT, "[@click=app.quit]A[/]\\x1b"],
    )
    assert "which no role claims" in out
    code, out = run(capsys, "snapshot", "--json", *queue_args(h))
    data = json.loads(out)
    assert {s["worker"] for s in data["stale_leases"]} == {"w" + h.text}
    assert h.text in data["by_status"]


def test_action_results_and_dry_runs_escape(hostile, capsys):
    h = hostile
    code, out = run(capsys, "requeue", h.stale_id, "--dry-run", "--reason", h.text, *queue_args(h))
    assert code == 0
    assert_inert(out, "requeue --dry-run", shows=[QUIT, "status: running -> ready"])
    args = ("dead-letter", h.failed_id, "missing", "--reason", h.text, *queue_args(h))
    code, out = run(capsys, *args, "--dry-run")
    assert code == 1  # 'missing' is skipped
    assert_inert(out, "dead-letter --dry-run", shows=["[@click=app.quit]F[/]", "failed -> dead"])
    code, out = run(capsys, "requeue", h.stale_id, "--reason", h.text, *queue_args(h))
    assert code == 0
    assert_inert(out, "requeue", shows=[QUIT])
    code, out = run(capsys, "requeue", "--all-stale", "--dry-run", *queue_args(h))
    assert_inert(out, "requeue --all-stale --dry-run")
    code, out = run(capsys, "requeue", h.stale_id, "--json", *queue_args(h))
    assert json.loads(out)["skipped"] == [{"id": h.stale_id, "reason": "already ready"}]


def test_audit_text_escapes(hostile, capsys):
    code, out = run(capsys, "audit", "--dsn", hostile.dsn)
    assert code == 0
    assert_inert(out, "audit", shows=["[@click=app.quit]R[/]", "[@click=app.scree"])


def test_check_doctor_discover_and_presets_escape(hostile, capsys):
    h = hostile
    code, out = run(capsys, "check", "--max-stale", "0", "--max-idle-tx", "1s", *queue_args(h))
    assert code == 1
    assert_inert(out, "check")
    code, out = run(capsys, "doctor", *queue_args(h))
    assert_inert(out, "doctor", shows=["[@click=app.quit]T[/]"])  # the table's name
    code, out = run(capsys, "discover", "--dsn", h.dsn)
    assert code == 0
    assert_inert(out, "discover", shows=["[@click=app.quit]T[/]"])
    code, out = run(capsys, "presets")
    assert_inert(out, "presets")


def test_an_error_naming_the_catalog_escapes(hostile, capsys):
    """A missing table lists the tables there: the hostile one among them."""
    code, out = run(capsys, "snapshot", "--dsn", hostile.dsn, "--table", "app.nope")
    assert code == 2 and len(out.strip().splitlines()) == 1
    assert_inert(out, "error line", shows=["[@click=app.quit]T[/]"])


def test_record_and_incident_escape(hostile, capsys, tmp_path):
    h = hostile
    out_file = tmp_path / "r.qtr"
    code, out = run(
        capsys,
        "record",
        "--out",
        str(out_file),
        "--frames",
        "2",
        "--interval",
        "0.2",
        *queue_args(h),
    )
    assert code == 0
    assert_inert(out, "record")
    code, out = run(capsys, "incident", str(out_file))
    assert code == 0
    assert_inert(out, "incident")


def test_a_closed_pipe_ends_quietly(hostile, connect):
    """`queuetop snapshot --json | head -c 100`: more output than a pipe holds, and neither
    a traceback nor a word when the reader goes (issue 19, item 9)."""
    h = hostile
    setup = connect(autocommit=True)
    tables = [f"app.pad_{i}" for i in range(150)]
    for name in tables:
        setup.execute(f"CREATE TABLE {name} (id int)")
    locker = connect()  # idle in a transaction holding 150 locks, each listed with its query
    locker.execute(f"LOCK TABLE {', '.join(tables)} IN ACCESS SHARE MODE /* {'x' * 900} */")
    command = [sys.executable, "-m", "dashboard", "snapshot", "--json", *queue_args(h)]
    full = subprocess.run(command, capture_output=True, timeout=120)
    assert full.returncode == 0 and len(full.stdout) > 200_000, len(full.stdout)
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(100)
    proc.stdout.close()  # the reader is gone, as `head` goes
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1  # the write could not finish
    assert err == "", err


def test_every_raw_control_is_planted():
    """The matrix tests what it says: the planted text holds each control it looks for."""
    from hostile import CONTROLS

    assert all(raw in CONTROLS for raw in RAW) and "\x1b" in TABLE_NAME


def test_the_load_generators_summary_and_warnings_escape(hostile, connect, capsys):
    """A worker's error is the server's text: a trigger raises the hostile text when a job
    completes, and the warning that quotes it (and the summary) carry no control."""
    h = hostile
    setup = connect(autocommit=True)
    setup.execute(
        "CREATE FUNCTION app.refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "IF NEW.status = 'done' THEN RAISE EXCEPTION USING MESSAGE = %s; END IF; "
        "RETURN NEW; END $$".replace("%s", "'" + h.text.replace("'", "''") + "'")
    )
    setup.execute(
        f"CREATE TRIGGER refuse BEFORE UPDATE ON {table_sql(setup)} "
        "FOR EACH ROW EXECUTE FUNCTION app.refuse()"
    )
    args = ["load", *queue_args(h), "--yes-write-to-my-table", "--workers", "1"]
    code, out = run(capsys, *args, "--duration", "5", "--work-ms", "1")
    assert "completed 0" in out  # every completion refused: the summary came
    assert_inert(out, "load", shows=["[@click=app.screenshot("])  # the warning quotes it
