"""Guarded cancel and terminate: pid reuse and sessions that moved on are skipped."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import psycopg
import pytest
from demo_queue import audit_rows
from helpers import wait_until

from dashboard import db, monitor
from dashboard.actions import ObservedSession, TableAudit, cancel, observe_session, terminate
from dashboard.setup import schema

# every server of the matrix (tests/servers.py)
pytestmark = pytest.mark.matrix


@pytest.fixture
def action(dsn):
    with psycopg.connect(dsn) as conn:
        schema.init_audit(conn)
    conn = db.connect_action(dsn)
    yield conn
    conn.close()


def _state(conn, pid):
    row = conn.execute("SELECT state FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
    return row[0] if row else None


def test_terminate_an_idle_transaction_from_the_snapshot(dsn, connect, action):
    from demo_queue import setup_demo

    spec = setup_demo(dsn)
    idle = connect(application_name="forgetful")
    idle.execute("SELECT 1")
    pid = idle.info.backend_pid
    with db.connect_monitor(dsn) as mon:
        snap = monitor.collect(mon, spec)
    [seen] = [ObservedSession.from_idle(i) for i in snap.idle_in_transaction if i.pid == pid]
    assert seen.xact_start is not None
    result = terminate(action, seen, audit=TableAudit(), reason="holds xmin")
    assert result.changed == (str(pid),)
    with psycopg.connect(dsn, autocommit=True) as look:
        wait_until(lambda: _state(look, pid) is None)
        [row] = audit_rows(look)
    assert (row["action"], row["to_state"]) == ("terminate", "terminated")
    assert row["outcome"] == "changed"
    assert row["from_state"]["application_name"] == "forgetful"


def test_cancel_an_active_query(dsn, connect, action, background):
    busy = connect(autocommit=True, application_name="slow")
    pid = busy.info.backend_pid
    run = background(lambda: busy.execute("SELECT pg_sleep(30)"))
    with psycopg.connect(dsn, autocommit=True) as look:
        wait_until(lambda: _state(look, pid) == "active")
    seen = observe_session(action, pid)
    assert cancel(action, seen, audit=TableAudit()).changed == (str(pid),)
    with pytest.raises(psycopg.errors.QueryCanceled):
        run.join()


def test_a_pid_whose_backend_start_differs_is_refused(connect, action):
    other = connect(application_name="victim")
    seen = observe_session(action, other.info.backend_pid)
    reused = replace(seen, backend_start=seen.backend_start - timedelta(seconds=5))
    for act in (cancel, terminate):
        result = act(action, reused, audit=TableAudit())
        assert result.changed == ()
        assert [s.reason for s in result.skipped] == ["pid reused: backend start differs"]
    assert not other.closed and other.execute("SELECT 1").fetchone() == (1,)


def test_a_session_that_moved_on_or_left_is_skipped(dsn, connect, action):
    idle = connect(application_name="worker")
    idle.execute("SELECT 1")
    pid = idle.info.backend_pid
    seen = observe_session(action, pid)
    assert seen.state == "idle in transaction"
    idle.commit()  # the transaction the operator saw is over
    result = terminate(action, seen, audit=TableAudit())
    assert [s.reason for s in result.skipped] == ["session moved on: now idle"]
    idle.execute("SELECT 1")  # a new transaction, idle again: not the one observed
    result = terminate(action, seen, audit=TableAudit())
    assert [s.reason for s in result.skipped] == ["session moved on: another transaction"]
    idle.close()
    with psycopg.connect(dsn, autocommit=True) as look:
        wait_until(lambda: _state(look, pid) is None)
    result = cancel(action, seen, audit=TableAudit())
    assert [s.reason for s in result.skipped] == ["session gone"]
    own = observe_session(action, action.info.backend_pid)
    assert [s.reason for s in cancel(action, own, audit=TableAudit()).skipped] == ["own session"]


def test_dry_run_signals_nothing(connect, action):
    other = connect(application_name="victim")
    seen = observe_session(action, other.info.backend_pid)
    result = terminate(action, seen, audit=TableAudit(), dry_run=True)
    assert result.dry_run and result.changed == (str(seen.pid),)
    assert other.execute("SELECT 1").fetchone() == (1,)


def test_server_processes_are_never_signalled(dsn, action):
    with psycopg.connect(dsn, autocommit=True) as look:
        row = look.execute(
            "SELECT pid FROM pg_stat_activity WHERE backend_type <> 'client backend' LIMIT 1"
        ).fetchone()
    assert row is not None, "a superuser sees the checkpointer and other server processes"
    seen = observe_session(action, row[0])
    result = terminate(action, seen, audit=TableAudit(), dry_run=True)
    assert result.changed == () and result.skipped[0].reason.startswith("not a client session")
