"""`--targets FILE --target NAME` on the commands: each reaches the database the target names
(two databases on the test server, different queues: the output says which one was read),
and a bad file, name or combination is one line, exit 2, with nothing connected to (a TCP
listener that every address of the failing cases points at counts the connections)."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
import target_stage
from helpers.cli import run_main
from target_stage import A_COUNTS, B_COUNTS, B_TABLE, Listener, counts_in, write_targets

from dashboard.cli import main

other_dsn = target_stage.other_dsn  # fixtures
fleet = target_stage.fleet


run = run_main  # tests/helpers/cli.py: (code, out, err), no traceback


def test_snapshot_reads_the_database_of_the_target_named(fleet, capsys):
    path, a, b = fleet
    code, out, err = run(capsys, "snapshot", "--json", "--targets", path, "--target", "alpha")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["queue"] == "queuetop_demo.jobs"
    assert {k: v for k, v in doc["counts"].items() if v} == counts_in(a, "queuetop_demo.jobs")
    assert counts_in(a, "queuetop_demo.jobs") == A_COUNTS
    code, out, err = run(capsys, "snapshot", "--json", "--targets", path, "--target", "beta")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["queue"] == B_TABLE
    assert {k: v for k, v in doc["counts"].items() if v} == counts_in(b, B_TABLE) == B_COUNTS


def test_check_doctor_and_record_follow_the_target(fleet, capsys, tmp_path):
    path, _, _ = fleet
    for name, table in (("alpha", "queuetop_demo.jobs"), ("beta", B_TABLE)):
        code, out, err = run(
            capsys, "check", "--json", "--targets", path, "--target", name, "--max-stale", "9"
        )
        assert code in (0, 3), err
        assert json.loads(out)["queue"] == table
        code, out, err = run(capsys, "doctor", "--json", "--targets", path, "--target", name)
        assert code in (0, 1), err
        assert json.loads(out)["queue"] == table
        out_file = tmp_path / f"{name}.qtrec"
        code, out, err = run(
            capsys,
            "record",
            "--targets",
            path,
            "--target",
            name,
            "--frames",
            "1",
            "--out",
            str(out_file),
            "--audit-file",
            str(tmp_path / "audit.jsonl"),
        )
        assert code == 0, err
        assert f"recording {table} " in out and out_file.exists()
    # stale leases: alpha's demo queue has two past their lease, beta's table no lease
    code, out, _ = run(
        capsys, "check", "--json", "--targets", path, "--target", "alpha", "--max-stale", "1"
    )
    assert code == 1 and json.loads(out)["checks"][0]["value"] == 2


def test_discover_and_snapshot_on_a_target_without_a_queue(fleet, capsys):
    path, _, b = fleet
    code, out, err = run(capsys, "discover", "--json", "--targets", path, "--target", "bare")
    assert code == 0, err
    queues = json.loads(out)["queues"]
    assert [q["table"] for q in queues] == [B_TABLE]  # B's table, not A's demo queue
    assert queues[0]["command"].endswith(f"--targets {path} --target bare")
    code, out, err = run(capsys, "discover", "--json", "--targets", path, "--target", "alpha")
    assert [q["table"] for q in json.loads(out)["queues"]] == ["queuetop_demo.jobs"]
    # snapshot without a queue: the one discovery finds
    code, out, err = run(capsys, "snapshot", "--json", "--targets", path, "--target", "bare")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["queue"] == B_TABLE
    assert {k: v for k, v in doc["counts"].items() if v} == counts_in(b, B_TABLE)


def test_an_action_acts_in_the_target_named(fleet, capsys, tmp_path):
    path, a, _ = fleet
    audit = str(tmp_path / "audit.jsonl")
    common = ("--json", "--targets", path, "--audit-file", audit)
    code, out, err = run(capsys, "requeue", "--target", "alpha", *common, "1")
    assert code == 0, err
    assert json.loads(out)["changed"] == [1]
    with psycopg.connect(a) as conn:  # ground truth: the job moved in A
        assert conn.execute("SELECT status FROM queuetop_demo.jobs WHERE id = 1").fetchone() == (
            "ready",
        )
    # the same id on beta (B has no job 1, and a table that is not the demo's)
    code, out, err = run(capsys, "requeue", "--target", "beta", *common, "--dry-run", "1")
    assert code == 1, err
    doc = json.loads(out)
    assert doc["changed"] == [] and [s["id"] for s in doc["skipped"]] == [1]
    # B's running job 1006 (A has no such id): found there, dry run, changes nothing
    code, out, err = run(
        capsys, "requeue", "--target", "beta", *common, "--dry-run", "--force", "1006"
    )
    assert (code, json.loads(out)["changed"]) == (0, [1006]), (out, err)
    assert counts_in(a, "queuetop_demo.jobs") == {"ready": 5, "running": 1}


# --- refusals: one line, exit 2, nothing connected to -------------------------------------


@pytest.fixture
def listener():
    """Every address a refused command could fall back to is this listener: the targets,
    --dsn, and the PG* variables (so not even a fall-through to the environment connects).
    The variables are restored at its own teardown, before the test databases are dropped."""
    here = Listener()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PGHOST", "127.0.0.1")
        patch.setenv("PGPORT", str(here.port))
        yield here
    here.close()


def refused(capsys, listener: Listener, *argv: str) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1, (argv, code, out, err)
    assert "Traceback" not in err
    assert listener.accepted == 0, argv
    return lines[0]


def test_refusals_are_one_line_and_connect_nowhere(listener, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no default file there
    good = write_targets(
        tmp_path / "targets.toml", f"[targets.a]\ndsn = {json.dumps(listener.dsn())}\n", 0o644
    )
    secret = listener.dsn(password="s3cret-pw")
    exposed = write_targets(
        tmp_path / "exposed.toml", f"[targets.p]\ndsn = {json.dumps(secret)}\n", 0o644
    )
    commands = {
        "snapshot": (),
        "check": ("--max-stale", "0"),
        "doctor": (),
        "discover": (),
        "record": ("--out", str(tmp_path / "r.qtrec")),
        "export": ("--listen", "127.0.0.1:0"),
        "requeue": ("1",),
        "cancel": ("1",),
    }
    for command, extra in commands.items():
        line = refused(
            capsys,
            listener,
            command,
            *extra,
            "--targets",
            str(tmp_path / "nope.toml"),
            "--target",
            "a",
        )
        assert "no targets file at" in line and "nope.toml" in line
        line = refused(capsys, listener, command, *extra, "--target", "a")
        assert "no targets file at" in line and "config/queuetop/targets.toml" in line
        line = refused(capsys, listener, command, *extra, "--targets", good, "--target", "nosuch")
        assert "no target named 'nosuch'" in line and "it has: a" in line
        line = refused(capsys, listener, command, *extra, "--targets", exposed, "--target", "p")
        assert "holds a password" in line and "chmod 600" in line and "s3cret-pw" not in line
        line = refused(
            capsys,
            listener,
            command,
            *extra,
            "--targets",
            good,
            "--target",
            "a",
            "--dsn",
            listener.dsn(),
        )
        assert "give --target or --dsn, not both" in line
        if command != "export":  # there --targets alone is the multi-target exporter
            line = refused(capsys, listener, command, *extra, "--targets", good)
            assert "add --target NAME" in line
    # the same file, once only its owner may read it, is used: the listener sees it connect
    Path(exposed).chmod(0o600)
    code = main(["snapshot", "--targets", exposed, "--target", "p"])
    capsys.readouterr()
    assert code == 2 and listener.accepted >= 1


def test_a_target_naming_its_queue_refuses_another(fleet, capsys, listener):
    path, _, _ = fleet
    line = refused(
        capsys, listener, "snapshot", "--targets", path, "--target", "alpha", "--table", "x"
    )
    assert "names its queue; drop --table" in line


def test_a_password_from_a_private_targets_file_is_not_warned_about_as_argv(
    fleet, capsys, tmp_path
):
    """`--dsn` with a password warns that ps shows it; a target's password is not in argv."""
    _, a, _ = fleet
    with_password = psycopg.conninfo.make_conninfo(a, password="unused-by-trust")
    private = write_targets(
        tmp_path / "private.toml",
        f'[targets.p]\ndsn = {json.dumps(with_password)}\npreset = "demo"\n',
        0o600,
    )
    out_file = tmp_path / "p.qtrec"
    code, out, err = run(
        capsys,
        "record",
        "--targets",
        private,
        "--target",
        "p",
        "--frames",
        "1",
        "--out",
        str(out_file),
    )
    assert code == 0, err
    assert "warning" not in err and "unused-by-trust" not in out + err
