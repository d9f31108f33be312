"""The password never shows, whichever way it is given (a URL, key=value, PGPASSWORD,
~/.pgpass) and whichever way queuetop speaks: errors, usage errors, text, JSON, the audit
trail (file and table), the load generator's summary and warnings, the dashboard's header,
its notifications and its 'disconnected' reason.

The test server trusts local connections, so the password is never checked; it still
travels everywhere queuetop carries a DSN, and libpq still reads PGPASSWORD and the
password file, which is what could leak.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from urllib.parse import quote

import psycopg
import pytest
from demo_queue import claim, expire, setup_demo
from helpers.cli import run_text
from helpers.pilot import until
from psycopg import conninfo, sql

from dashboard.text import redact
from dashboard.ui.app import QueuetopApp
from dashboard.ui.widgets.status import StatusBar

PASSWORD = "Hunter2%Zebra:x"
# any piece of it, raw or URL-encoded, is a leak
PIECES = ("Hunter2", "Zebra")
SOURCES = ("url", "key-value", "PGPASSWORD", "pgpass")
_roles = itertools.count()


def assert_no_password(where: str, text: str) -> None:
    for piece in PIECES:
        assert piece not in text, f"password in {where}: {text!r}"


@pytest.fixture
def role(dsn):
    name = f"qt_secret_{os.getpid()}_{next(_roles)}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(
            sql.SQL("CREATE ROLE {} LOGIN SUPERUSER PASSWORD {}").format(
                sql.Identifier(name), sql.Literal(PASSWORD)
            )
        )
    yield name
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (name,)
        )
        admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(name)))


def dsn_for(source: str, dsn: str, role: str, tmp_path, monkeypatch, port=None) -> str:
    """The --dsn to pass; the password in it, or in the environment or a password file."""
    params = {**conninfo.conninfo_to_dict(dsn), "user": role}
    if port is not None:
        params["port"] = str(port)
    if source == "url":
        return (
            f"postgresql://{role}:{quote(PASSWORD, safe='')}@/{params['dbname']}"
            f"?host={quote(params['host'], safe='')}&port={params.get('port', 5432)}"
        )
    if source == "key-value":
        return conninfo.make_conninfo(**params, password=PASSWORD)
    if source == "PGPASSWORD":
        monkeypatch.setenv("PGPASSWORD", PASSWORD)
    else:
        passfile = tmp_path / "pgpass"
        passfile.write_text(f"*:*:*:{role}:{PASSWORD.replace(':', chr(92) + ':')}\n")
        passfile.chmod(0o600)
        monkeypatch.setenv("PGPASSFILE", str(passfile))
    return conninfo.make_conninfo(**params)


@pytest.mark.parametrize("source", SOURCES)
def test_password_appears_nowhere(source, dsn, role, tmp_path, monkeypatch, connect, capsys):
    redact.forget_all()  # nothing masked by luck from an earlier test
    spec = setup_demo(dsn, jobs=3)
    worker = connect(autocommit=True, application_name="worker-1")
    job_id, _ = claim(worker, "worker-1")
    expire(worker, job_id)
    given = dsn_for(source, dsn, role, tmp_path, monkeypatch)
    unreachable = dsn_for(source, dsn, role, tmp_path, monkeypatch, port=1)
    with psycopg.connect(given) as conn:  # libpq found the password where it was put
        assert conn.info.password == PASSWORD
    audit_file = tmp_path / "audit.jsonl"

    outputs = {
        "snapshot --json": ["snapshot", "--json", "--dsn", given],
        "snapshot": ["snapshot", "--dsn", given],
        "requeue (file audit)": [
            "requeue",
            str(job_id),
            "--force",
            "--json",
            "--dsn",
            given,
            "--audit-file",
            str(audit_file),
        ],
        "dead-letter (table audit)": [
            "dead-letter",
            str(job_id),
            "--reason",
            "r",
            "--json",
            "--dsn",
            given,
        ],
        "load": [
            "load",
            "--dsn",
            given,
            "--workers",
            "1",
            "--jobs",
            "2",
            "--work-ms",
            "0",
            "--duration",
            "60",
        ],
        "load --json": [
            "load",
            "--dsn",
            given,
            "--workers",
            "1",
            "--jobs",
            "2",
            "--work-ms",
            "0",
            "--duration",
            "60",
            "--json",
        ],
        "error after connecting": ["snapshot", "--dsn", given, "--table", "no_such_table"],
        "connection error": ["snapshot", "--dsn", unreachable],
        "usage: option first": ["--dsn", given, "snapshot"],
        "usage: forgotten --dsn": ["snapshot", given],
        "usage: db status": ["db", "status", "--dsn", given],
        "usage: bad value": ["snapshot", "--dsn", given, "--interval", "0"],
    }
    codes = {}
    for where, argv in outputs.items():
        codes[where], text = run_text(capsys, *argv)
        assert_no_password(where, text)
    assert {
        codes[w]
        for w in ("snapshot --json", "requeue (file audit)", "dead-letter (table audit)", "load")
    } == {0}
    assert {codes[w] for w in outputs if "error" in w or "usage" in w} == {2}

    assert_no_password("audit file", audit_file.read_text())
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT to_jsonb(a)::text FROM queuetop.audit_log AS a").fetchall()
    assert rows
    assert_no_password("audit table", "\n".join(r[0] for r in rows))
    assert all(json.loads(r[0])["db_user"] == role for r in rows)

    asyncio.run(_dashboard_says_no_password(spec, given, unreachable))


async def _dashboard_says_no_password(spec, given: str, unreachable: str) -> None:
    app = QueuetopApp(spec, given, interval=0.5)
    async with app.run_test(size=(200, 40)) as pilot:
        header = str(app.query_one(StatusBar)._text)  # before the first poll: the DSN
        await until(pilot, lambda: app.snapshots_applied >= 1)
        header += str(app.query_one(StatusBar)._text)
    assert_no_password("header", header)
    assert_no_password("notifications", "\n".join(str(n.message) for n in app._notifications))

    app = QueuetopApp(spec, unreachable, interval=0.5)
    async with app.run_test(size=(200, 40)) as pilot:
        await until(pilot, lambda: app.source.failures >= 1)
        header = str(app.query_one(StatusBar)._text)
    assert "disconnected" in header
    assert_no_password("disconnected header", header)
