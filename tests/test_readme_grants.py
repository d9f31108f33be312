"""The GRANT blocks of docs/security.md are the minimal grants, tested as written: the
watching role sees every section in full and may change nothing; the acting role requeues,
moves to the dead-letter table and terminates another role's session, audited."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import psycopg
import pytest
from demo_queue import claim, expire, setup_demo
from psycopg import conninfo, sql

from dashboard.cli import main

# every server of the matrix (tests/servers.py)
pytestmark = pytest.mark.matrix

# the manual's security page (it was the README's Security section)
SECURITY = Path(__file__).resolve().parent.parent / "docs" / "security.md"


def grant_blocks() -> list[str]:
    return re.findall(r"```sql\n(.*?)```", SECURITY.read_text(), re.DOTALL)


def as_statements(block: str, names: dict[str, str]) -> list[str]:
    """The block for the demo queue and this test's own role names."""
    text = re.sub(r"--[^\n]*", "", block).replace("app.jobs", "queuetop_demo.jobs")
    text = text.replace("SCHEMA app ", "SCHEMA queuetop_demo ")
    for readme_name, ours in names.items():
        text = re.sub(rf"\b{readme_name}\b", ours, text)
    return [s.strip() for s in text.split(";") if s.strip()]


@pytest.fixture
def roles(dsn):
    names = {
        "queuetop_watch": f"qt_rw_{os.getpid()}",
        "queuetop_act": f"qt_ra_{os.getpid()}",
        "other": f"qt_ro_{os.getpid()}",
    }  # a role of the application, no superuser
    setup_demo(dsn, jobs=3)
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(names["other"])))
        for block in grant_blocks():
            for statement in as_statements(block, names):
                admin.execute(statement)
    yield {k: (v, conninfo.make_conninfo(dsn, user=v)) for k, v in names.items()}
    with psycopg.connect(dsn, autocommit=True) as admin:
        for role in reversed(names.values()):
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,)
            )
            admin.execute(sql.SQL("DROP OWNED BY {0}; DROP ROLE {0}").format(sql.Identifier(role)))


def test_the_readme_has_both_blocks():
    assert len(grant_blocks()) == 2


def test_watching_grants_see_everything_and_change_nothing(roles, connect, capsys):
    _, watch = roles["queuetop_watch"]
    idle = connect(application_name="someone-idle")  # another role's idle transaction
    idle.execute("SELECT id FROM queuetop_demo.jobs LIMIT 1 FOR UPDATE")
    assert main(["snapshot", "--json", "--dsn", watch]) == 0
    snap = json.loads(capsys.readouterr().out)
    assert idle.info.backend_pid in [s["pid"] for s in snap["idle_in_transaction"]]
    assert snap["warnings"] == []
    assert main(["requeue", "1", "--force", "--dsn", watch]) == 2
    assert "GRANT UPDATE ON queuetop_demo.jobs" in capsys.readouterr().err
    idle.rollback()


def test_acting_grants_are_enough(roles, dsn, connect, capsys):
    _, act = roles["queuetop_act"]
    worker = connect(autocommit=True, application_name="worker-1")
    stale = []
    for _ in range(2):
        job_id, _ = claim(worker, "worker-1")
        expire(worker, job_id)
        stale.append(job_id)
    assert main(["requeue", str(stale[0]), "--dsn", act]) == 0
    assert main(["dead-letter", str(stale[1]), "--reason", "docs", "--dsn", act]) == 0
    _, other_dsn = roles["other"]
    other = psycopg.connect(other_dsn, application_name="someone")  # another role's session
    assert main(["terminate", str(other.info.backend_pid), "--dsn", act]) == 0
    other.close()
    capsys.readouterr()
    with psycopg.connect(dsn) as conn:
        audited = conn.execute(
            "SELECT action, db_user FROM queuetop.audit_log ORDER BY audit_id"
        ).fetchall()
    role = roles["queuetop_act"][0]
    assert audited == [("requeue", role), ("dead-letter", role), ("terminate", role)]
