"""The jobrunr preset on JobRunr's PostgreSQL schema (its migrations, tests/library_schemas/
jobrunr.sql), driven by the statements its JobTable sends, copied from its source
(jobrunr_worker.sql; no Java here). What JobRunr's Java does between them is done here as
its code does it, and no more: a claim deserializes jobAsJson and appends a ProcessingState
only where its state machine (AllowedJobStateStateChanges, copied below) allows it, and
every save checks the version JobRunr read from jobAsJson (JobVersioner).

A server that claimed a job and died leaves the one stale lease once the job's updatedAt is
older than its orphan limit, a live server's job is not stale; counts equal its
jobrunr_jobs_stats view; after queuetop's requeue its orphaned-job query finds nothing and
its claim takes the job, whose history stays one its state machine allows. A requeue that
changed the state column alone leaves a job its claim refuses, and queuetop then leaves it
alone too. Times are given as JobRunr's clock would: a server that died 5 minutes ago
claimed and last updated its job 5 minutes ago."""

from __future__ import annotations

import json
import re
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import psycopg
import pytest

from dashboard.cli import main
from dashboard.setup import schema
from tests.library_adapters import assert_harmless

SCHEMAS = Path(__file__).resolve().parent / "library_schemas"
ORPHAN_AFTER = timedelta(seconds=15) * 4  # poll interval x server timeout multiplicand
SIGNATURE = "org.example.Mailer.send(java.lang.String)"
STATES = ("AWAITING", "SCHEDULED", "ENQUEUED", "PROCESSING", "FAILED", "SUCCEEDED", "DELETED")
# AllowedJobStateStateChanges.isAllowedStateChange (8.7.1): from -> the states it may go to
ALLOWED = {
    "AWAITING": {"AWAITING", "SCHEDULED", "ENQUEUED", "DELETED"},
    "SCHEDULED": set(STATES) - {"PROCESSING"},
    "ENQUEUED": set(STATES) - {"ENQUEUED"},
    "PROCESSING": {"SUCCEEDED", "FAILED", "DELETED"},
    "FAILED": {"SCHEDULED", "ENQUEUED", "DELETED"},
    "SUCCEEDED": {"SCHEDULED", "ENQUEUED", "DELETED"},
    "DELETED": {"SCHEDULED", "ENQUEUED"},
}


class JobRefused(Exception):
    """What JobRunr's Java throws: ConcurrentJobModificationException or
    IllegalJobStateChangeException."""


def statements() -> dict[str, str]:
    """JobRunr's statements by name, its `?` as psycopg's placeholders."""
    text = (SCHEMAS / "jobrunr_worker.sql").read_text()
    found = {}
    for chunk in text.split("-- ==== ")[1:]:
        head, _, body = chunk.partition("\n")
        found[head.split(" ")[0]] = body.strip().replace("?", "%s")
    return found


JR = statements()


def utc_now() -> datetime:
    """Its clock as its Dialect binds it: UTC, into `timestamp without time zone`."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def instant(at: datetime) -> str:
    """java.time.Instant.toString(), as its Jackson mapper writes a state's time."""
    text = at.strftime("%Y-%m-%dT%H:%M:%S")
    micros = f"{at.microsecond:06d}"
    if micros != "000000":
        text += "." + (micros[:3] if micros.endswith("000") else micros)
    return text + "Z"


def make_db(connect, through: str | None = None) -> psycopg.Connection:
    """JobRunr's migrations, all of them or those before `through` (e.g. 'v016')."""
    text = (SCHEMAS / "jobrunr.sql").read_text()
    if through:
        text = text.split(f"-- ==== {through} ")[0]
    conn = connect(autocommit=True)
    conn.execute(text)
    schema.init_audit(conn)
    return conn


@pytest.fixture
def jr(dsn, connect):
    return make_db(connect)


def new_job(state: dict) -> dict:
    """A job as JobRunr's Jackson mapper writes it (the shape of its test fixtures)."""
    return {
        "version": 0,
        "jobSignature": SIGNATURE,
        "jobName": "org.example.Mailer.send(hello)",
        "labels": [],
        "jobDetails": {
            "className": "org.example.Mailer",
            "methodName": "send",
            "jobParameters": [
                {
                    "className": "java.lang.String",
                    "actualClassName": "java.lang.String",
                    "object": "hello",
                }
            ],
            "cacheable": True,
        },  # fmt: skip
        "id": str(uuid.uuid4()),
        "jobHistory": [state],
        "metadata": {"@class": "java.util.concurrent.ConcurrentHashMap"},
    }


def enqueued_state(at: datetime) -> dict:
    return {"@class": "org.jobrunr.jobs.states.EnqueuedState", "state": "ENQUEUED",
            "createdAt": instant(at)}  # fmt: skip


def scheduled_at(job: dict) -> str | None:
    """8.x's save: the scheduledAt of the last SchedulableState (ScheduledState here)."""
    times = [s["scheduledAt"] for s in job["jobHistory"] if "scheduledAt" in s]
    return times[-1] if times else None


def save(conn: psycopg.Connection, job: dict, new: bool = False) -> None:
    """JobTable.save under JobVersioner: the version JobRunr read, advanced, and checked."""
    job["version"] += 1
    last = job["jobHistory"][-1]
    updated = last.get("updatedAt", last["createdAt"])
    scheduled = scheduled_at(job)
    if new:
        created = job["jobHistory"][0]["createdAt"]
        args = (job["id"], job["version"], json.dumps(job), SIGNATURE, last["state"], created,
                updated, scheduled, None)  # fmt: skip
        conn.execute(JR["insert"], args)
        return
    args = (job["version"], json.dumps(job), last["state"], updated, scheduled, job["id"],
            job["version"] - 1)  # fmt: skip
    if conn.execute(JR["save"], args).rowcount != 1:
        raise JobRefused(f"ConcurrentJobModificationException: {job['id']}")


def add_state(job: dict, state: dict) -> None:
    """Job.addJobState: refused where its state machine forbids the change."""
    last = job["jobHistory"][-1]["state"]
    if state["state"] not in ALLOWED[last]:
        raise JobRefused(f"IllegalJobStateChangeException: {last} -> {state['state']}")
    job["jobHistory"].append(state)


def enqueue(conn: psycopg.Connection, at: datetime) -> str:
    job = new_job(enqueued_state(at))
    save(conn, job, new=True)
    return job["id"]


def load(conn: psycopg.Connection, job_id: str) -> dict:
    text = conn.execute("SELECT jobasjson FROM jobrunr_jobs WHERE id = %s", (job_id,)).fetchone()
    return json.loads(text[0])


def claim(conn: psycopg.Connection, server: str, at: datetime, limit: int = 1) -> list[str]:
    """getJobsToProcess: its claim, then startProcessingOn and save for each job."""
    server_id = str(uuid.uuid5(uuid.NAMESPACE_DNS, server))
    taken = []
    with conn.transaction():
        for (text,) in conn.execute(JR["claim"], ("ENQUEUED", limit)).fetchall():
            job = json.loads(text)
            if job["jobHistory"][-1]["state"] == "PROCESSING":
                raise JobRefused(f"ConcurrentJobModificationException: {job['id']}")
            add_state(job, {"@class": "org.jobrunr.jobs.states.ProcessingState",
                            "state": "PROCESSING", "createdAt": instant(at),
                            "serverId": server_id, "serverName": server,
                            "updatedAt": instant(at)})  # fmt: skip
            save(conn, job)
            taken.append(job["id"])
    return taken


def heartbeat(conn: psycopg.Connection, job_id: str, at: datetime) -> None:
    """UpdateJobsInProgressTask: Job.updateProcessing, saved."""
    job = load(conn, job_id)
    job["jobHistory"][-1]["updatedAt"] = instant(at)
    save(conn, job)


def finish(conn: psycopg.Connection, job_id: str, state: dict) -> None:
    job = load(conn, job_id)
    add_state(job, state)
    save(conn, job)


def orphaned(conn: psycopg.Connection, at: datetime) -> list[str]:
    """ProcessOrphanedJobsTask's query: PROCESSING, not updated within its limit."""
    rows = conn.execute(JR["orphaned"], ("PROCESSING", at - ORPHAN_AFTER, 1000)).fetchall()
    return [json.loads(r[0])["id"] for r in rows]


def stats(conn: psycopg.Connection) -> dict:
    cur = conn.execute(JR["stats"])
    return dict(zip([c.name for c in cur.description], cur.fetchone(), strict=True))


def column_row(conn: psycopg.Connection, job_id: str) -> tuple:
    return conn.execute(
        "SELECT state, version, updatedat, scheduledat FROM jobrunr_jobs WHERE id = %s",
        (job_id,),
    ).fetchone()


def legal(history: list[dict]) -> bool:
    states = [s["state"] for s in history]
    return all(b in ALLOWED[a] for a, b in zip(states, states[1:], strict=False))


def queuetop(capsys, *argv: str) -> tuple[int, dict | str]:
    code = main([*argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if "--json" in argv and out else err)


def staged(conn: psycopg.Connection) -> dict[str, str]:
    """Jobs as JobRunr's servers leave them: one claimed by a server that died 5 minutes
    ago, one by a live server that updated it just now, one scheduled for later, one
    succeeded, one failed for good, two enqueued."""
    t = utc_now()
    names = ("orphan", "live", "done", "failed", "ready1", "ready2")
    ids = {name: enqueue(conn, t - timedelta(minutes=30 - i)) for i, name in enumerate(names)}
    assert claim(conn, "server-dead", t - timedelta(minutes=5)) == [ids["orphan"]]
    assert claim(conn, "server-live", t - timedelta(minutes=2)) == [ids["live"]]
    heartbeat(conn, ids["live"], t)
    assert claim(conn, "server-live", t - timedelta(minutes=2), limit=2) == [
        ids["done"], ids["failed"]
    ]  # fmt: skip
    finish(conn, ids["done"], {"@class": "org.jobrunr.jobs.states.SucceededState",
                               "state": "SUCCEEDED", "createdAt": instant(t),
                               "latencyDuration": 0.01, "processDuration": 0.003})  # fmt: skip
    finish(conn, ids["failed"], {"@class": "org.jobrunr.jobs.states.FailedState",
                                 "state": "FAILED", "createdAt": instant(t),
                                 "message": "An exception occurred during the performance of"
                                            " the job",
                                 "exceptionType": "java.lang.IllegalStateException",
                                 "exceptionMessage": "smtp down", "stackTrace": "...",
                                 "doNotRetry": False})  # fmt: skip
    later = new_job({"@class": "org.jobrunr.jobs.states.ScheduledState", "state": "SCHEDULED",
                     "createdAt": instant(t), "scheduledAt": instant(t + timedelta(hours=1)),
                     "reason": "Retry attempt 1 of 10"})  # fmt: skip
    save(conn, later, new=True)
    ids["later"] = later["id"]
    return ids


def test_discovered_as_jobrunr_with_its_version(jr, dsn, capsys):
    # beside db-scheduler's table, the other Java library: each found as its own; JobRunr's
    # side tables (servers, recurring jobs, metadata, migrations) are no queues
    jr.execute((SCHEMAS / "db_scheduler.sql").read_text())
    staged(jr)
    code, found = queuetop(capsys, "discover", "--json", "--dsn", dsn)
    assert code == 0
    assert sorted(
        (q["table"], q["adapter"], q["version"], q["schema_marker"], q["confidence"])
        for q in found["queues"]
    ) == [
        ("public.jobrunr_jobs", "jobrunr", "8.x", "16", "high"),
        ("public.scheduled_tasks", "db-scheduler", "15.x-16.x", "15", "high"),
    ]


def test_an_orphan_is_the_stale_lease_and_requeued_so_its_claim_takes_it(jr, dsn, capsys):
    ids = staged(jr)
    flags = ["--preset", "jobrunr", "--dsn", dsn]
    code, snap = queuetop(capsys, "snapshot", "--json", *flags)
    assert code == 0
    stale = [(s["id"], s["worker"], s["worker_alive"]) for s in snap["stale_leases"]]
    assert stale == [(ids["orphan"], "server-dead", False)]
    assert snap["threshold"]["seconds"] == ORPHAN_AFTER.total_seconds()
    assert orphaned(jr, utc_now()) == [ids["orphan"]]  # its own orphan query agrees
    assert_harmless(dsn, "jobrunr")  # read with AccessShareLock only, no row lock
    # counts: its dashboard's view
    mine, theirs = snap["counts"], stats(jr)
    assert mine["ready"] == theirs["enqueued"] == 2
    assert mine["scheduled"] == theirs["scheduled"] + theirs["awaiting"] == 1
    assert mine["running"] == theirs["processing"] == 2
    assert mine["done"] == theirs["succeeded"] == 1
    assert mine["dead"] == theirs["failed"] + theirs["deleted"] == 1
    assert sum(mine.values()) == theirs["total"] == 7

    version = column_row(jr, ids["orphan"])[1]
    code, result = queuetop(capsys, "requeue", ids["orphan"], "--json", *flags)
    assert code == 0 and result["changed"] == [ids["orphan"]], result
    job = load(jr, ids["orphan"])
    state, new_version, updated, _ = column_row(jr, ids["orphan"])
    # every copy in step: the state column, version (in jobAsJson too), updatedAt
    assert (state, new_version, job["version"]) == ("ENQUEUED", version + 1, version + 1)
    assert [s["state"] for s in job["jobHistory"][-3:]] == ["PROCESSING", "FAILED", "ENQUEUED"]
    assert job["jobHistory"][-2]["message"] == "Orphaned job"
    assert instant(updated) == job["jobHistory"][-1]["createdAt"]
    assert legal(job["jobHistory"])  # a history its state machine allows, step by step
    # its orphan query finds nothing left to do; the live job is untouched
    assert orphaned(jr, utc_now()) == []
    assert column_row(jr, ids["live"])[0] == "PROCESSING"
    _, snap = queuetop(capsys, "snapshot", "--json", *flags)
    assert snap["stale_leases"] == []
    assert snap["counts"]["ready"] == stats(jr)["enqueued"] == 3

    # its claim takes it (oldest updatedAt first: the two waiting, then the requeued one),
    # and its save matches the version queuetop wrote into jobAsJson
    assert claim(jr, "server-new", utc_now(), limit=3)[-1] == ids["orphan"]
    job = load(jr, ids["orphan"])
    assert job["jobHistory"][-1]["serverName"] == "server-new" and legal(job["jobHistory"])
    assert column_row(jr, ids["orphan"])[:2] == ("PROCESSING", version + 2)


def test_the_state_column_alone_is_not_a_requeue(jr, dsn, capsys):
    ids = staged(jr)
    # what a requeue of the state column alone leaves: a job JobRunr's claim refuses
    jr.execute("UPDATE jobrunr_jobs SET state = 'ENQUEUED' WHERE id = %s", (ids["orphan"],))
    with pytest.raises(JobRefused, match="ConcurrentJobModificationException"):
        claim(jr, "server-new", utc_now(), limit=5)
    # and queuetop leaves such a job alone rather than write over it
    code, result = queuetop(
        capsys, "dead-letter", ids["orphan"], "--reason", "poison", "--json",
        "--preset", "jobrunr", "--dsn", dsn,
    )  # fmt: skip
    assert code == 1 and result["changed"] == []
    [skipped] = result["skipped"]
    assert (
        "the last state in its jobAsJson is PROCESSING but its state column says ENQUEUED"
        in (skipped["reason"])
    )


def test_a_live_servers_job_is_not_requeued_unforced(jr, dsn, capsys):
    ids = staged(jr)
    code, result = queuetop(
        capsys, "requeue", ids["live"], "--json", "--preset", "jobrunr", "--dsn", dsn
    )
    assert code == 1 and result["skipped"] == [
        {"id": ids["live"], "reason": "lease not expired (use --force)"}
    ]
    assert column_row(jr, ids["live"])[0] == "PROCESSING"


def test_dead_letter_ends_where_its_failure_path_ends(jr, dsn, capsys):
    ids = staged(jr)
    flags = ["--preset", "jobrunr", "--dsn", dsn]
    version = column_row(jr, ids["later"])[1]
    code, result = queuetop(
        capsys, "dead-letter", ids["later"], "--reason", "poison pill", "--json", *flags
    )
    assert code == 0 and result["changed"] == [ids["later"]], result
    job = load(jr, ids["later"])
    state, new_version, _, scheduled = column_row(jr, ids["later"])
    assert (state, new_version, job["version"]) == ("FAILED", version + 1, version + 1)
    failed = job["jobHistory"][-1]
    assert (failed["state"], failed["exceptionMessage"], failed["doNotRetry"]) == (
        "FAILED", "poison pill", True,
    )  # fmt: skip
    assert legal(job["jobHistory"]) and scheduled is not None  # 8.x keeps scheduledAt
    _, snap = queuetop(capsys, "snapshot", "--json", *flags)
    assert snap["counts"]["dead"] == stats(jr)["failed"] == 2
    # and its dashboard's requeue (FAILED -> ENQUEUED) is one its state machine allows
    assert "ENQUEUED" in ALLOWED[failed["state"]]
    # an AWAITING job cannot fail in JobRunr: refused with its reason
    awaiting = new_job({"@class": "org.jobrunr.jobs.states.CarbonAwareAwaitingState",
                        "state": "AWAITING", "createdAt": instant(utc_now()),
                        "from": instant(utc_now()),
                        "to": instant(utc_now() + timedelta(hours=4)),
                        "reason": "waiting for a greener hour"})  # fmt: skip
    save(jr, awaiting, new=True)
    code, result = queuetop(
        capsys, "dead-letter", awaiting["id"], "--reason", "x", "--json", *flags
    )
    assert code == 1 and result["skipped"][0]["reason"].startswith(
        "JobRunr allows an AWAITING job no change to FAILED"
    )
    assert column_row(jr, awaiting["id"])[0] == "AWAITING"


def test_jobrunr_7_schema_is_mapped_and_its_requeue_writes_as_7_saves(dsn, connect, capsys):
    jr = make_db(connect, through="v016")
    flags = ["--preset", "jobrunr", "--dsn", dsn]
    code, found = queuetop(capsys, "discover", "--json", "--dsn", dsn)
    [ours] = [q for q in found["queues"] if q["table"] == "public.jobrunr_jobs"]
    assert (ours["version"], ours["schema_marker"]) == ("6.x-7.x", "15")
    t = utc_now()
    job_id = enqueue(jr, t - timedelta(minutes=10))
    claim(jr, "server-dead", t - timedelta(minutes=5))
    # a time in scheduledAt (7.x's own saves leave none on a job not SCHEDULED), so that the
    # requeue is seen to write what 7.x's save writes for an ENQUEUED job: none
    jr.execute("UPDATE jobrunr_jobs SET scheduledat = %s WHERE id = %s", (t, job_id))
    code, result = queuetop(capsys, "requeue", job_id, "--json", *flags)
    assert code == 0 and result["changed"] == [job_id], result
    job = load(jr, job_id)
    assert job["jobHistory"][-2]["exceptionType"] == "java.lang.IllegalThreadStateException"
    assert column_row(jr, job_id)[::3] == ("ENQUEUED", None)  # 7.x: scheduledAt only if SCHEDULED
    assert claim(jr, "server-new", utc_now()) == [job_id]


def test_an_unknown_migration_is_refused_in_one_line(jr, dsn, capsys):
    jr.execute(
        "insert into jobrunr_migrations values (gen_random_uuid()::text, "
        "'v017__a_future_change.sql', '2027-01-01T00:00:00Z')"
    )
    code, err = queuetop(capsys, "snapshot", "--preset", "jobrunr", "--dsn", dsn)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert re.search(
        r"JobRunr at (public\.)?jobrunr_jobs: found migration 17; preset jobrunr supports "
        r"6\.x-7\.x \(migration 15\), 8\.x \(migration 16\)",
        err,
    ), err
