"""The pgmq preset (`--preset pgmq --table pgmq.q_NAME`) against pgmq itself: its schema
made by its own install script (tests/library_schemas/pgmq.sql, pgmq 1.13.0, as the pgmq
1.1.4 Python client ships it: the extension is not packaged here), real consumers of its
Python client (tests/library_apps/pgmq_app.py, in a venv of their own) reading with a
short visibility timeout, one SIGKILLed mid-job; pgmq.metrics is the count's truth.

Also the general core change it needed: a preset names its tables by a pattern (one table
per queue), `--table` picks one, a pattern left unpicked is refused naming the queues
found, and `discover` lists every queue table and none of the library's other tables.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import psycopg
import pytest
from helpers import wait_until
from library_support import find_python, kill_group, python_venv, rows, side_effects, spawn

from dashboard import config, db, monitor
from dashboard.cli import main
from dashboard.errors import UserError
from dashboard.models import TableName
from dashboard.setup import schema

APP = Path(__file__).parent / "library_apps" / "pgmq_app.py"
SCHEMAS = Path(__file__).parent / "library_schemas"
VT = 6  # seconds: the consumers' visibility timeout, the lease queuetop follows
STATES = {"ready": "a", "running": "b"}
SIDE_TABLE = (
    "CREATE TABLE side_effects (id bigserial PRIMARY KEY, job_id bigint NOT NULL, "
    "task text NOT NULL, attempt int NOT NULL, event text NOT NULL)"
)


@pytest.fixture(scope="module")
def pgmq_python() -> Path:
    """pgmq's Python client in a venv of its own (its pins need not match the project's)."""
    return python_venv("pgmq", find_python("3.11") or sys.executable, ["pgmq==1.1.4"])


class Pgmq:
    """pgmq's client on one test database: its CLI (pgmq_app.py) and consumer processes."""

    def __init__(self, dsn: str, python: Path, tmp_path: Path):
        self.dsn, self.python, self.tmp_path = dsn, python, tmp_path
        self.procs: list[subprocess.Popen] = []

    def env(self, max_reads: int = 3) -> dict[str, str]:
        return {"PGMQ_DSN": self.dsn, "PGMQ_VT": str(VT), "PGMQ_MAX_READS": str(max_reads)}

    def app(self, *argv: str) -> str:
        done = subprocess.run(
            [str(self.python), str(APP), *argv],
            env={**os.environ, **self.env()},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def send(self, queue: str, body: dict, delay: int | None = None) -> int:
        return int(self.app("send", queue, json.dumps(body), *([str(delay)] if delay else [])))

    def metrics(self, queue: str) -> dict:
        return json.loads(self.app("metrics", queue))

    def start(self, queue: str, name: str, max_reads: int = 3) -> subprocess.Popen:
        proc = spawn(
            [str(self.python), str(APP), "work", queue, name],
            env=self.env(max_reads),
            log=self.tmp_path / f"{name}.log",
        )
        self.procs.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.procs:
            kill_group(proc)


def install(dsn: str, script: str = "pgmq.sql") -> None:
    """pgmq's schema by its own install script, the side table, queuetop's audit table."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute((SCHEMAS / script).read_bytes())
        conn.execute(SIDE_TABLE)
        schema.init_audit(conn)


@pytest.fixture
def pgmq(dsn, pgmq_python, tmp_path):
    install(dsn)
    lib = Pgmq(dsn, pgmq_python, tmp_path)
    yield lib
    lib.stop()


def queuetop(capsys, *argv: str) -> tuple[int, dict]:
    code = main([*argv, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def refused(capsys, *argv: str) -> str:
    """A command refused in one line, exit 2: that line."""
    assert main(list(argv)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def message(dsn: str, queue: str, msg_id: int) -> tuple | None:
    found = rows(dsn, f"SELECT read_ct, vt <= now() FROM pgmq.q_{queue} WHERE msg_id = %s", msg_id)
    return found[0] if found else None


# --- the core change: a preset's table pattern ---------------------------------------------


def test_a_pattern_stands_for_one_table_per_queue():
    pattern = TableName("q_*", "pgmq")
    assert str(pattern) == "pgmq.q_*"
    assert pattern.match(TableName("q_orders", "pgmq")) == "orders"
    assert pattern.match(TableName("q_", "pgmq")) is None  # the queue's part is never empty
    assert pattern.match(TableName("a_orders", "pgmq")) is None
    assert pattern.match(TableName("q_orders", "public")) is None
    assert TableName("r_*_runs").match(TableName("r_x_runs", "any")) == "x"
    spec = config.build_spec(preset="pgmq", table="q_orders")  # the preset's schema
    assert (spec.table, spec.table_match) == (TableName("q_orders", "pgmq"), "orders")
    assert config.build_spec(preset="pgmq").table_match is None  # nothing picked yet
    with pytest.raises(UserError, match="one '\\*' in its name"):
        config.spec_from_dict({"queue": {"table": "pgmq.q_*_*", "states": STATES}}, "test")
    with pytest.raises(UserError, match="what the queue table's own"):
        config.spec_from_dict(
            {"queue": {"table": "jobs", "tables": {"runs": "r_*"}, "states": STATES}}, "test"
        )


def test_a_pattern_needs_table_and_discover_lists_each_queue(pgmq, capsys):
    for queue in ("orders", "emails"):
        pgmq.app("create", queue)
    pgmq.send("orders", {"seconds": 0})
    line = refused(capsys, "snapshot", "--preset", "pgmq", "--dsn", pgmq.dsn)
    assert "preset pgmq names one table per queue (pgmq.q_*): pick one with --table" in line
    assert line.endswith("pgmq.q_emails, pgmq.q_orders")
    line = refused(
        capsys, "snapshot", "--preset", "pgmq", "--table", "pgmq.a_orders", "--dsn", pgmq.dsn
    )
    assert "pgmq.a_orders is not one of the queue tables of preset pgmq (pgmq.q_*)" in line
    line = refused(capsys, "snapshot", "--table", "pgmq.q_*", "--dsn", pgmq.dsn)  # no preset
    assert line.startswith("queuetop: error: --table names one table per queue (pgmq.q_*)")
    code, snap = queuetop(
        capsys, "snapshot", "--preset", "pgmq", "--table", "q_orders", "--dsn", pgmq.dsn
    )
    assert code == 0 and snap["counts"]["ready"] == 1

    code, found = queuetop(capsys, "discover", "--dsn", pgmq.dsn)
    assert code == 0
    pgmq_tables = [q for q in found["queues"] if q["table"].startswith("pgmq.")]
    assert [(q["table"], q["adapter"], q["version"], q["confidence"]) for q in pgmq_tables] == [
        ("pgmq.q_emails", "pgmq", "1.10 to 1.13", "high"),
        ("pgmq.q_orders", "pgmq", "1.10 to 1.13", "high"),
    ]  # the archives a_*, pgmq.meta and pgmq's other tables are no queues of their own
    assert pgmq_tables[1]["command"].startswith(
        "queuetop watch --preset pgmq --table pgmq.q_orders"
    )
    # the command is the one discovery's spec is: it watches that queue
    assert (
        main(["snapshot", "--preset", "pgmq", "--table", "pgmq.q_emails", "--dsn", pgmq.dsn]) == 0
    )


def test_stale_after_is_refused_the_vt_decides(pgmq, capsys):
    pgmq.app("create", "orders")
    line = refused(
        capsys, "snapshot", "--preset", "pgmq", "--table", "pgmq.q_orders",
        "--stale-after", "4s", "--dsn", pgmq.dsn,
    )  # fmt: skip
    assert "--stale-after cannot apply to pgmq.q_orders" in line and "(vt)" in line


# --- real consumers ------------------------------------------------------------------------


def test_killed_consumer_message_is_the_one_stale_lease_then_requeued_and_run_once(pgmq, capsys):
    pgmq.app("create", "orders")
    flags = ["--preset", "pgmq", "--table", "pgmq.q_orders", "--dsn", pgmq.dsn]
    orphan = pgmq.send("orders", {"seconds": 120, "once": True})
    doomed = pgmq.start("orders", "doomed", max_reads=1)
    wait_until(lambda: side_effects(pgmq.dsn, orphan)["started"] == 1, timeout=60)
    kill_group(doomed)  # mid-job: nobody deletes the message, its vt runs out
    live = pgmq.send("orders", {"seconds": 120, "extend": True})
    pgmq.start("orders", "alive", max_reads=1)  # takes the live job (the orphan is invisible)
    wait_until(lambda: side_effects(pgmq.dsn, live)["started"] == 1, timeout=60)
    waiting = [pgmq.send("orders", {"seconds": 0}) for _ in range(2)]  # the consumer is busy
    pgmq.send("orders", {"seconds": 0}, delay=3600)

    def stale_now():
        _, snap = queuetop(capsys, "snapshot", *flags)
        return snap if snap["stale_leases"] else None

    snap = wait_until(stale_now, timeout=VT + 30, interval=0.5)
    # the orphan is the one stale lease, its consumer unknown (pgmq records none); the live
    # consumer's long job is not (it extends its own vt)
    assert [(s["id"], s["worker_alive"]) for s in snap["stale_leases"]] == [(orphan, None)]
    assert snap["threshold"]["signal"] == "expiry" and snap["threshold"]["seconds"] is None
    assert message(pgmq.dsn, "orders", live) == (1, False)
    # pgmq's own view: every message of the queue, and those visible to the next read (the
    # ready ones and the orphan, whose vt has passed)
    metrics = pgmq.metrics("orders")
    counts = snap["counts"]
    assert counts == {"ready": 2, "scheduled": 1, "running": 2}
    assert sum(counts.values()) == metrics["queue_length"] == 5
    assert counts["ready"] + len(snap["stale_leases"]) == metrics["visible"] == 3

    code, result = queuetop(capsys, "requeue", str(orphan), *flags)
    assert code == 0 and result["changed"] == [orphan], result
    assert message(pgmq.dsn, "orders", orphan) == (0, True)  # as pgmq.send leaves it
    _, snap = queuetop(capsys, "snapshot", *flags)
    assert snap["stale_leases"] == [] and snap["counts"]["ready"] == 3
    # a fresh consumer that gives up on a message read more than once runs it: without the
    # requeue its second read would be one too many
    pgmq.start("orders", "fresh", max_reads=1)
    wait_until(lambda: message(pgmq.dsn, "orders", orphan) is None, timeout=60)
    for job in waiting:
        wait_until(lambda job=job: side_effects(pgmq.dsn, job)["done"] == 1, timeout=60)
    assert side_effects(pgmq.dsn, orphan) == Counter(started=2, done=1)  # exactly once
    assert rows(pgmq.dsn, "SELECT count(*) FROM pgmq.a_orders") == [(0,)]
    assert rows(
        pgmq.dsn,
        "SELECT action, outcome FROM queuetop.audit_log WHERE target = %s",
        str(orphan),
    ) == [("requeue", "changed")]


def test_stuck_message_by_the_consumers_limit_dead_letter_refused(pgmq, capsys):
    pgmq.app("create", "orders")
    flags = ["--preset", "pgmq", "--table", "pgmq.q_orders", "--dsn", pgmq.dsn]
    poison = pgmq.send("orders", {"seconds": 0, "fail": True})
    worker = pgmq.start("orders", "w", max_reads=2)
    wait_until(lambda: side_effects(pgmq.dsn, poison)["raised"] == 2, timeout=VT * 3 + 30)
    kill_group(worker)  # before its third read, which would give up on it (archive)
    stuck = ["--dead-when", "read_ct above 1"]  # the consumers' limit: one retry
    _, snap = queuetop(capsys, "snapshot", *flags, *stuck)
    assert snap["counts"]["dead"] == 1 and snap["stale_leases"] == []

    # pgmq has no dead state: refused in one line without a dead role, and per job with one
    line = refused(capsys, "dead-letter", str(poison), "--reason", "poison", *flags)
    assert "preset pgmq has no dead role for pgmq.q_orders" in line
    code, result = queuetop(
        capsys, "dead-letter", str(poison), "--reason", "poison", *flags, *stuck
    )
    assert code == 1 and result["changed"] == []
    assert "pgmq has no dead state" in result["skipped"][0]["reason"]
    assert message(pgmq.dsn, "orders", poison)[0] == 2

    code, result = queuetop(capsys, "requeue", str(poison), *flags, *stuck)
    assert code == 0 and result["changed"] == [poison]
    _, snap = queuetop(capsys, "snapshot", *flags, *stuck)
    assert snap["counts"].get("dead", 0) == 0 and snap["counts"]["ready"] == 1
    # its reads counted afresh, the consumer runs it again (it raises again: it is poison)
    pgmq.start("orders", "again", max_reads=2)
    wait_until(lambda: side_effects(pgmq.dsn, poison)["raised"] == 3, timeout=60)


def test_previous_schema_1_5_read_by_pgmq_own_functions(dsn, capsys):
    """pgmq 1.5.1 (headers, no last_read_at): its install script and its own functions."""
    install(dsn, "pgmq_1_5.sql")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT pgmq.create('jobs')")
        (msg,) = conn.execute("SELECT pgmq.send('jobs', '{\"n\": 1}')").fetchone()
        conn.execute("SELECT msg_id FROM pgmq.read('jobs', 1, 1)").fetchall()
    flags = ["--preset", "pgmq", "--table", "pgmq.q_jobs", "--dsn", dsn]
    code, found = queuetop(capsys, "discover", "--dsn", dsn)
    assert [(q["table"], q["version"]) for q in found["queues"] if q["adapter"] == "pgmq"] == [
        ("pgmq.q_jobs", "1.5 to 1.9")
    ]

    def stale_now():
        _, snap = queuetop(capsys, "snapshot", *flags)
        return snap if snap["stale_leases"] else None

    snap = wait_until(stale_now, timeout=30, interval=0.5)
    assert [s["id"] for s in snap["stale_leases"]] == [msg]
    code, result = queuetop(capsys, "requeue", str(msg), *flags)
    assert code == 0 and result["changed"] == [msg]
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("SELECT msg_id, read_ct FROM pgmq.read('jobs', 30, 1)").fetchall() == [
            (msg, 1)
        ]


def test_monitor_reads_pgmq_with_access_share_only(pgmq):
    pgmq.app("create", "orders")
    pgmq.send("orders", {"seconds": 0})
    with db.connect_monitor(pgmq.dsn) as mon:
        spec = config.validate(mon, config.build_spec(preset="pgmq", table="pgmq.q_orders"))
        mon.autocommit = False
        monitor.collect(mon, spec)
        held = mon.execute(
            "SELECT locktype, mode FROM pg_locks WHERE pid = pg_backend_pid()"
        ).fetchall()
        mon.rollback()
    assert {mode for _, mode in held} <= {"AccessShareLock", "ExclusiveLock"}, held
    assert all(kind == "virtualxid" for kind, mode in held if mode == "ExclusiveLock"), held
