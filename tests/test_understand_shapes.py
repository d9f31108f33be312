"""Queues nobody described, understood from a DSN alone and checked against ground truth.

For each shape of tests/queue_shapes.py (the seeds' pt-BR tables under other names, Spanish
and uppercase words, an enum, integer codes, a boolean, a table without a state column, a
visibility timeout that deletes finished messages, composite, uuid and quoted keys, words
no list knows): discovery lists it at medium or high with a command; that command's
snapshot counts what the shape's own role conditions count; the one stuck job is the one
stale lease; `check --max-stale 0` is over; a requeue of the stuck job lets the shape's own
claim take it again; a row-lock holder and its waiter are named as PostgreSQL has them.
"""

from __future__ import annotations

import json
import shlex

import psycopg
import pytest
from conftest import Background
from helpers import is_waiting_on_lock, wait_until
from helpers.cli import run_out as run
from queue_shapes import SHAPES, Shape, claim, create, role_counts, stage

each_shape = pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])


def staged(connect, shape: Shape) -> psycopg.Connection:
    conn = connect(autocommit=True)
    create(conn, shape)
    stage(conn, shape)
    return conn


def discovered(capsys, dsn: str, table: str) -> dict:
    code, out = run(capsys, "discover", "--json", "--dsn", dsn)
    assert code == 0
    found = {q["table"]: q for q in json.loads(out)["queues"]}
    assert table in found, sorted(found)
    return found[table]


def command_flags(found: dict) -> list[str]:
    """The flags of the command discovery printed (`queuetop watch …`), DSN included."""
    words = shlex.split(found["command"])
    assert words[:2] == ["queuetop", "watch"]
    return words[2:]


def as_text(job_id: object) -> str:
    """A job id from the JSON as its id_sql prints it (a composite key: a JSON array)."""
    return json.dumps(job_id) if isinstance(job_id, list) else str(job_id)


def nonzero(counts: dict[str, int]) -> dict[str, int]:
    return {role: n for role, n in counts.items() if n}


@each_shape
def test_understood_from_a_dsn_alone(shape, dsn, connect, tmp_path, capsys):
    setup = staged(connect, shape)
    found = discovered(capsys, dsn, shape.table)
    assert found["confidence"] in ("high", "medium"), found
    flags = command_flags(found)

    # the command runs, and counts what PostgreSQL holds in each role
    code, out = run(capsys, "snapshot", "--json", *flags)
    assert code == 0
    snap = json.loads(out)
    assert nonzero(snap["counts"]) == nonzero(role_counts(setup, shape)) == shape.truth
    assert snap["unmapped"] == []
    # the stuck job is the one stale lease: no fresh job is
    stale = {as_text(lease["id"]) for lease in snap["stale_leases"]}
    assert stale == ({shape.stuck} if shape.stuck else set())
    assert snap["stale_count"] == (1 if shape.stuck else 0)

    code, out = run(capsys, "check", "--max-stale", "0", *flags)
    if shape.stuck:
        assert code == 1 and out.startswith("OVER  stale leases: 1 > max 0")
        # requeue the stuck job: the shape's own claim takes it again
        audit = str(tmp_path / "audit.jsonl")
        code, out = run(capsys, "requeue", shape.stuck, "--audit-file", audit, *flags)
        assert code == 0, out
        taken = []
        for _ in range(shape.truth["ready"] + 1):
            job = claim(setup, shape)
            taken.append(job)
            if job == shape.stuck or job is None:
                break
        assert shape.stuck in taken, taken
    else:
        assert code in (0, 3) and "OVER" not in out


@each_shape
def test_a_row_lock_holder_and_its_waiter_as_postgresql_has_them(shape, dsn, connect, capsys):
    setup = staged(connect, shape)
    setup.execute("CREATE EXTENSION IF NOT EXISTS pgrowlocks")
    flags = command_flags(discovered(capsys, dsn, shape.table))
    holder = connect(application_name="worker-holding")
    [(job,)] = holder.execute(shape.lock_ready).fetchall()  # its claim transaction, open
    waiter = connect(application_name="worker-waiting")
    waiter_pid = waiter.info.backend_pid
    blocked = Background(lambda: waiter.execute(shape.lock_ready).fetchall())
    wait_until(lambda: is_waiting_on_lock(setup, waiter_pid))
    code, out = run(capsys, "snapshot", "--json", *flags)
    assert code == 0
    snap = json.loads(out)
    holder_pid = holder.info.backend_pid
    # ground truth: who blocks the waiter, and which row the holder's transaction locks
    assert setup.execute("SELECT pg_blocking_pids(%s)", (waiter_pid,)).fetchone()[0] == [holder_pid]
    locked = setup.execute(
        f"SELECT {shape.id_sql} FROM {shape.table} AS t "
        f"JOIN pgrowlocks(%s) AS r ON r.locked_row = t.ctid WHERE %s = ANY (r.pids)",
        (shape.table, holder_pid),
    ).fetchall()
    assert locked == [(job,)]
    holders = {h["pid"]: h for h in snap["row_lock_holders"]}
    assert set(holders) == {holder_pid}
    assert [as_text(j) for j in holders[holder_pid]["job_ids"]] == [job]
    assert holders[holder_pid]["role"] == "ready"
    waits = {w["pid"]: w for w in snap["waiting"]}
    assert waits[waiter_pid]["blocked_by"] == [holder_pid]
    holder.rollback()
    blocked.join()
    waiter.rollback()
