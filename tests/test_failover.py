"""Failover with real servers: a primary and its streaming standby (pg_basebackup from the
embedded server's own bin dir). Actions refuse on the standby in one line; `watch` on a
two-host DSN (target_session_attrs=read-write) follows the primary when it stops and the
standby is promoted, and its header names the server it is on."""

from __future__ import annotations

import asyncio

import psycopg
import pytest
import servers
from test_ui_live import demo_spec, until

from dashboard.cli import main
from dashboard.ui.app import QueuetopApp
from dashboard.ui.messages import SnapshotReady
from dashboard.ui.widgets.status import StatusBar

pytestmark = pytest.mark.db  # tier: see tests/conftest.py

DB = "qt_failover"


@pytest.fixture
def pair():
    """A primary with the demo queue (3 ready jobs) and its streaming standby, caught up."""
    bindir = servers.embedded_bindir()
    primary = servers.Cluster(bindir).init().start()
    standby = None
    try:
        with psycopg.connect(primary.dsn, autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {DB}")
        primary_dsn = f"{primary.dsn} dbname={DB}"
        spec = demo_spec(primary_dsn)
        with psycopg.connect(primary_dsn, autocommit=True) as conn:
            conn.execute("INSERT INTO queuetop_demo.jobs (payload) VALUES ('a'), ('b'), ('c')")
        standby = primary.standby()
        standby_dsn = f"{standby.dsn} dbname={DB}"
        servers.wait_until(lambda: _ready_jobs(standby_dsn) == 3, "the standby to catch up")
        yield spec, primary, standby
    finally:
        for cluster in (standby, primary):
            if cluster is not None:
                cluster.remove()


def _ready_jobs(dsn: str) -> int | None:
    try:
        with psycopg.connect(dsn, connect_timeout=2) as conn:
            return conn.execute(
                "SELECT count(*) FROM queuetop_demo.jobs WHERE status = 'ready'"
            ).fetchone()[0]
    except psycopg.Error:
        return None


def test_actions_refuse_on_a_standby_in_one_line(pair, capsys):
    _, primary, standby = pair
    standby_dsn = f"{standby.dsn} dbname={DB}"
    with psycopg.connect(standby_dsn) as conn:  # ground truth: it is a standby
        assert conn.execute("SELECT pg_is_in_recovery()").fetchone()[0] is True
    assert main(["requeue", "1", "--force", "--dsn", standby_dsn]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "standby" in err and str(standby.port) in err
    assert main(["snapshot", "--json", "--dsn", standby_dsn]) == 0  # watching still works
    assert "is a standby" in capsys.readouterr().out


def test_watch_follows_the_primary_to_the_promoted_standby(pair):
    asyncio.run(_follows(*pair))


async def _follows(spec, primary, standby):
    dsn = (
        f"host=127.0.0.1,127.0.0.1 port={primary.port},{standby.port} dbname={DB} "
        "user=postgres target_session_attrs=read-write connect_timeout=2"
    )
    warnings: list[str] = []

    def hook(message) -> None:
        if isinstance(message, SnapshotReady):
            warnings.extend(message.snapshot.warnings)

    app = QueuetopApp(spec, dsn, interval=0.3)
    async with app.run_test(size=(160, 40), message_hook=hook) as pilot:
        first = f"127.0.0.1:{primary.port}"
        await until(pilot, lambda: app.snapshot and app.snapshot.server.address == first)
        assert first in app.query_one(StatusBar)._text.plain
        primary.stop()
        standby.promote()
        with psycopg.connect(f"{standby.dsn} dbname={DB}") as conn:  # ground truth
            assert conn.execute("SELECT pg_is_in_recovery()").fetchone()[0] is False
        second = f"127.0.0.1:{standby.port}"
        await until(pilot, lambda: app.snapshot.server.address == second, timeout=30)
        await until(pilot, lambda: second in app.query_one(StatusBar)._text.plain)
        assert app.snapshot.counts["ready"] == 3
        moved = [w for w in warnings if w.startswith("reconnected to another server")]
        assert len(moved) == 1 and f"now on {second}" in moved[0] and first in moved[0]
