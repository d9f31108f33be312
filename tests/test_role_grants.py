"""Managed-service roles on every server: what a watching role was not granted costs only
what it serves, and the line saying so names the GRANT that fixes it (run here, by an
admin, the next snapshot is whole)."""

from __future__ import annotations

import json
import os
import re

import psycopg
import pytest
from demo_queue import claim, setup_demo
from psycopg import conninfo, sql

from dashboard.cli import main
from tests.library_adapters import library_db

pytestmark = pytest.mark.matrix

WORKERS_SPEC = """
[queue]
table = "queuetop_demo.jobs"
id = "id"
status = "status"
started_at = "started_at"
worker = "worker"

[queue.states]
ready = ["ready"]
running = ["running"]
done = ["done"]
failed = ["failed"]
dead = ["dead"]

[queue.workers]
table = "queuetop_demo.workers"
key = "name"
last_seen = "last_seen"
timeout = "30 seconds"
"""


@pytest.fixture
def watcher(dsn):
    """A role with pg_monitor and SELECT on the queue table only, as a managed service's
    monitoring role is often set up; its DSN."""
    role = f"qt_watch_{os.getpid()}"
    setup_demo(dsn, jobs=3)
    with psycopg.connect(dsn, autocommit=True) as admin:
        for statement in (
            "CREATE ROLE {} LOGIN",
            "GRANT pg_monitor TO {}",
            "GRANT USAGE ON SCHEMA queuetop_demo TO {}",
            "GRANT SELECT ON queuetop_demo.jobs TO {}",
        ):
            admin.execute(sql.SQL(statement).format(sql.Identifier(role)))
    yield role, conninfo.make_conninfo(dsn, user=role)
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,)
        )
        admin.execute(sql.SQL("DROP OWNED BY {0}; DROP ROLE {0}").format(sql.Identifier(role)))


def snapshot(capsys, *argv: str) -> dict:
    assert main(["snapshot", "--json", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def grants_in(line: str) -> list[str]:
    """The GRANT statements a line names, as an admin would paste them."""
    return re.findall(r"GRANT [^;]+? TO \S+?(?=;|$)", line)


def run_grants(dsn: str, line: str) -> None:
    statements = grants_in(line)
    assert statements, line
    with psycopg.connect(dsn, autocommit=True) as admin:
        for statement in statements:
            admin.execute(statement)


def test_no_select_on_the_dead_letter_table_costs_only_its_rows(dsn, watcher, capsys):
    role, watch = watcher
    with psycopg.connect(dsn, autocommit=True) as admin:  # one job already dead-lettered
        admin.execute(
            "WITH moved AS (DELETE FROM queuetop_demo.jobs WHERE id = 1 RETURNING *) "
            "INSERT INTO queuetop_demo.jobs_dead SELECT * FROM moved"
        )
    snap = snapshot(capsys, "--dsn", watch)
    assert snap["counts"]["ready"] == 2
    lines = [w for w in snap["warnings"] if "jobs_dead" in w]
    assert len(lines) == 1 and f"GRANT SELECT ON queuetop_demo.jobs_dead TO {role}" in lines[0]
    run_grants(dsn, lines[0])
    snap = snapshot(capsys, "--dsn", watch)
    assert snap["warnings"] == [] and snap["counts"]["dead"] == 1


def test_no_select_on_the_workers_table_costs_only_the_stale_leases(
    dsn, watcher, connect, tmp_path, capsys
):
    role, watch = watcher
    spec = tmp_path / "queue.toml"
    spec.write_text(WORKERS_SPEC)
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(
            "CREATE TABLE queuetop_demo.workers (name text PRIMARY KEY, last_seen timestamptz);"
            "INSERT INTO queuetop_demo.workers VALUES ('gone', now() - interval '5 minutes')"
        )
    claim(connect(autocommit=True), "gone")  # its worker's heartbeat is 5 minutes old
    as_admin = snapshot(capsys, "--dsn", dsn, "--queue", str(spec))
    assert as_admin["stale_count"] == 1 and as_admin["warnings"] == []
    snap = snapshot(capsys, "--dsn", watch, "--queue", str(spec))
    assert (snap["counts"]["ready"], snap["counts"]["running"]) == (2, 1)
    assert snap["stale_count"] is None and snap["stale_leases"] == []
    lines = [w for w in snap["warnings"] if "workers" in w]
    assert len(lines) == 1 and f"GRANT SELECT ON queuetop_demo.workers TO {role}" in lines[0]
    run_grants(dsn, lines[0])
    snap = snapshot(capsys, "--dsn", watch, "--queue", str(spec))
    assert snap["warnings"] == [] and snap["stale_count"] == 1


def test_no_select_on_the_audit_table_is_one_line_with_its_grants(dsn, watcher, capsys):
    role, watch = watcher
    assert main(["audit", "--dsn", watch]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "queuetop.audit_log" in err
    run_grants(dsn, err)
    assert main(["audit", "--json", "--dsn", watch]) == 0


def test_an_adapters_workers_table_out_of_reach_costs_only_the_stale_leases(dsn, watcher, capsys):
    """Solid Queue's schema (no library needed): a claim whose process stopped beating."""
    role, watch = watcher
    with library_db(dsn, "solid_queue") as admin:
        admin.execute(
            "INSERT INTO solid_queue_processes (id, kind, last_heartbeat_at, pid, hostname, "
            "created_at, name) VALUES (7, 'Worker', now() AT TIME ZONE 'UTC' - interval "
            "'1 hour', 4242, 'h', now(), 'worker-7');"
            "INSERT INTO solid_queue_jobs (id, queue_name, class_name, created_at, updated_at) "
            "VALUES (1, 'default', 'Job', now(), now()), (2, 'default', 'Job', now(), now());"
            "INSERT INTO solid_queue_claimed_executions (job_id, process_id, created_at) "
            "VALUES (1, 7, now());"
            "INSERT INTO solid_queue_ready_executions (job_id, queue_name, created_at) "
            "VALUES (2, 'default', now())"
        )
        for (table,) in admin.execute(
            "SELECT tablename FROM pg_tables WHERE tablename LIKE 'solid_queue%%' "
            "AND tablename <> 'solid_queue_processes'"
        ).fetchall():
            admin.execute(
                sql.SQL("GRANT SELECT ON {} TO {}").format(
                    sql.Identifier(table), sql.Identifier(role)
                )
            )
    as_admin = snapshot(capsys, "--preset", "solid-queue", "--dsn", dsn)
    assert as_admin["stale_count"] == 1
    snap = snapshot(capsys, "--preset", "solid-queue", "--dsn", watch)
    assert (snap["counts"]["ready"], snap["counts"]["running"]) == (1, 1)
    assert snap["stale_count"] is None
    lines = [w for w in snap["warnings"] if "solid_queue_processes" in w]
    assert len(lines) == 1 and f"solid_queue_processes TO {role}" in lines[0], snap["warnings"]
    run_grants(dsn, lines[0])
    assert snapshot(capsys, "--preset", "solid-queue", "--dsn", watch)["stale_count"] == 1
