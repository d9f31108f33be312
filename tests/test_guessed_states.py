"""With `--table` alone the states are guesses: an action writes only a value the table holds
in that role (or one a flag names), and says which, never the first guess.

The table's workers use queued/active/errored/discarded; the guesses also hold pending,
ready, dead, …: a requeue that wrote `pending` would strand the job.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from helpers.pilot import until

from dashboard import config, db
from dashboard.cli import main
from dashboard.ui.app import QueuetopApp
from dashboard.ui.screens.confirm import ConfirmScreen

TABLE = "app.tasks"


@pytest.fixture
def tasks(dsn, connect):
    """app.tasks with one job per state of its own vocabulary; the running one is stale."""
    setup = connect(autocommit=True)
    setup.execute("CREATE SCHEMA app")
    setup.execute(
        """CREATE TABLE app.tasks (
               id bigserial PRIMARY KEY, status text NOT NULL, worker text,
               started_at timestamptz, created_at timestamptz NOT NULL DEFAULT now())"""
    )
    ids = {}
    for status in ("queued", "active", "errored", "discarded"):
        ids[status] = setup.execute(
            "INSERT INTO app.tasks (status, worker, started_at) VALUES (%s, %s, %s) RETURNING id",
            (
                status,
                "w-gone" if status == "active" else None,
                "2000-01-01T00:00:00Z" if status == "active" else None,
            ),
        ).fetchone()[0]
    return setup, ids


def status_of(setup, job_id) -> str:
    return setup.execute("SELECT status FROM app.tasks WHERE id = %s", (job_id,)).fetchone()[0]


def statuses(setup) -> set[str]:
    return {r[0] for r in setup.execute("SELECT status FROM app.tasks")}


def act(dsn, tmp_path, *args: str) -> int:
    audit = str(tmp_path / "audit.jsonl")
    return main([*args, "--dsn", dsn, "--table", TABLE, "--audit-file", audit])


def audit_lines(tmp_path) -> list[dict]:
    path = tmp_path / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_requeue_writes_the_ready_value_the_table_holds(dsn, tasks, tmp_path, capsys):
    setup, ids = tasks
    assert act(dsn, tmp_path, "requeue", str(ids["active"]), "--dry-run") == 0
    out = capsys.readouterr().out
    assert "status: active -> queued" in out  # the dry run names the exact value
    assert status_of(setup, ids["active"]) == "active"
    assert act(dsn, tmp_path, "requeue", str(ids["active"])) == 0
    assert "status: active -> queued" in capsys.readouterr().out
    assert status_of(setup, ids["active"]) == "queued"
    assert act(dsn, tmp_path, "requeue", str(ids["errored"])) == 0
    assert status_of(setup, ids["errored"]) == "queued"
    assert statuses(setup) <= {"queued", "discarded"}  # never pending, ready, new, …
    changed = [r for r in audit_lines(tmp_path) if r.get("outcome") == "pending"]
    assert {r["to_state"] for r in changed} == {"queued"}


def test_dead_letter_writes_the_dead_value_the_table_holds(dsn, tasks, tmp_path, capsys):
    setup, ids = tasks
    args = ("dead-letter", str(ids["errored"]), "--reason", "poison")
    assert act(dsn, tmp_path, *args, "--dry-run") == 0
    assert "status: errored -> discarded" in capsys.readouterr().out
    assert act(dsn, tmp_path, *args) == 0
    assert status_of(setup, ids["errored"]) == "discarded"
    assert "dead" not in statuses(setup)


def test_no_value_held_refuses_in_one_line_and_changes_nothing(dsn, tasks, tmp_path, capsys):
    setup, ids = tasks
    setup.execute("DELETE FROM app.tasks WHERE status IN ('queued', 'discarded')")
    assert act(dsn, tmp_path, "requeue", str(ids["active"])) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "--ready-value" in err and "holds none of them" in err
    assert act(dsn, tmp_path, "dead-letter", str(ids["errored"]), "--reason", "x") == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--dead-value" in err
    assert statuses(setup) == {"active", "errored"}
    assert audit_lines(tmp_path) == []  # nothing was written, not even a pending record


def test_two_ready_values_held_is_no_answer_either(dsn, tasks, tmp_path, capsys):
    setup, ids = tasks
    setup.execute("INSERT INTO app.tasks (status) VALUES ('pending')")
    assert act(dsn, tmp_path, "requeue", str(ids["active"])) == 2
    err = capsys.readouterr().err
    assert "holds several of them (pending, queued)" in err and "--ready-value" in err
    assert status_of(setup, ids["active"]) == "active"


def test_a_locked_table_is_one_line_too(dsn, tasks, tmp_path, capsys, connect):
    """The reads that tell the value wait at most the action's lock_timeout, then refuse."""
    setup, ids = tasks
    locker = connect()
    locker.execute("LOCK TABLE app.tasks IN ACCESS EXCLUSIVE MODE")
    assert act(dsn, tmp_path, "requeue", str(ids["active"])) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "locked by another session" in err and "--ready-value" in err
    locker.rollback()
    assert status_of(setup, ids["active"]) == "active"


def test_values_given_by_flag_are_written(dsn, tasks, tmp_path, capsys):
    setup, ids = tasks
    setup.execute("DELETE FROM app.tasks WHERE status IN ('queued', 'discarded')")
    flags = ("--ready-value", "queued", "--dead-value", "discarded")
    assert act(dsn, tmp_path, "requeue", str(ids["active"]), *flags) == 0
    assert "status: active -> queued" in capsys.readouterr().out
    assert status_of(setup, ids["active"]) == "queued"
    assert act(dsn, tmp_path, "dead-letter", str(ids["errored"]), "--reason", "x", *flags) == 0
    assert status_of(setup, ids["errored"]) == "discarded"
    assert statuses(setup) == {"queued", "discarded"}


def test_a_flag_naming_a_value_of_another_role_in_a_toml_is_refused(dsn, tmp_path, capsys):
    spec = tmp_path / "q.toml"
    spec.write_text(
        '[queue]\ntable = "app.tasks"\n[queue.states]\nready = ["queued"]\nrunning = ["active"]\n'
    )
    code = main(["snapshot", "--dsn", dsn, "--queue", str(spec), "--ready-value", "active"])
    err = capsys.readouterr().err
    assert code == 2 and "running value" in err and len(err.strip().splitlines()) == 1


def test_the_dashboards_confirmation_names_the_value(dsn, tasks):
    asyncio.run(_confirmation_names_the_value(dsn, tasks))


async def _confirmation_names_the_value(dsn, tasks):
    setup, ids = tasks
    assert main(["init-audit", "--dsn", dsn]) == 0  # the audit trail the actions need
    spec = config.build_spec(table=TABLE)
    with db.connect_monitor(dsn) as conn:
        spec = config.validate(conn, spec)
    app = QueuetopApp(spec, dsn, interval=0.5)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.recovery.reasons.get("requeue", "?") is None)
        await until(pilot, lambda: str(ids["active"]) in app.stale_table.items)
        await pilot.press("4", "R")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        effect = str(app.screen.query_one("#confirm-effect").render())
        assert "status: active -> queued" in effect
        await pilot.press("enter")
        await until(pilot, lambda: status_of(setup, ids["active"]) != "active")
    assert status_of(setup, ids["active"]) == "queued"


def test_the_dashboard_refuses_a_guess_naming_the_flag(dsn, tasks):
    asyncio.run(_dashboard_refuses_a_guess(dsn, tasks))


async def _dashboard_refuses_a_guess(dsn, tasks):
    setup, ids = tasks
    setup.execute("DELETE FROM app.tasks WHERE status = 'queued'")
    assert main(["init-audit", "--dsn", dsn]) == 0
    spec = config.build_spec(table=TABLE)
    with db.connect_monitor(dsn) as conn:
        spec = config.validate(conn, spec)
    app = QueuetopApp(spec, dsn, interval=0.5)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "--ready-value" in (app.recovery.reasons.get("requeue") or ""))
        await until(pilot, lambda: str(ids["active"]) in app.stale_table.items)
        await pilot.press("4", "R")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        told = "\n".join(str(n.message) for n in app._notifications)
        assert "--ready-value" in told
    assert status_of(setup, ids["active"]) == "active"
