"""The laravel preset on Laravel's jobs table (make:queue-table's migration), driven by
DatabaseQueue's own statements from laravel/framework's source (tests/library_schemas/
laravel*.sql; PHP is not run here): a worker that reserved a job and died leaves the one
stale lease once its reservation is older than retry_after, a fresh reservation does not;
queuetop's requeue makes the job available, and Laravel's own claim takes it."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import psycopg
import pytest

from dashboard.cli import main
from dashboard.setup import schema

SCHEMAS = Path(__file__).resolve().parent / "library_schemas"
RETRY_AFTER = 90  # seconds: Laravel's default retry_after, and the preset's stale_after


def laravel_statements() -> dict[str, str]:
    """DatabaseQueue's statements by name, its `?` bindings as psycopg's placeholders."""
    text = (SCHEMAS / "laravel_worker.sql").read_text()
    found = {}
    for chunk in text.split("-- ==== ")[1:]:
        head, _, body = chunk.partition("\n")
        found[head.split(" ")[0]] = re.sub(r"\?", "%s", body.strip())
    return found


LARAVEL = laravel_statements()


def now() -> int:
    return int(time.time())


@pytest.fixture
def laravel(dsn, connect):
    conn = connect(autocommit=True)
    conn.execute((SCHEMAS / "laravel.sql").read_text())
    schema.init_audit(conn)
    return conn


def push(conn: psycopg.Connection, delay: int = 0) -> int:
    return conn.execute(
        LARAVEL["push"], ("default", 0, None, now() + delay, now(), '{"job":"SendMail"}')
    ).fetchone()[0]


def claim(conn: psycopg.Connection, at: int | None = None) -> int | None:
    """One worker's pop: the claim and the reservation in one transaction, at time `at`."""
    at = now() if at is None else at
    with conn.transaction():
        row = conn.execute(LARAVEL["claim"], ("default", at, at - RETRY_AFTER)).fetchone()
        if row is None:
            return None
        job_id, attempts = row[0], row[3]
        conn.execute(LARAVEL["reserve"], (at, attempts + 1, job_id))
    return job_id


def queuetop(capsys, *argv: str) -> tuple[int, dict | str]:
    code = main([*argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if "--json" in argv and out else err)


def test_discovered_as_laravel(laravel, dsn, capsys):
    code, found = queuetop(capsys, "discover", "--json", "--dsn", dsn)
    assert code == 0
    ours = [q for q in found["queues"] if q["table"] == "public.jobs"]
    assert [(q["adapter"], q["version"], q["confidence"]) for q in ours] == [
        ("laravel", "5.x-13.x", "high")
    ]


def test_an_expired_reservation_is_the_stale_lease_and_requeued_for_its_claim(
    laravel, dsn, connect, capsys
):
    flags = ["--preset", "laravel", "--dsn", dsn]
    worker = connect()
    # a job a worker reserved two retry_afters ago (pushed before that) and then died with
    orphan = push(laravel, delay=-3 * RETRY_AFTER)
    assert claim(worker, at=now() - 2 * RETRY_AFTER) == orphan
    # one a live worker reserved just now (Laravel's own reserve statement), one waiting,
    # one delayed by an hour
    fresh = push(laravel)
    laravel.execute(LARAVEL["reserve"], (now(), 1, fresh))
    push(laravel)
    delayed = push(laravel, delay=3600)
    code, snap = queuetop(capsys, "snapshot", "--json", *flags)
    assert code == 0
    assert {k: v for k, v in snap["counts"].items() if v} == {
        "ready": 1, "scheduled": 1, "running": 2
    }  # fmt: skip
    assert [s["id"] for s in snap["stale_leases"]] == [orphan]
    assert delayed not in (orphan, fresh)

    code, result = queuetop(capsys, "requeue", str(orphan), "--json", *flags)
    assert code == 0 and result["changed"] == [orphan], result
    assert laravel.execute(
        "SELECT reserved_at, attempts FROM jobs WHERE id = %s", (orphan,)
    ).fetchone() == (None, 1)  # available now; its attempt counted, as release keeps it
    # Laravel's own claim takes it as available (the lowest id)
    assert claim(worker) == orphan
    _, snap = queuetop(capsys, "snapshot", "--json", *flags)
    assert snap["stale_leases"] == []


def test_dead_letter_is_refused_in_one_line(laravel, dsn, connect, capsys):
    job = push(laravel, delay=-3 * RETRY_AFTER)
    assert claim(connect(), at=now() - 2 * RETRY_AFTER) == job
    code, err = queuetop(
        capsys, "dead-letter", str(job), "--reason", "poison", "--preset", "laravel",
        "--dsn", dsn,
    )  # fmt: skip
    assert code == 2 and len(err.strip().splitlines()) == 1 and "has no dead role" in err
    assert laravel.execute(
        "SELECT reserved_at IS NOT NULL FROM jobs WHERE id = %s", (job,)
    ).fetchone() == (True,)
