"""`queuetop discover`: one database holding all twelve libraries' schemas (each made by the
library itself: its migrations, installer or published schema), two hand-rolled queues and
three decoys (orders, users with a status, an audit log). Every queue is listed with its
adapter and version, no decoy with high confidence, and each command is one `watch` runs.
"""

from __future__ import annotations

import asyncio
import json
import subprocess

import psycopg
import pytest
import test_adapter_dbos
import test_adapter_django_tasks
import test_adapter_oban
from node_apps import NodeApp
from test_adapter_dbos import Dbos
from test_adapter_django_tasks import Django

from dashboard import config, db, discover
from dashboard.cli import main
from tests.emulated_workers import SCHEMAS

HANDROLLED = """
CREATE TABLE public.email_outbox (
    id bigserial PRIMARY KEY, status text NOT NULL, payload jsonb,
    locked_at timestamptz, locked_by text, attempts int NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now());
INSERT INTO public.email_outbox (status, locked_at, locked_by)
VALUES ('queued', NULL, NULL), ('processing', now(), 'mailer-1'), ('done', now(), 'mailer-1');
CREATE SCHEMA work;
CREATE TYPE work.task_state AS ENUM ('new', 'running', 'finished', 'failed');
CREATE TABLE work.tasks (
    id bigserial PRIMARY KEY, state work.task_state NOT NULL DEFAULT 'new',
    started_at timestamptz, worker_id text, created_at timestamptz DEFAULT now());
INSERT INTO work.tasks (state) VALUES ('new'), ('new');
"""
DECOYS = """
CREATE TABLE public.orders (
    id bigserial PRIMARY KEY, status text NOT NULL, total numeric, created_at timestamptz);
INSERT INTO public.orders (status) VALUES ('pending'), ('paid'), ('shipped'), ('pending');
CREATE TABLE public.users (
    id bigserial PRIMARY KEY, email text, status text NOT NULL, last_login_at timestamptz,
    created_at timestamptz);
INSERT INTO public.users (email, status) VALUES ('a@x', 'active'), ('b@x', 'inactive');
CREATE TABLE public.audit_log (
    id bigserial PRIMARY KEY, action text NOT NULL, actor text, at timestamptz DEFAULT now(),
    detail jsonb);
"""
# table -> (adapter, version) as discovery must name them
EXPECTED = {
    "public.procrastinate_jobs": ("procrastinate", "3.x"),
    "public.pgqueuer": ("pgqueuer", "1.x"),
    "public.chancy_jobs": ("chancy", "0.26"),
    "public.oban_jobs": ("oban", "0.7 (Python port)"),
    "pgboss.job": ("pg-boss", "12.38"),
    "graphile_worker._private_jobs": ("graphile-worker", "0.18"),
    "public.river_job": ("river", "0.43"),
    "public.good_jobs": ("good-job", "4.x"),
    "public.solid_queue_jobs": ("solid-queue", "1.x"),
    "public.que_jobs": ("que", "2.x"),
    "public.django_tasks_database_dbtaskresult": ("django-tasks", "0.13"),
    "dbos.workflow_status": ("dbos", "3.4"),
    "public.email_outbox": (None, None),
    "work.tasks": (None, None),
}
DECOY_TABLES = {"public.orders", "public.users", "public.audit_log"}
# the interpreters those adapters' tests build (cached venvs under .cache/)
oban_python = test_adapter_oban.oban_python
django_python = test_adapter_django_tasks.django_python
dbos_python = test_adapter_dbos.dbos_python


def published_schema(conn: psycopg.Connection, lib: str) -> None:
    """River's, good_job's, Solid Queue's and Que's schema from their migration SQL."""
    text = (SCHEMAS / f"{lib}.sql").read_text()
    for chunk in text.split("\n-- ==== ") if lib == "river" else [text]:
        with conn.transaction():
            conn.execute(("-- " + chunk).encode())


def chancy_schema(dsn: str) -> None:
    from chancy import Chancy

    async def migrate() -> None:
        async with Chancy(dsn) as app:
            await app.migrate()

    asyncio.run(migrate())


def pgqueuer_schema(dsn: str) -> None:
    from pgqueuer import Queries

    async def install() -> None:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            await Queries.from_psycopg_connection(conn).install()

    asyncio.run(install())


@pytest.fixture
def twelve(dsn, connect, tmp_path, request):
    """Every library's schema in one database, made by the library (or its published SQL)."""
    from procrastinate import App, PsycopgConnector

    conn = connect(autocommit=True)
    conn.execute(App(connector=PsycopgConnector()).schema_manager.get_schema())
    pgqueuer_schema(dsn)
    chancy_schema(dsn)
    for lib in ("river", "good_job", "solid_queue", "que"):
        published_schema(conn, lib)
    NodeApp(
        "graphile-worker-0.18.0", ["graphile-worker@0.18.0"], "graphile_app.mjs", dsn, tmp_path
    ).run("setup", "{}")
    NodeApp("pg-boss", ["pg-boss@12.38.0"], "pgboss_app.mjs", dsn, tmp_path).run(
        "setup", json.dumps({"queues": {"q": {}}})
    )
    oban = request.getfixturevalue("oban_python")
    subprocess.run([str(oban.parent / "oban"), "install", "--dsn", dsn], check=True)
    Django(request.getfixturevalue("django_python"), dsn, tmp_path).run(
        "manage.py", "migrate", "--verbosity", "0"
    )
    Dbos(request.getfixturevalue("dbos_python"), dsn, tmp_path).app("migrate")
    conn.execute(HANDROLLED)
    conn.execute(DECOYS)
    return dsn


def test_discover_lists_every_queue_with_its_adapter_and_version_and_no_decoy(twelve, capsys):
    assert main(["discover", "--json", "--dsn", twelve]) == 0
    listed = json.loads(capsys.readouterr().out)["queues"]
    assert all(set(q) >= {"table", "adapter", "version", "confidence", "command"} for q in listed)
    by_table = {q["table"]: q for q in listed}
    assert {t: (by_table[t]["adapter"], by_table[t]["version"]) for t in EXPECTED} == EXPECTED
    # a library by its version marker: high; a table nobody described, understood from its
    # catalog and rows (a few rows, no CHECK, no workers' statements): at least medium
    assert all(by_table[t]["confidence"] == "high" for t in EXPECTED if by_table[t]["adapter"])
    assert all(by_table[t]["confidence"] in ("high", "medium") for t in EXPECTED)
    # no decoy is a queue with high confidence (a listed decoy is at most low)
    assert all(by_table[t]["confidence"] == "low" for t in DECOY_TABLES & set(by_table))
    # nothing else: no library's own side tables (workers, logs, migrations) as a queue
    assert set(by_table) - DECOY_TABLES == set(EXPECTED)

    # each command is what `watch` runs: its spec validates against this database
    with db.connect_monitor(twelve) as conn:
        found = {str(f.table): f for f in discover.find_queues(conn)}
        for table, queue in by_table.items():
            assert queue["command"] == found[table].command(db.safe_dsn(twelve))
            if table in EXPECTED:
                spec = config.validate(conn, discover.spec_for(found[table]))
                assert str(spec.table) == table
    assert by_table["public.email_outbox"]["command"].startswith(
        "queuetop watch --table public.email_outbox --dsn "
    )
    assert by_table["work.tasks"]["command"].startswith("queuetop watch --table work.tasks --dsn ")
    assert by_table["work.tasks"]["pin_flags"][:6] == [
        "--table",
        "work.tasks",
        "--id-column",
        "id",
        "--status-column",
        "state",
    ]
    assert by_table["pgboss.job"]["command"].startswith("queuetop watch --preset pg-boss --dsn ")

    # a graphile-worker migration the preset does not know (an upgrade ahead of queuetop):
    # discovery says so, and the preset refuses it in one line naming both versions
    with psycopg.connect(twelve, autocommit=True) as conn:
        conn.execute("INSERT INTO graphile_worker.migrations (id, breaking) VALUES (21, false)")
    capsys.readouterr()
    assert main(["discover", "--json", "--dsn", twelve]) == 0
    graphile = next(
        q
        for q in json.loads(capsys.readouterr().out)["queues"]
        if q["table"] == "graphile_worker._private_jobs"
    )
    assert (graphile["confidence"], graphile["version"], graphile["why"]) == (
        "medium",
        None,
        ["migration 21, which preset graphile-worker does not support"],
    )
    assert main(["snapshot", "--preset", "graphile-worker", "--dsn", twelve]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "queuetop: error: graphile-worker at graphile_worker._private_jobs: found migration "
        "21; preset graphile-worker supports 0.17 (migration 19), 0.18 (migration 20). Use a "
        "supported graphile-worker release, or copy the preset and adapt its SQL"
    ]
