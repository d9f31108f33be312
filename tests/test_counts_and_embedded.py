"""Exact versus estimated counts, the oldest-ready age, and the embedded server commands."""

from __future__ import annotations

from importlib import resources

import psycopg
import pytest

from dashboard import config, db, monitor
from dashboard.cli import main
from dashboard.setup import schema

pytestmark = pytest.mark.db  # tier: see tests/conftest.py


@pytest.mark.matrix
def test_large_table_estimates_finished_states_and_counts_active_exactly(dsn, connect, tmp_path):
    setup = connect(autocommit=True)
    schema.init_demo(setup)
    setup.execute("""INSERT INTO queuetop_demo.jobs (status, created_at)
                     SELECT CASE WHEN g % 10 = 0 THEN 'failed' ELSE 'done' END, now()
                     FROM generate_series(1, 3000) g""")
    setup.execute("""INSERT INTO queuetop_demo.jobs (status, created_at)
                     SELECT 'ready', now() - interval '90 seconds' FROM generate_series(1, 7) g""")
    setup.execute("ANALYZE queuetop_demo.jobs")
    spec_file = tmp_path / "big.toml"
    text = resources.files("dashboard").joinpath("presets", "demo.toml").read_text()
    spec_file.write_text(text + "exact_count_limit = 1000\n")

    with db.connect_monitor(dsn) as mon:
        spec = config.validate(mon, config.load_file(spec_file))
        assert spec.policy.exact_count_limit == 1000
        snap = monitor.collect(mon, spec)
    assert snap.estimated == ("done", "failed", "dead")
    assert snap.counts["ready"] == 7  # exact, through the partial index
    assert 2500 <= snap.counts["done"] <= 3000  # from pg_stats, not a scan
    assert 150 <= snap.counts["failed"] <= 450
    assert snap.oldest_ready_age_s >= 90

    with db.connect_monitor(dsn) as mon:
        exact = monitor.collect(mon, config.validate(mon, config.load_preset("demo")))
    assert exact.estimated == ()
    assert (exact.counts["done"], exact.counts["failed"]) == (2700, 300)


def test_embedded_server_lifecycle(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("QUEUETOP_HOME", str(tmp_path / "home"))
    assert main(["db", "status"]) == 3
    assert "stopped" in capsys.readouterr().out
    assert main(["db", "start"]) == 0
    assert "embedded PostgreSQL running" in capsys.readouterr().out
    try:
        assert main(["db", "url"]) == 0
        url = capsys.readouterr().out.strip()
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        assert main(["db", "status"]) == 0
        assert url in capsys.readouterr().out
        assert db.resolve_target(None) == db.Target(url, embedded=True)
    finally:
        assert main(["db", "stop"]) == 0
    assert "stopped" in capsys.readouterr().out
    assert main(["db", "status"]) == 3
    # Started again in the same process, it really runs (the package caches handles).
    try:
        again = db.start_embedded()
        with psycopg.connect(again) as conn:
            assert conn.execute("SELECT 2").fetchone() == (2,)
    finally:
        db.stop_embedded()


def test_dsn_resolution_order(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgresql://from-env/db")
    assert db.resolve_target("postgresql://flag/db").dsn == "postgresql://flag/db"
    assert db.resolve_target(None) == db.Target("postgresql://from-env/db", embedded=False)
    monkeypatch.delenv("DATABASE_URL")
    monkeypatch.setenv("PGHOST", "somewhere")
    assert db.resolve_target(None) == db.Target("", embedded=False)


def test_safe_dsn_drops_password():
    assert "pw" not in db.safe_dsn("postgresql://user:pw@host:5433/db")
    assert "pw" not in db.safe_dsn("host=h password=pw dbname=d")
    assert "dbname=d" in db.safe_dsn("host=h password=pw dbname=d")
