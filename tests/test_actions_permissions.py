"""A least-privilege role (pg_monitor + SELECT): the monitor works, actions say which GRANT."""

from __future__ import annotations

import itertools
import json
import os

import psycopg
import pytest
from demo_queue import claim, expire, setup_demo
from psycopg import conninfo, sql

from dashboard import db, monitor
from dashboard.actions import (
    FileAudit,
    cancel,
    choose_sink,
    dead_letter,
    observe_jobs,
    observe_session,
    requeue,
)
from dashboard.cli import main
from dashboard.errors import UserError

# every server of the matrix (tests/servers.py)
pytestmark = pytest.mark.matrix

_roles = itertools.count()


@pytest.fixture
def watcher(dsn):
    """A role with pg_monitor and SELECT on the demo queue only; its DSN."""
    role = f"qt_watch_{os.getpid()}_{next(_roles)}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        admin.execute(sql.SQL("GRANT pg_monitor TO {}").format(sql.Identifier(role)))
        admin.execute(
            sql.SQL(
                "GRANT USAGE ON SCHEMA queuetop_demo TO {0}; "
                "GRANT SELECT ON ALL TABLES IN SCHEMA queuetop_demo TO {0}"
            ).format(sql.Identifier(role))
        )
    yield conninfo.make_conninfo(dsn, user=role)
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(
            sql.SQL("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s"),
            (role,),
        )
        admin.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
        admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


@pytest.fixture
def stale(dsn, connect):
    spec = setup_demo(dsn, jobs=2)
    worker = connect(autocommit=True, application_name="worker-1")
    job_id, _ = claim(worker, "worker-1")
    expire(worker, job_id)
    return spec, job_id


def test_least_privilege_role_monitors_but_cannot_act(stale, watcher, tmp_path, connect):
    spec, job_id = stale
    with db.connect_monitor(watcher) as mon:
        snap = monitor.collect(mon, spec)
    assert [s.id for s in snap.stale_leases] == [job_id]
    with db.connect_action(watcher) as conn:
        with pytest.raises(UserError, match="GRANT USAGE ON SCHEMA queuetop TO|GRANT INSERT"):
            choose_sink(conn, None)
        audit = FileAudit(tmp_path / "audit.jsonl")
        seen, _ = observe_jobs(conn, spec, [str(job_id)])  # reading is allowed
        with pytest.raises(UserError, match=r"GRANT UPDATE ON queuetop_demo\.jobs TO qt_watch"):
            requeue(conn, spec, seen, audit=audit)
        with pytest.raises(UserError, match=r"GRANT UPDATE, DELETE ON queuetop_demo\.jobs"):
            dead_letter(conn, spec, seen, audit=audit, reason="r")
        other = connect(application_name="someone")  # a superuser's session
        target = observe_session(conn, other.info.backend_pid)
        with pytest.raises(UserError, match="GRANT pg_signal_backend TO qt_watch"):
            cancel(conn, target, audit=audit)
    # Job actions refused before writing anything; the signal was written ahead, then undone.
    lines = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [(line["outcome"], line.get("action")) for line in lines] == [
        ("pending", "cancel"),
        ("rolled back", None),
    ]


def test_least_privilege_role_through_the_cli(stale, watcher, tmp_path, capsys):
    _, job_id = stale
    code = main(
        ["requeue", str(job_id), "--dsn", watcher, "--audit-file", str(tmp_path / "a.jsonl")]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "GRANT UPDATE ON queuetop_demo.jobs" in err
    assert main(["snapshot", "--json", "--dsn", watcher]) == 0


def test_capabilities_say_why_an_action_is_disabled(stale, watcher, dsn, tmp_path):
    from dashboard.actions import capabilities

    spec, _ = stale
    with db.connect_action(dsn) as conn:
        assert capabilities(conn, spec) == dict.fromkeys(
            ("requeue", "dead-letter", "retry-dead", "cancel", "terminate")
        )
        assert set(capabilities(conn, spec, read_only=True).values()) == {
            "read-only mode: actions are disabled"
        }
    with db.connect_action(watcher) as conn:
        assert "init-audit" not in capabilities(conn, spec)["requeue"]  # the table exists
        assert "GRANT INSERT ON queuetop.audit_log" in capabilities(conn, spec)["cancel"]
        caps = capabilities(conn, spec, audit_file=tmp_path / "a.jsonl")
    assert "GRANT UPDATE ON queuetop_demo.jobs" in caps["requeue"]
    assert "GRANT UPDATE, DELETE ON queuetop_demo.jobs" in caps["dead-letter"]
    assert "GRANT DELETE ON queuetop_demo.jobs_dead" in caps["retry-dead"]
    assert "GRANT pg_signal_backend" in caps["terminate"]
