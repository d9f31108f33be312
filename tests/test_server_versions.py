"""Every server of the matrix: each catalog statement under queries/ prepares there (its
columns and functions exist) unless it declares `-- needs: PostgreSQL N` for a newer one,
and a section whose statement needs a newer server degrades alone, in one line."""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
import pytest
from demo_queue import setup_demo

import queries
from dashboard import db
from dashboard.loadgen.lab import SETUP as LAB_SETUP
from dashboard.monitor import collect

pytestmark = pytest.mark.matrix

ROOT = Path(queries.__file__).parent
PARAM = re.compile(r"%\((\w+)\)s|%s")


def plain_statements() -> list[str]:
    """Statements without {placeholders} (those are composed per queue, and run by the
    other matrix tests), outside the adapters' own."""
    names = []
    for path in sorted(ROOT.rglob("*.sql")):
        name = path.relative_to(ROOT).with_suffix("").as_posix()
        if not name.startswith("presets/") and "{" not in path.read_text():
            names.append(name)
    return names


def as_prepared(text: str) -> str:
    numbers: dict[str, int] = {}

    def number(match: re.Match) -> str:
        key = match.group(1) or f"_{len(numbers)}"
        numbers.setdefault(key, len(numbers) + 1)
        return f"${numbers[key]}"

    return PARAM.sub(number, text).replace("%%", "%")


def test_every_catalog_statement_prepares_where_it_says_it_runs(dsn, server):
    setup_demo(dsn)  # the statements on queuetop's own tables find them
    names = plain_statements()
    assert len(names) > 30
    failed = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        for name in LAB_SETUP:  # ... and on the contention lab's scratch table
            conn.execute(queries.load(f"loadgen/lab/{name}"))
        for name in names:
            result = conn.pgconn.prepare(b"", as_prepared(queries.load(name)).encode())
            prepared = result.status == psycopg.pq.ExecStatus.COMMAND_OK
            runs_here = queries.needs(name) <= server.major
            if prepared != runs_here:
                error = (result.error_message or b"").decode().strip().splitlines()[:1]
                failed.append(f"{name} (needs {queries.needs(name)}): {error or 'prepared'}")
    assert failed == [], f"on PostgreSQL {server.major}"


def test_a_section_needing_a_newer_server_degrades_alone(dsn, server, connect, monkeypatch):
    spec = setup_demo(dsn, jobs=2)
    idle = connect(application_name="idle-one")
    idle.execute("SELECT 1")  # an idle transaction the idle section would list
    newer = server.major + 1
    real = queries.needs
    monkeypatch.setattr(
        queries,
        "needs",
        lambda name: newer if name == "monitor/get_sessions_at_once" else real(name),
    )
    with db.connect_monitor(dsn) as conn:
        snap = collect(conn, spec)
    # locks, waits and idle sessions are one statement: they go together, the rest stays
    lines = [w for w in snap.warnings if w.startswith("locks unavailable")]
    assert lines == [
        f"locks unavailable: monitor/get_sessions_at_once needs PostgreSQL {newer} "
        f"(this server is {snap.server.version})"
    ]
    assert snap.idle_in_transaction == () and snap.locks == () and snap.counts["ready"] == 2
    assert snap.server.version_num == server.version_num
    idle.rollback()


def test_the_sections_name_statements_that_exist():
    """A renamed statement must be renamed in versions.SECTION_STATEMENTS too, or its
    `-- needs:` line would go unread."""
    from dashboard.monitor import server_versions as versions

    named = [n for names in versions.SECTION_STATEMENTS.values() for n in names]
    assert named and [n for n in named if not queries.exists(n)] == []
