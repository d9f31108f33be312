"""The monitor never disturbs the queue: AccessShareLock at most, no row locks, no writes."""

from __future__ import annotations

from pathlib import Path

import pytest

import queries
from dashboard import config, db, monitor
from dashboard.setup import schema
from tests import seeds
from tests.helpers import wait_until

# every server of the matrix (tests/servers.py)
pytestmark = pytest.mark.matrix

QUERY_DIR = Path(queries.__file__).parent


@pytest.mark.parametrize("seed", seeds.SEEDS, ids=lambda s: s.preset)
def test_collect_takes_only_access_share_locks(seed, dsn, connect, background):
    setup = connect(autocommit=True)
    seeds.create(setup, seed)
    seeds.fill_ready(setup, seed, 20)
    setup.execute(seed.insert_stale)
    # A worker holds row locks and another waits, so every section of the snapshot has work.
    holder = connect()
    holder.execute(seed.ready_rows + " LIMIT 3 FOR UPDATE")
    waiter = connect()
    job = background(lambda: waiter.execute(seed.ready_rows + " LIMIT 1 FOR UPDATE").fetchall())

    mon = db.connect_monitor(dsn)
    spec = config.validate(mon, config.load_preset(seed.preset))
    wait_until(lambda: monitor.collect(mon, spec).waiting)
    # Run the whole collection inside one transaction so every lock it takes is still held
    # at the end: then pg_locks shows the union of what each statement took.
    mon.autocommit = False
    snap = monitor.collect(mon, spec)
    held = mon.execute(
        """SELECT l.locktype, l.mode, coalesce(c.relname, '')
           FROM pg_locks l LEFT JOIN pg_class c ON c.oid = l.relation
           WHERE l.pid = pg_backend_pid()"""
    ).fetchall()
    assigned_xid = mon.execute("SELECT pg_current_xact_id_if_assigned()").fetchone()[0]
    mon.rollback()

    table_name = seed.table.split(".")[-1]
    assert snap.locked["ready"] == 3
    assert (("relation", "AccessShareLock", table_name)) in held
    assert {mode for _, mode, _ in held} <= {"AccessShareLock", "ExclusiveLock"}
    # ExclusiveLock only on the transaction's own virtualxid, never on a relation or tuple.
    assert all(kind == "virtualxid" for kind, mode, _ in held if mode == "ExclusiveLock")
    assert not any(kind in ("tuple", "transactionid") for kind, _, _ in held)
    assert assigned_xid is None  # a row lock (FOR UPDATE / SHARE) would have assigned an xid
    holder.rollback()
    job.join()
    waiter.rollback()
    mon.close()


def test_monitoring_connection_is_read_only_named_and_timed(dsn):
    mon = db.connect_monitor(dsn, timeout_ms=1500)
    settings = dict(
        mon.execute(
            """SELECT name, setting FROM pg_settings WHERE name IN
           ('statement_timeout', 'lock_timeout', 'default_transaction_read_only',
            'application_name')"""
        ).fetchall()
    )
    assert settings == {
        "statement_timeout": "1500",
        "lock_timeout": "750",
        "default_transaction_read_only": "on",
        "application_name": "queuetop",
    }
    assert mon.autocommit


def test_monitor_sql_never_locks_rows():
    for path in (QUERY_DIR / "monitor").glob("*.sql"):
        text = path.read_text().upper()
        assert "SKIP LOCKED" not in text, path
        assert "FOR UPDATE" not in text and "FOR SHARE" not in text, path
        assert "FOR NO KEY" not in text and "FOR KEY SHARE" not in text, path


def test_every_query_file_starts_with_its_purpose():
    for path in QUERY_DIR.rglob("*.sql"):
        assert path.read_text().startswith("-- purpose: "), path


def test_monitor_excludes_its_own_session(dsn, connect):
    conn = connect(autocommit=True)
    schema.init_demo(conn)
    mon = db.connect_monitor(dsn)
    mon.autocommit = False  # its own transaction now holds locks and is "in transaction"
    snap = monitor.collect(mon, config.validate(mon, config.load_preset("demo")))
    own = mon.info.backend_pid
    assert own not in {lk.pid for lk in snap.locks}
    assert own not in {i.pid for i in snap.idle_in_transaction}
    mon.rollback()
    mon.close()
