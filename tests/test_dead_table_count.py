"""The dead-letter table's rows in one statement per poll: an ordinary count while the
table is small (or when asked), the catalog's live rows beyond; the count is not run when
the estimate is given (the server's own scan counter says so)."""

from __future__ import annotations

import psycopg

from dashboard.models.spec import TableName
from dashboard.monitor.finished import count_dead_table

TABLE = TableName("dead_jobs", "public")


def scans(conn: psycopg.Connection) -> int:
    """Scans of the table in this transaction, as the server counts them."""
    return conn.execute(
        "SELECT pg_stat_get_xact_numscans('public.dead_jobs'::regclass)"
    ).fetchone()[0]


def test_small_tables_are_counted_and_large_ones_estimated_without_a_scan(connect):
    setup = connect(autocommit=True)
    setup.execute("CREATE TABLE dead_jobs (id bigint PRIMARY KEY, payload text)")
    setup.execute("INSERT INTO dead_jobs SELECT g, 'x' FROM generate_series(1, 250) AS g")
    setup.execute("ANALYZE dead_jobs")
    truth = setup.execute("SELECT count(*) FROM dead_jobs").fetchone()[0]
    setup.execute("DELETE FROM dead_jobs WHERE id <= 10")
    now = setup.execute("SELECT count(*) FROM dead_jobs").fetchone()[0]
    assert (truth, now) == (250, 240)

    conn = connect()  # one transaction: the scan counter is this transaction's
    before = scans(conn)
    assert count_dead_table(conn, TABLE, limit=1000, exact=False) == (240, False)
    counted = scans(conn)
    assert counted > before  # the count read the table

    rows, estimated = count_dead_table(conn, TABLE, limit=100, exact=False)
    # the catalog's figure: analyzed at 250, its live-row counter 240 once the delete's
    # statistics are flushed (asynchronously); the scan counter says it was not a count
    assert estimated and rows in (240, 250)
    assert scans(conn) == counted

    assert count_dead_table(conn, TABLE, limit=100, exact=True) == (240, False)
    assert scans(conn) > counted
    conn.rollback()
