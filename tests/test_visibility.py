"""A role without pg_monitor does not see other roles' lock waits and idle transactions:
the snapshot says which sections are partial and which grant fixes it."""

from __future__ import annotations

import itertools
import json
import os

import psycopg
import pytest
from demo_queue import setup_demo
from helpers import is_waiting_on_lock, wait_until
from psycopg import conninfo, sql

from dashboard.cli import main

# every server of the matrix (tests/servers.py)
pytestmark = pytest.mark.matrix

_roles = itertools.count()


def make_role(dsn: str, *grants: str) -> str:
    role = f"qt_vis_{os.getpid()}_{next(_roles)}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        for grant in (
            "GRANT USAGE ON SCHEMA queuetop_demo TO {}",
            "GRANT SELECT ON ALL TABLES IN SCHEMA queuetop_demo TO {}",
            *grants,
        ):
            admin.execute(sql.SQL(grant).format(sql.Identifier(role)))
    return role


@pytest.fixture
def roles(dsn):
    made: list[str] = []
    yield lambda *grants: made.append(make_role(dsn, *grants)) or made[-1]
    with psycopg.connect(dsn, autocommit=True) as admin:
        for role in made:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,)
            )
            admin.execute(sql.SQL("DROP OWNED BY {0}; DROP ROLE {0}").format(sql.Identifier(role)))


def snapshot_as(dsn: str, role: str, capsys) -> dict:
    assert main(["snapshot", "--json", "--dsn", conninfo.make_conninfo(dsn, user=role)]) == 0
    return json.loads(capsys.readouterr().out)


def test_hidden_sessions_are_named_with_the_grant(dsn, connect, background, roles, capsys):
    setup_demo(dsn, jobs=1)
    holder = connect(application_name="holder")  # the superuser's sessions: another role
    holder.execute("SELECT id FROM queuetop_demo.jobs FOR UPDATE")
    waiter = connect(application_name="waiter")
    wait = background(lambda: waiter.execute("SELECT id FROM queuetop_demo.jobs FOR UPDATE"))
    wait_until(lambda: is_waiting_on_lock(connect(autocommit=True), waiter.info.backend_pid))
    try:
        blind = snapshot_as(dsn, roles(), capsys)
        seeing = snapshot_as(dsn, roles("GRANT pg_monitor TO {}"), capsys)
        stats_only = snapshot_as(dsn, roles("GRANT pg_read_all_stats TO {}"), capsys)
    finally:
        holder.rollback()
        wait.join()
        waiter.rollback()
    # what the blind role misses, silently but for the warning: the idle transaction, and
    # what the waiter is doing (its wait itself is in pg_locks, which every role reads)
    assert blind["idle_in_transaction"] == []
    [wait] = blind["waiting"]
    assert (wait["pid"], wait["query"], wait["backend_start"]) == (
        waiter.info.backend_pid,
        "<insufficient privilege>",
        None,
    )
    [warning] = [w for w in blind["warnings"] if "cannot see other roles' sessions" in w]
    assert "idle in transaction leaves theirs out" in warning
    assert "GRANT pg_monitor TO qt_vis_" in warning and "pg_read_all_stats" in warning
    for full in (seeing, stats_only):
        assert [w["pid"] for w in full["waiting"]] == [waiter.info.backend_pid]
        assert not any("cannot see" in w for w in full["warnings"])
