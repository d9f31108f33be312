"""The queue-classic preset on queue_classic 4.x's published schema, driven by its own
statements from its source (tests/library_schemas/queue_classic*.sql; Ruby's gem is not
packaged here): a worker session that locks a job and dies leaves the one stale lease
(its pid gone, as QC.unlock_jobs_of_dead_workers decides), a live one does not; after
queuetop's requeue, QC's own recovery finds nothing left to do and its own lock takes the
job again."""

from __future__ import annotations

import json
import re
from pathlib import Path

import psycopg
import pytest
from helpers import wait_until
from psycopg.types.json import Jsonb

from dashboard.cli import main
from dashboard.setup import schema

SCHEMAS = Path(__file__).resolve().parent / "library_schemas"


def qc_statements() -> dict[str, str]:
    """queue_classic's own statements by name, `$n` as psycopg's placeholders."""
    text = (SCHEMAS / "queue_classic_worker.sql").read_text()
    found = {}
    for chunk in text.split("-- ==== ")[1:]:
        head, _, body = chunk.partition("\n")
        found[head.split(" ")[0]] = re.sub(r"\$\d+", "%s", body.strip().rstrip(";"))
    return found


QC = qc_statements()


@pytest.fixture
def qc(dsn, connect):
    conn = connect(autocommit=True)
    conn.execute((SCHEMAS / "queue_classic.sql").read_text().encode())
    schema.init_audit(conn)
    return conn


def enqueue(conn: psycopg.Connection, n: int = 1) -> list[int]:
    return [
        conn.execute(QC["enqueue"], ("default", "Mailer.deliver", Jsonb([i]))).fetchone()[0]
        for i in range(n)
    ]


def lock(conn: psycopg.Connection) -> int | None:
    row = conn.execute(QC["lock"], ("default",)).fetchone()
    return row[0] if row else None


def queuetop(capsys, *argv: str) -> tuple[int, dict | str]:
    code = main([*argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if "--json" in argv and out else err)


def test_discovered_as_queue_classic(qc, dsn, capsys):
    code, found = queuetop(capsys, "discover", "--json", "--dsn", dsn)
    assert code == 0
    ours = [q for q in found["queues"] if q["table"] == "public.queue_classic_jobs"]
    assert [(q["adapter"], q["version"], q["confidence"]) for q in ours] == [
        ("queue-classic", "4.x", "high")
    ]


def test_a_dead_workers_job_is_stale_at_once_and_requeued_as_qc_recovers(qc, dsn, connect, capsys):
    flags = ["--preset", "queue-classic", "--dsn", dsn]
    enqueue(qc, 4)
    dying = connect(autocommit=True, application_name="qc-worker-dying")
    orphan = lock(dying)
    dead_pid = dying.info.backend_pid
    dying.close()  # the worker's session ends with the job locked: its pid is gone
    living = connect(autocommit=True, application_name="qc-worker-living")
    busy = lock(living)
    gone = "SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = %s"
    wait_until(lambda: qc.execute(gone, (dead_pid,)).fetchone()[0])  # as the server sees it

    code, snap = queuetop(capsys, "snapshot", "--json", *flags)
    assert code == 0
    assert [(s["id"], s["worker_alive"]) for s in snap["stale_leases"]] == [(orphan, False)]
    assert snap["counts"]["running"] == 2 and snap["counts"]["ready"] == 2
    # queue_classic's own counts (QC::Queue#count, #count_ready: every row of the queue)
    total = qc.execute("SELECT count(*) FROM queue_classic_jobs WHERE q_name = 'default'")
    assert sum(snap["counts"].values()) == total.fetchone()[0] == 4

    code, result = queuetop(capsys, "requeue", str(orphan), "--json", *flags)
    assert code == 0 and result["changed"] == [orphan], result
    assert qc.execute(
        "SELECT locked_at, locked_by FROM queue_classic_jobs WHERE id = %s", (orphan,)
    ).fetchall() == [(None, None)]
    # its own recovery finds nothing left to do; the live worker's lock is untouched
    assert qc.execute(QC["unlock_jobs_of_dead_workers"]).rowcount == 0
    assert qc.execute(
        "SELECT locked_by FROM queue_classic_jobs WHERE id = %s", (busy,)
    ).fetchone() == (living.info.backend_pid,)
    # and its own lock takes the job again (the lowest-numbered of the unlocked)
    taker = connect(autocommit=True)
    taken = [lock(taker) for _ in range(3)]
    assert orphan in taken
    code, snap = queuetop(capsys, "snapshot", "--json", *flags)
    assert snap["stale_leases"] == []


def test_dead_letter_is_refused_in_one_line(qc, dsn, connect, capsys):
    enqueue(qc, 1)
    worker = connect(autocommit=True)
    job = lock(worker)
    code, err = queuetop(
        capsys,
        "dead-letter",
        str(job),
        "--force",
        "--reason",
        "poison",
        "--preset",
        "queue-classic",
        "--dsn",
        dsn,
    )
    assert code == 2 and len(err.strip().splitlines()) == 1 and "has no dead role" in err
    assert qc.execute(
        "SELECT locked_by FROM queue_classic_jobs WHERE id = %s", (job,)
    ).fetchone() == (worker.info.backend_pid,)
