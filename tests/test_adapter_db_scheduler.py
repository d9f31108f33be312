"""The db-scheduler preset on db-scheduler's published schema (tests/library_schemas/
db_scheduler*.sql), driven by the statements its JdbcTaskRepository runs, copied from its
source (db_scheduler_worker.sql; no Java here): a scheduler that picked an execution and
died leaves the one stale lease once its heartbeat is older than the missed-heartbeats
limit, a live scheduler's execution is not stale; counts equal its own summary; after
queuetop's requeue its dead-execution check finds nothing left and its own fetch-and-pick
and lock-and-fetch take the execution again, written as its ReviveDeadExecution writes it.

Times are given to its statements as its Clock would give them: a scheduler that died 40
minutes ago picked its execution, and heartbeated, 40 minutes ago."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import psycopg
import pytest
from psycopg.rows import dict_row

from dashboard.cli import main
from dashboard.setup import schema
from tests.library_adapters import assert_harmless

SCHEMAS = Path(__file__).resolve().parent / "library_schemas"
TASK = "send-email"
DEAD_AFTER = timedelta(minutes=5) * 6  # SchedulerBuilder: heartbeat interval x missed limit


def statements() -> dict[str, str]:
    """db-scheduler's statements by name, its JDBC `?` as psycopg's placeholders."""
    text = (SCHEMAS / "db_scheduler_worker.sql").read_text()
    found = {}
    for chunk in text.split("-- ==== ")[1:]:
        head, _, body = chunk.partition("\n")
        found[head.split(" ")[0]] = body.strip().replace("?", "%s")
    return found


DS = statements()


def now() -> datetime:
    return datetime.now(timezone.utc)


def make_db(connect, schema_file: str = "db_scheduler.sql") -> psycopg.Connection:
    conn = connect(autocommit=True)
    conn.execute((SCHEMAS / schema_file).read_text())
    schema.init_audit(conn)
    return conn


@pytest.fixture
def ds(dsn, connect):
    return make_db(connect)


def insert(conn: psycopg.Connection, instance: str, at: datetime) -> None:
    conn.execute(DS["insert"], (TASK, instance, b"\xac\xed\x00\x05", at, False, 1))


def row(conn: psycopg.Connection, instance: str) -> dict:
    cur = conn.cursor(row_factory=dict_row)
    return cur.execute(
        "SELECT * FROM scheduled_tasks WHERE task_name = %s AND task_instance = %s",
        (TASK, instance),
    ).fetchone()


def fetch_and_pick(conn: psycopg.Connection, scheduler: str, at: datetime) -> list[str]:
    """One poll of its default FETCH strategy at time `at`: getDue, then pick each."""
    cur = conn.cursor(row_factory=dict_row)
    picked = []
    for due in cur.execute(DS["get_due"], (False, at)).fetchall():
        args = (True, scheduler, at, False, TASK, due["task_instance"], due["version"])
        if conn.execute(DS["pick"], args).rowcount == 1:
            picked.append(due["task_instance"])
    return picked


def pick_one(conn: psycopg.Connection, instance: str, scheduler: str, at: datetime) -> None:
    version = row(conn, instance)["version"]
    args = (True, scheduler, at, False, TASK, instance, version)
    assert conn.execute(DS["pick"], args).rowcount == 1


def reschedule(conn: psycopg.Connection, instance: str, **values) -> None:
    """ExecutionUpdate.updateSingle, as its callers fill it."""
    old = row(conn, instance)
    args = (
        values["execution_time"], False, None, values["last_success"], values["last_failure"],
        values["consecutive_failures"], None, old["version"] + 1, TASK, instance, old["version"],
    )  # fmt: skip
    assert conn.execute(DS["reschedule"], args).rowcount == 1


def revive_dead(conn: psycopg.Connection, instance: str, at: datetime) -> None:
    """ReviveDeadExecution.deadExecution -> ExecutionOperations.reschedule(failure, now)."""
    old = row(conn, instance)
    reschedule(
        conn, instance, execution_time=at, last_success=old["last_success"], last_failure=at,
        consecutive_failures=(old["consecutive_failures"] or 0) + 1,
    )  # fmt: skip


def dead_executions(conn: psycopg.Connection, at: datetime) -> list[str]:
    rows = conn.execute(DS["dead_executions"], (True, at - DEAD_AFTER)).fetchall()
    return [r[1] for r in rows]


def summary(conn: psycopg.Connection) -> dict:
    cur = conn.cursor(row_factory=dict_row)
    return cur.execute(DS["summary"], (True, False, False)).fetchone()


def key(instance: str) -> str:
    """A composite key as queuetop takes it: the JSON array of its columns."""
    return json.dumps([TASK, instance])


def queuetop(capsys, *argv: str) -> tuple[int, dict | str]:
    code = main([*argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if "--json" in argv and out else err)


def staged(conn: psycopg.Connection) -> dict[str, str]:
    """Seven executions as its schedulers leave them: two picked (one by a scheduler that
    died 40 minutes ago, one by a live one heartbeating now), one failing and waiting for
    its retry, one due in an hour, three due."""
    t = now()
    for i in range(1, 7):
        insert(conn, str(i), t - timedelta(minutes=50 - i))
    insert(conn, "7", t + timedelta(hours=1))
    pick_one(conn, "1", "scheduler-dead", t - timedelta(minutes=40))
    pick_one(conn, "3", "scheduler-live", t - timedelta(minutes=10))
    reschedule(  # its OnFailureRetryLater: the run failed, retried in 5 minutes
        conn, "3", execution_time=t + timedelta(minutes=5), last_success=None,
        last_failure=t - timedelta(minutes=9), consecutive_failures=1,
    )  # fmt: skip
    pick_one(conn, "2", "scheduler-live", t - timedelta(minutes=3))
    version = row(conn, "2")["version"]
    assert conn.execute(DS["update_heartbeat"], (t, TASK, "2", version)).rowcount == 1
    return {"orphan": "1", "live": "2", "failing": "3", "later": "7"}


def test_discovered_as_db_scheduler_with_its_version(dsn, connect, capsys):
    make_db(connect)
    code, found = queuetop(capsys, "discover", "--json", "--dsn", dsn)
    assert code == 0
    ours = [q for q in found["queues"] if q["table"] == "public.scheduled_tasks"]
    assert [(q["adapter"], q["version"], q["confidence"]) for q in ours] == [
        ("db-scheduler", "15.x-16.x", "high")
    ]


def test_discovered_on_its_14_schema(dsn, connect, capsys):
    make_db(connect, "db_scheduler_14.sql")
    code, found = queuetop(capsys, "discover", "--json", "--dsn", dsn)
    ours = [q for q in found["queues"] if q["table"] == "public.scheduled_tasks"]
    assert [(q["adapter"], q["version"], q["schema_marker"]) for q in ours] == [
        ("db-scheduler", "14.x (no priority column)", "14")
    ]


def test_a_dead_schedulers_execution_is_the_stale_lease_and_revived_as_it_revives(ds, dsn, capsys):
    ids = staged(ds)
    flags = ["--preset", "db-scheduler", "--dsn", dsn]
    code, snap = queuetop(capsys, "snapshot", "--json", *flags)
    assert code == 0
    stale = [(s["id"], s["worker"], s["worker_alive"]) for s in snap["stale_leases"]]
    assert stale == [([TASK, ids["orphan"]], "scheduler-dead", False)]
    assert snap["threshold"]["seconds"] == DEAD_AFTER.total_seconds()
    # its own dead-execution check sees the same one
    assert dead_executions(ds, now()) == [ids["orphan"]]
    assert_harmless(dsn, "db-scheduler")  # read with AccessShareLock only, no row lock
    # counts: its own summary's split (running = picked, failing, scheduled = the rest)
    mine, theirs = snap["counts"], summary(ds)
    assert mine["running"] == theirs["running_count"] == 2
    assert mine["failed"] == theirs["failing_count"] == 1
    assert mine["ready"] + mine["scheduled"] == theirs["scheduled_count"] == 4
    assert (mine["ready"], mine["scheduled"]) == (3, 1)
    assert sum(mine.values()) == theirs["instance_count"] == 7

    # the user's limit wins: 40 minutes of silence is not an hour
    code, longer = queuetop(capsys, "snapshot", "--json", *flags, "--stale-after", "1h")
    assert longer["stale_leases"] == [] and longer["threshold"]["source"] == "--stale-after"

    before = row(ds, ids["orphan"])
    code, result = queuetop(capsys, "requeue", key(ids["orphan"]), "--json", *flags)
    assert code == 0 and result["changed"] == [key(ids["orphan"])], result
    after = row(ds, ids["orphan"])
    # what ReviveDeadExecution writes: due now, unpicked, a failure counted, version + 1
    assert (after["picked"], after["picked_by"], after["last_heartbeat"]) == (False, None, None)
    assert (after["consecutive_failures"], after["version"]) == (1, before["version"] + 1)
    assert after["last_failure"] is not None and after["execution_time"] <= now()
    # its dead-execution check finds nothing left to do; the live one is untouched
    assert dead_executions(ds, now()) == []
    assert row(ds, ids["live"])["picked_by"] == "scheduler-live"
    _, snap = queuetop(capsys, "snapshot", "--json", *flags)
    assert snap["stale_leases"] == []
    assert snap["counts"]["failed"] == summary(ds)["failing_count"] == 2

    # the library's own revive of another dead execution writes the same columns
    insert(ds, "8", now() - timedelta(hours=1))
    pick_one(ds, "8", "scheduler-dead", now() - timedelta(minutes=45))
    revive_dead(ds, "8", now())
    theirs = row(ds, "8")
    same = ("picked", "picked_by", "last_heartbeat", "consecutive_failures", "last_success")
    assert {k: theirs[k] for k in same} == {k: after[k] for k in same}

    # its own fetch-and-pick takes the requeued execution again (the others due too)
    assert ids["orphan"] in fetch_and_pick(ds, "scheduler-new", now())
    assert row(ds, ids["orphan"])["picked_by"] == "scheduler-new"


def test_a_failing_execution_is_run_now_as_its_client_reschedules_it(ds, dsn, capsys):
    ids = staged(ds)
    flags = ["--preset", "db-scheduler", "--dsn", dsn]
    failing = ids["failing"]
    before = row(ds, failing)
    code, result = queuetop(capsys, "requeue", key(failing), "--json", *flags)
    assert code == 0 and result["changed"] == [key(failing)], result
    after = row(ds, failing)
    # SchedulerClient.reschedule(instance, now): due now, failures reset, version + 1
    assert (after["consecutive_failures"], after["last_failure"], after["last_success"]) == (
        0, None, None,
    )  # fmt: skip
    assert after["version"] == before["version"] + 1 and after["execution_time"] <= now()
    _, snap = queuetop(capsys, "snapshot", "--json", *flags)
    assert snap["counts"]["failed"] == summary(ds)["failing_count"] == 0
    # its lock-and-fetch (the single statement of its PostgreSQL customization) takes it
    cur = ds.cursor(row_factory=dict_row)
    taken = cur.execute(
        DS["lock_and_fetch"], (True, "scheduler-new", now(), False, now())
    ).fetchall()
    assert failing in [r["task_instance"] for r in taken]


def test_a_live_schedulers_execution_is_not_requeued_unforced(ds, dsn, capsys):
    ids = staged(ds)
    flags = ["--preset", "db-scheduler", "--dsn", dsn]
    code, result = queuetop(capsys, "requeue", key(ids["live"]), "--json", *flags)
    assert code == 1 and result["changed"] == []
    assert result["skipped"] == [
        {"id": key(ids["live"]), "reason": "lease not expired (use --force)"}
    ]
    assert row(ds, ids["live"])["picked_by"] == "scheduler-live"


def test_dead_letter_is_refused_in_one_line(ds, dsn, capsys):
    ids = staged(ds)
    code, err = queuetop(
        capsys, "dead-letter", key(ids["orphan"]), "--reason", "poison", "--force",
        "--preset", "db-scheduler", "--dsn", dsn,
    )  # fmt: skip
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "preset db-scheduler has no dead role" in err
    assert row(ds, ids["orphan"])["picked_by"] == "scheduler-dead"


def test_a_table_without_its_columns_is_refused_in_one_line(dsn, connect, capsys):
    conn = make_db(connect)
    conn.execute("ALTER TABLE scheduled_tasks DROP COLUMN last_heartbeat")
    code, err = queuetop(capsys, "snapshot", "--preset", "db-scheduler", "--dsn", dsn)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert re.search(
        r"db-scheduler at (public\.)?scheduled_tasks: found no schema queuetop can read; "
        r"preset db-scheduler supports 14\.x \(no priority column\) \(schema 14\), "
        r"15\.x-16\.x \(schema 15\)",
        err,
    ), err
