"""A queue table under row-level security without a policy (graphile-worker's _private_jobs)
reads as empty to every role but its owner: queuetop refuses it in one line instead of
showing an idle queue."""

from __future__ import annotations

import os

import psycopg
import pytest
from psycopg import conninfo, sql

from dashboard.cli import main

# every server of the matrix (tests/servers.py)
pytestmark = pytest.mark.matrix

SPEC = """
[queue]
table = "app.jobs"
[queue.states]
ready = ["ready"]
running = ["running"]
"""


@pytest.fixture
def reader(dsn):
    """A role that may SELECT app.jobs, and its DSN."""
    role = f"qt_rls_{os.getpid()}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute("CREATE SCHEMA app")
        admin.execute("CREATE TABLE app.jobs (id bigserial PRIMARY KEY, status text NOT NULL)")
        admin.execute("INSERT INTO app.jobs (status) VALUES ('ready'), ('ready'), ('running')")
        admin.execute("ALTER TABLE app.jobs ENABLE ROW LEVEL SECURITY")
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        admin.execute(
            sql.SQL("GRANT USAGE ON SCHEMA app TO {0}; GRANT SELECT ON app.jobs TO {0}").format(
                sql.Identifier(role)
            )
        )
    yield conninfo.make_conninfo(dsn, user=role)
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,)
        )
        admin.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
        admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def counts(capsys, dsn: str, spec_file) -> tuple[int, str]:
    code = main(["snapshot", "--json", "--dsn", dsn, "--queue", str(spec_file)])
    return code, capsys.readouterr()


def test_rows_hidden_by_row_level_security_are_refused(reader, dsn, tmp_path, capsys):
    spec_file = tmp_path / "q.toml"
    spec_file.write_text(SPEC)
    code, out = counts(capsys, reader, spec_file)
    assert code == 2 and out.out == ""
    assert out.err.strip().splitlines() == [
        f"queuetop: error: role {conninfo.conninfo_to_dict(reader)['user']} can read no rows of "
        "app.jobs: row-level security is on and no policy grants any; connect as its owner "
        f"(postgres, who ran the migrations), a superuser or a BYPASSRLS role"
    ]
    assert counts(capsys, dsn, spec_file)[0] == 0  # the owner reads it
    with psycopg.connect(dsn, autocommit=True) as admin:  # a policy lets the reader see rows
        admin.execute("CREATE POLICY readable ON app.jobs FOR SELECT USING (true)")
    assert counts(capsys, reader, spec_file)[0] == 0
