"""Every command and every flag that takes a value, given a bad one: one line on stderr
that names the problem, exit 2, no traceback, nothing on stdout, no password quoted back.

The cases are generated from the parser itself: a new flag without a bad value listed
here fails the test until one is added.
"""

from __future__ import annotations

import argparse
import os

import psycopg
import pytest
from demo_queue import setup_demo
from psycopg import sql

from dashboard.cli import build_parser, main

SECRET = "Pct%Secret"
# bad values by flag (or positional's name); "{tmp}" is the test's temporary directory
BAD: dict[str, list[str]] = {
    "--dsn": ["", f"postgresql://u:{SECRET}@/db", "host=/nowhere port=1"],
    "--queue": ["", "{tmp}/missing.toml", "{tmp}"],
    "--preset": ["", "sidekiq"],
    "--table": ["", "no_such_table", '"unclosed', "a.b.c"],
    "--id-column": ["", "no_such_column"],
    "--status-column": ["", "no_such_column"],
    "--stale-after": ["", "soon", "0", "-5 minutes", "100000000000000 days"],
    "--ready-value": ["", "running"],  # the demo's running value
    "--dead-value": ["", "failed"],  # the demo moves dead jobs to a table
    # a role's values: empty, an empty item, or leaving ready or running with none
    "--ready-values": ["", ",", "running"],
    "--running-values": ["", "a,,b", "ready"],
    **{f"--{r}-values": ["", ","] for r in ("scheduled", "done", "failed", "dead")},
    # conditions: empty, unreadable, or roles by conditions on a queue with a state column
    **{
        f"--{r}-when": ["", "id sometimes", "id set"]
        for r in ("ready", "scheduled", "running", "done", "failed", "dead")
    },
    "--interval": ["0", "nan", "x", "100000"],
    "--audit-file": ["", "{tmp}/no/such/dir/audit.jsonl", "{tmp}"],
    "--reason": ["", "   "],
    "--backend-start": ["", "yesterday", "2026-01-02 03:04:05"],  # the last: no time zone
    "--workers": ["-1", "x", "65"],
    "--strategy": ["bogus", ""],
    "--duration": ["0", "-1", "inf"],
    "--seconds": ["0", "x", "nan", "601"],
    "--jobs": ["0", "x"],
    "--rate": ["-1", "nan"],
    "--work-ms": ["-1"],
    "--batch": ["0"],
    "--fail-rate": ["1.5", "-0.1"],
    "--crash-rate": ["2"],
    "--lease": ["0"],
    "--payload-bytes": ["-1", "1e3"],
    "--seed": ["x"],
    "--listen": ["", "nohost", "127.0.0.1:99999"],
    "--public-url": ["", "example.com"],
    "--max-tabs": ["0", "x", "100"],
    "--max-groups": ["0", "x"],
    "--since": ["", "soon", "-5 minutes", "2026-01-02 03:04:05"],  # the last: no time zone
    "--limit": ["0", "x"],
    "--max-stale": ["-1", "x"],
    "--max-waiting": ["-1", "x"],
    "--max-idle-tx": ["-1 minutes", "soon", ""],
    "--max-oldest-ready": ["-1", "soon"],
    "--max-wait-p95": ["-1", "soon", ""],
    "--max-run-p95": ["-1 minutes", "soon"],
    "--latency-window": ["", "soon", "0", "2 days"],  # at most a day
    "--horizon-age": ["-1", "soon", ""],
    "--state": ["", "nosuch"],
    "--older-than": ["", "soon", "0", "100000000000d"],
    "--worker": [""],
    "--group": [""],
    "--batch-size": ["0", "x", "100000000"],
    "ids": ["abc", "99999999999999999999"],  # the demo queue's ids are bigint
    "pid": ["0", "x", "-5"],
    "action": ["bogus"],
    # record, replay, incident; watch --record
    "--out": ["", "{tmp}", "{tmp}/no/such/dir/r.qtr"],
    "--record": ["", "{tmp}", "{tmp}/no/such/dir/r.qtr"],
    "--retain": ["", "soon", "0"],
    "--rewind": ["", "soon", "-5m"],  # watch, demo: 0 is accepted (no rewind)
    "--max-size": ["", "1k", "lots"],
    "--frames": ["0", "x"],
    "file": ["", "{tmp}/missing.qtr", "{tmp}"],
    "--at": ["", "soon", "25:99", "2026-01-02 03:04:05"],  # the last: no time zone
    "--until": ["", "soon"],
    # named targets (docs/targets.md); the matrix adds --dsn, which --target refuses too
    "--targets": ["", "{tmp}/missing.toml", "{tmp}"],
    "--target": ["", "nosuch"],
    # watch NAME... (the positional) and the overview across targets' bound
    "names": ["", "nosuch", "host=db1"],
    "--connections": ["0", "x", "257"],
}
# what each command needs besides the flag under test, to get as far as that flag matters
BASE: dict[str, list[str]] = {
    "requeue": ["1"],
    "dead-letter": ["1", "--reason", "matrix"],
    "cancel": ["1"],
    "terminate": ["1"],
    "load": ["--duration", "1", "--workers", "1"],
    "retry-dead": ["1"],
    "check": ["--max-waiting", "5"],  # check needs one threshold
    "record": ["--out", "{tmp}/r.qtr", "--frames", "1"],  # a bad value let through stops
    "replay": ["{tmp}/r.qtr"],  # a small recording, made by the test (RECORDED)
    "incident": ["{tmp}/r.qtr"],
}
RECORDED = ("replay", "incident")
EXTRA: dict[tuple[str, str], list[str]] = {
    ("load", "--audit-file"): ["--rescue"],  # the audit trail of --rescue
    ("serve", "--audit-file"): ["--allow-actions"],  # ... and of the browser's actions
}
# export serves `queuetop_up 0` while its database is away, by design: not bad input;
# incident's --since -5 minutes is five minutes before the recording's end
ACCEPTED = {("export", "--dsn", "host=/nowhere port=1"), ("incident", "--since", "-5 minutes")}


def value_flags() -> list[tuple[str, str]]:
    """(command, flag) for every argument of every command that takes a value."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [
        (command, action.option_strings[0] if action.option_strings else action.dest)
        for command, subparser in sub.choices.items()
        for action in subparser._actions
        if action.nargs != 0
    ]


COLUMN_BAD = ["", "no_such_column"]  # every --X-column flag: a column the table lacks


def bad_values(flag: str) -> list[str | None]:
    return BAD.get(flag, COLUMN_BAD if flag.endswith("-column") else [None])


CASES = [
    (command, flag, value)
    for command, flag in value_flags()
    for value in bad_values(flag)
    if (command, flag, value) not in ACCEPTED
]


def argv_for(command: str, flag: str, value: str, dsn: str, tmp: str) -> list[str]:
    base = [b.replace("{tmp}", tmp) for b in BASE.get(command, [])]
    if flag in base:  # the flag under test takes the place of its usual value
        del base[base.index(flag) : base.index(flag) + 2]
    if flag in ("ids", "pid"):  # so does the positional
        base.remove("1")
    if flag == "file":
        base.pop(0)
    value = value.replace("{tmp}", tmp)
    argv = [command, *base, *EXTRA.get((command, flag), [])]
    argv += [flag, value] if flag.startswith("--") else [value]
    if flag != "--dsn" and command != "db":
        argv += ["--dsn", dsn]
    return argv


@pytest.fixture(scope="module")
def matrix_db(server_dsn):
    """One database for the whole matrix: the demo queue and its audit table."""
    from psycopg import conninfo

    name = f"qt_matrix_{os.getpid()}"
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = conninfo.make_conninfo(server_dsn, dbname=name)
    setup_demo(dsn, jobs=1)
    yield dsn
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


@pytest.fixture
def no_dashboard(monkeypatch):
    """A bad value that got through would open the dashboard, or serve metrics or the web
    page for ever: fail instead of hanging."""
    from dashboard.metrics import exporter
    from dashboard.ui import web
    from dashboard.ui.app import QueuetopApp

    def refuse(*args, **kwargs):
        raise AssertionError("started on bad input")

    monkeypatch.setattr(QueuetopApp, "run", refuse)
    monkeypatch.setattr(exporter, "serve_metrics", refuse)
    monkeypatch.setattr(web, "server", refuse)


@pytest.mark.parametrize(
    ("command", "flag", "value"), CASES, ids=[f"{c} {f} {v!r}" for c, f, v in CASES]
)
def test_bad_value_is_one_line_and_exit_2(
    command, flag, value, matrix_db, tmp_path, no_dashboard, capsys
):
    assert value is not None, f"no bad value listed for {command} {flag}: add one to BAD"
    if command in RECORDED:
        from ui_snapshots import demo_spec, fixed_snapshot

        from dashboard.recorder import RecordingWriter

        writer = RecordingWriter(tmp_path / "r.qtr", demo_spec(), 1.0)
        writer.write(fixed_snapshot(0))
        writer.close()
    argv = argv_for(command, flag, value, matrix_db, str(tmp_path))
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's refusals
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2, (argv, out, err)
    assert out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "error:" in lines[0]
    assert "Secret" not in err
