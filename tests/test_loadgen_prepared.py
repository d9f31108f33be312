"""The worker's libpq fast path: same rows and same exceptions as a psycopg cursor."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors

from dashboard import config, db
from dashboard.loadgen.prepared import Statement, bind_fixed
from dashboard.loadgen.strategies import build
from dashboard.setup import schema


@pytest.fixture
def demo_spec(dsn):
    with psycopg.connect(dsn) as conn:
        schema.init_demo(conn)
    with db.connect_monitor(dsn) as conn:
        return config.validate(conn, config.load_preset("demo"))


def test_fixed_values_become_quoted_literals_and_varying_ones_parameters():
    def literal(value):
        return b"'" + str(value).replace("'", "''").encode() + b"'"

    query, names = bind_fixed(
        b"SELECT %(a)s, %(v)s, %(b)s, %(v)s, 100 %% 7, %(w)s",
        {"a": "it's", "b": 3},
        ("w", "v", "unused"),
        literal,
    )
    assert query == b"SELECT 'it''s', $1, '3', $1, 100 % 7, $2"
    assert names == ["v", "w"]
    with pytest.raises(ValueError, match="no value for"):
        bind_fixed(b"SELECT %(gone)s", {}, (), literal)


def test_the_claim_is_planned_once_with_the_ready_state_as_a_literal(dsn, demo_spec):
    """A partial index on the ready state serves a generic plan only if the plan knows the state:
    with `status = $1` the server would re-plan every claim."""
    queue_sql = build(demo_spec)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO queuetop_demo.jobs (payload) SELECT 'x' FROM generate_series(1, 2000)"
        )
        conn.execute("ANALYZE queuetop_demo.jobs")
        fixed = {**queue_sql.values, "worker": "w", "lease_s": 30.0, "batch": 1}
        claim = Statement(conn, "t_claim", queue_sql.claims["skip-locked"].as_bytes(conn), fixed)
        assert b"$" not in claim.query
        assert len(claim.run()) == 1
        conn.execute("SET plan_cache_mode = force_generic_plan")
        plan = "\n".join(row[0] for row in conn.execute("EXPLAIN EXECUTE t_claim"))
        assert "jobs_ready_idx" in plan, plan


def test_a_statement_loads_rows_like_a_cursor(dsn):
    with psycopg.connect(dsn, autocommit=True) as conn:
        query = b"SELECT %(n)s::int + %(k)s, %(s)s::text, NULL::text WHERE %(s)s = 'x'"
        stmt = Statement(conn, "t_rows", query, {"s": "x"}, ("n", "k"))
        assert stmt.run(1, 2) == [(3, "x", None)]
        assert stmt.run(40, 2) == [(42, "x", None)]
        assert Statement(conn, "t_none", b"SELECT 1 WHERE false", {}).run() == []


def test_a_statement_raises_what_psycopg_raises(dsn, demo_spec):
    queue_sql = build(demo_spec)
    with (
        psycopg.connect(dsn, autocommit=True) as holder,
        psycopg.connect(dsn, autocommit=True) as conn,
    ):
        holder.execute("INSERT INTO queuetop_demo.jobs (payload) VALUES ('x')")
        nowait = Statement(
            conn,
            "t_nowait",
            queue_sql.claims["nowait"].as_bytes(conn),
            {**queue_sql.values, "worker": "w", "lease_s": 30.0, "batch": 1},
        )
        with holder.transaction():
            holder.execute("SELECT * FROM queuetop_demo.jobs FOR UPDATE")
            with pytest.raises(errors.LockNotAvailable):
                nowait.run()
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        ((job, token),) = nowait.run()  # the session is still usable
        assert token is not None and job is not None
        with pytest.raises(errors.UndefinedTable):
            Statement(conn, "t_missing_table", b"SELECT * FROM no_such_table", {}).run()
        holder.execute("SELECT pg_terminate_backend(%s)", [conn.info.backend_pid])
        with pytest.raises(psycopg.OperationalError):
            nowait.run()
