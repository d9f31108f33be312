"""The queue shapes of tests/queue_shapes.py checked against PostgreSQL itself: each stages
what its ground truth says, its roles split the rows, its stuck job is the one old claim,
and its own claim and row lock do what its workers' would."""

from __future__ import annotations

import psycopg
import pytest
from helpers import is_waiting_on_lock, wait_until
from psycopg import sql
from queue_shapes import (
    DECOYS,
    ROLES,
    SHAPES,
    UNMAPPABLE,
    UNMAPPED_ROWS,
    Shape,
    claim,
    create,
    stage,
)
from queue_shapes import role_counts as count_roles

ALL = (*SHAPES, UNMAPPABLE)
each_shape = pytest.mark.parametrize("shape", ALL, ids=[s.name for s in ALL])


def staged(connect, shape: Shape) -> psycopg.Connection:
    conn = connect(autocommit=True)
    create(conn, shape)
    stage(conn, shape)
    return conn


def ids(conn: psycopg.Connection, shape: Shape, role: str) -> set[str]:
    query = f"SELECT {shape.id_sql} FROM {shape.table} WHERE {shape.roles[role]}"
    return {row[0] for row in conn.execute(query)}


def test_names_are_unique_and_roles_canonical():
    assert len({s.name for s in ALL}) == len(ALL)
    assert len({s.table for s in ALL}) == len(ALL)
    for shape in ALL:
        assert set(shape.roles) == set(shape.truth), shape.name
        assert set(shape.roles) <= set(ROLES)
        assert {"ready", "running"} <= set(shape.roles), shape.name
        assert len(set(shape.truth.values())) == len(shape.truth), shape.name  # no swap hides


@each_shape
def test_table_is_named_as_the_catalog_quotes_it(connect, shape):
    conn = staged(connect, shape)
    name = conn.execute(
        """SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname)
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.oid = %s::regclass""",
        (shape.table,),
    ).fetchone()[0]
    assert name == shape.table


@each_shape
def test_roles_split_the_rows_and_count_the_truth(connect, shape):
    """Every row in exactly one role (UNMAPPABLE: its on-hold rows in none)."""
    conn = staged(connect, shape)
    hits = " + ".join(f"coalesce(({cond})::int, 0)" for cond in shape.roles.values())
    none, several, total = conn.execute(
        f"""SELECT count(*) FILTER (WHERE hits = 0), count(*) FILTER (WHERE hits > 1), count(*)
        FROM (SELECT {hits} AS hits FROM {shape.table}) r"""
    ).fetchone()
    unmapped = UNMAPPED_ROWS if shape is UNMAPPABLE else 0
    assert (none, several) == (unmapped, 0)
    assert total == sum(shape.truth.values()) + unmapped
    assert count_roles(conn, shape) == shape.truth


@each_shape
def test_the_stuck_job_is_the_one_running_row_untouched_for_hours(connect, shape):
    """Running rows: the stuck one has no time newer than 2 hours (claim, lease, heartbeat,
    updated), each fresh one has one (its claim, 10 seconds ago)."""
    conn = staged(connect, shape)
    times = conn.execute(
        """SELECT attname FROM pg_attribute
        WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped
          AND atttypid = 'timestamptz'::regtype ORDER BY attnum""",
        (shape.table,),
    ).fetchall()
    latest = sql.SQL("greatest({})").format(sql.SQL(", ").join(sql.Identifier(t) for (t,) in times))
    query = sql.SQL("SELECT {}, {} > now() - interval '2 hours' FROM {} WHERE {}").format(
        sql.SQL(shape.id_sql), latest, sql.SQL(shape.table), sql.SQL(shape.roles["running"])
    )
    old = {job for job, recent in conn.execute(query) if not recent}
    assert old == ({shape.stuck} if shape.stuck is not None else set())
    if shape.stuck is not None:
        assert shape.stuck in ids(conn, shape, "running")


def test_a_visibility_timeout_queue_shows_a_message_read_many_times_as_ready(connect):
    vt = next(s for s in SHAPES if s.name == "vt_messages")
    conn = staged(connect, vt)
    row = conn.execute(f"SELECT {vt.roles['ready']} FROM q_emails WHERE read_ct = 7").fetchall()
    assert row == [(True,)]


@each_shape
def test_the_claim_takes_a_ready_row_and_runs_it(connect, shape):
    conn = staged(connect, shape)
    ready = ids(conn, shape, "ready")
    job = claim(connect(), shape)
    assert job in ready
    assert job not in ids(conn, shape, "ready")
    assert job in ids(conn, shape, "running")
    assert count_roles(conn, shape)["ready"] == shape.truth["ready"] - 1


@each_shape
def test_lock_ready_row_locks_a_ready_row_that_claims_skip_and_lockers_wait_for(
    connect, background, shape
):
    assert shape.lock_ready
    conn = staged(connect, shape)
    conn.execute("CREATE EXTENSION IF NOT EXISTS pgrowlocks")
    holder = connect(application_name="holder")
    (job,) = holder.execute(shape.lock_ready).fetchone()
    assert job in ids(conn, shape, "ready")

    locks = conn.execute("SELECT modes, pids FROM pgrowlocks(%s)", (shape.table,)).fetchall()
    assert locks == [(["For Update"], [holder.info.backend_pid])]
    held = conn.execute(
        f"""SELECT {shape.id_sql} FROM {shape.table}
        WHERE ctid IN (SELECT locked_row FROM pgrowlocks(%s))""",
        (shape.table,),
    ).fetchall()
    assert held == [(job,)]

    other = claim(connect(), shape)  # SKIP LOCKED: another ready row
    assert other is not None and other != job

    waiter = connect(application_name="waiter")
    waiting = background(lambda: waiter.execute(shape.lock_ready).fetchone())
    wait_until(lambda: is_waiting_on_lock(conn, waiter.info.backend_pid))
    holder.rollback()
    assert waiting.join() == (job,)  # the same row, once the holder let go
    waiter.rollback()


def test_decoys_create_tables_with_rows(connect):
    conn = connect(autocommit=True)
    conn.execute(DECOYS)
    for table in ("orders", "users", "audit_log", "settings", "payments"):
        assert conn.execute(f"SELECT count(*) FROM public.{table}").fetchone()[0] > 0, table
