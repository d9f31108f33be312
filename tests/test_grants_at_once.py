"""A role with pg_monitor + SELECT learns every grant an action lacks in one refusal
(the audit trail's and the queue's), not one per attempt."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import conninfo, sql
from test_actions_permissions import stale, watcher  # noqa: F401 (fixtures)

from dashboard import db
from dashboard.actions import capabilities
from dashboard.cli import main

# every server of the matrix (tests/servers.py)
pytestmark = pytest.mark.matrix

AUDIT = ("GRANT USAGE ON SCHEMA queuetop TO qt_watch", "GRANT INSERT ON queuetop.audit_log TO")


def refusal(argv: list[str], capsys) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


def test_requeue_names_every_grant(stale, watcher, capsys):  # noqa: F811
    _, job_id = stale
    err = refusal(["requeue", str(job_id), "--dsn", watcher], capsys)
    for grant in (*AUDIT, "GRANT UPDATE ON queuetop_demo.jobs TO qt_watch"):
        assert grant in err
    assert "--audit-file" in err  # the other way to an audit trail


def test_dead_letter_names_every_grant(stale, watcher, dsn, capsys):  # noqa: F811
    _, job_id = stale
    role = conninfo.conninfo_to_dict(watcher)["user"]
    with psycopg.connect(dsn, autocommit=True) as admin:  # the move reads back what it wrote
        admin.execute(
            sql.SQL("REVOKE SELECT ON queuetop_demo.jobs_dead FROM {}").format(sql.Identifier(role))
        )
    err = refusal(["dead-letter", str(job_id), "--reason", "r", "--dsn", watcher], capsys)
    for grant in (
        *AUDIT,
        "GRANT UPDATE, DELETE ON queuetop_demo.jobs TO qt_watch",
        "GRANT INSERT, SELECT ON queuetop_demo.jobs_dead TO qt_watch",
    ):
        assert grant in err


def test_terminate_names_every_grant(stale, watcher, connect, capsys):  # noqa: F811
    other = connect(application_name="someone")  # the superuser's
    err = refusal(["terminate", str(other.info.backend_pid), "--dsn", watcher], capsys)
    for grant in (*AUDIT, "GRANT pg_signal_backend TO qt_watch"):
        assert grant in err
    assert other.execute("SELECT 1").fetchone() == (1,)  # untouched


def test_dashboard_says_every_grant_up_front(stale, watcher):  # noqa: F811
    spec, _ = stale
    with db.connect_action(watcher) as conn:
        reasons = capabilities(conn, spec)
    assert all(
        grant in reasons["requeue"]
        for grant in (*AUDIT, "GRANT UPDATE ON queuetop_demo.jobs TO qt_watch")
    )
    assert all(grant in reasons["cancel"] for grant in (*AUDIT, "GRANT pg_signal_backend"))
