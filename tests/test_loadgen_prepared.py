"""The worker's libpq fast path: same rows and same exceptions as a psycopg cursor."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors

from dashboard import config, db, schema
from dashboard.loadgen.prepared import Statement, number_placeholders
from dashboard.loadgen.strategies import build


@pytest.fixture
def demo_spec(dsn):
    with psycopg.connect(dsn) as conn:
        schema.init_demo(conn)
    with db.connect_monitor(dsn) as conn:
        return config.validate(conn, config.load_preset("demo"))


def test_placeholders_are_numbered_by_first_appearance():
    query, names = number_placeholders(b"SELECT %(a)s, %(b)s, %(a)s, 100 %% 7")
    assert query == b"SELECT $1, $2, $1, 100 % 7"
    assert names == ["a", "b"]


def test_a_statement_loads_rows_like_a_cursor(dsn):
    with psycopg.connect(dsn, autocommit=True) as conn:
        query = b"SELECT %(n)s::int + %(k)s, %(s)s::text, NULL::text WHERE %(s)s = 'x'"
        stmt = Statement(conn, "t_rows", query, {"s": "x"}, ("n", "k"))
        assert stmt.run(1, 2) == [(3, "x", None)]
        assert stmt.run(40, 2) == [(42, "x", None)]
        assert Statement(conn, "t_none", b"SELECT 1 WHERE false", {}).run() == []
        with pytest.raises(ValueError, match="no value for"):
            Statement(conn, "t_missing", b"SELECT %(gone)s", {}, ())


def test_a_statement_raises_what_psycopg_raises(dsn, demo_spec):
    queue_sql = build(demo_spec)
    with psycopg.connect(dsn, autocommit=True) as holder, \
            psycopg.connect(dsn, autocommit=True) as conn:
        holder.execute("INSERT INTO queuetop_demo.jobs (payload) VALUES ('x')")
        nowait = Statement(conn, "t_nowait", queue_sql.claims["nowait"].as_bytes(conn),
                           {**queue_sql.values, "worker": "w", "lease_s": 30.0}, ("batch",))
        with holder.transaction():
            holder.execute("SELECT * FROM queuetop_demo.jobs FOR UPDATE")
            with pytest.raises(errors.LockNotAvailable):
                nowait.run(1)
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        (job, token), = nowait.run(1)  # the session is still usable
        assert token is not None and job is not None
        with pytest.raises(errors.UndefinedTable):
            Statement(conn, "t_missing_table", b"SELECT * FROM no_such_table", {}).run()
        holder.execute("SELECT pg_terminate_backend(%s)", [conn.info.backend_pid])
        with pytest.raises(psycopg.OperationalError):
            nowait.run(1)
