"""`queuetop load`: the table's own count of what the run finished, and the demo queue
without CREATE on the database."""

from __future__ import annotations

import itertools
import json
import os

import psycopg
import pytest
from demo_queue import setup_demo
from psycopg import conninfo, sql

from dashboard.cli import main

_roles = itertools.count()
RUN = ["--workers", "2", "--work-ms", "0", "--duration", "60"]


def test_summary_has_the_tables_own_count(dsn, capsys):
    setup_demo(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:  # finished before the run: not counted
        conn.execute("INSERT INTO queuetop_demo.jobs (status) VALUES ('done'), ('done'), ('dead')")
    assert main(["load", "--dsn", dsn, "--jobs", "30", "--json", *RUN]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["table_done"], doc["table_dead"]) == (30, 0)
    assert doc["completed"] == 30  # no worker was killed: the workers' own count agrees
    assert main(["load", "--dsn", dsn, "--jobs", "10", "--fail-rate", "1", *RUN]) == 0
    text = capsys.readouterr().out
    # every attempt fails: 10 jobs, each tried max_attempts (3) times, end dead
    assert "table: done +0  dead +10 during the run" in text.splitlines()


@pytest.fixture
def role(dsn):
    """A login role with no CREATE on the database; its DSN and name."""
    name = f"qt_load_{os.getpid()}_{next(_roles)}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(name)))
    yield conninfo.make_conninfo(dsn, user=name), name
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (name,)
        )
        admin.execute(sql.SQL("DROP OWNED BY {0}; DROP ROLE {0}").format(sql.Identifier(name)))


def test_existing_demo_queue_needs_no_create(dsn, role, capsys):
    setup_demo(dsn)
    role_dsn, name = role
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(
            sql.SQL(
                "GRANT USAGE ON SCHEMA queuetop_demo TO {0}; "
                "GRANT SELECT, INSERT, UPDATE ON queuetop_demo.jobs TO {0}; "
                "GRANT SELECT ON queuetop_demo.jobs_dead TO {0}"
            ).format(sql.Identifier(name))
        )
    assert main(["load", "--dsn", role_dsn, "--jobs", "5", "--json", *RUN]) == 0
    assert json.loads(capsys.readouterr().out)["completed"] == 5


def test_missing_demo_queue_names_the_grant(dsn, role, capsys):
    role_dsn, name = role
    assert main(["load", "--dsn", role_dsn, "--jobs", "5", *RUN]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "queuetop_demo.jobs does not exist" in err
    assert f"GRANT CREATE ON DATABASE {conninfo.conninfo_to_dict(dsn)['dbname']} TO {name}" in err
    assert "queuetop init-demo" in err
