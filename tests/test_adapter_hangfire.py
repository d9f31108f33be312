"""The hangfire preset on Hangfire.PostgreSql's own schema (its install scripts), driven by
its own statements from its source (tests/library_apps/hangfire_app.py; .NET is not run
here): a job whose server went away and whose claim is older than the invisibility timeout
is the one stale lease, a live server's fresh fetch is not; after queuetop's requeue the
library's own fetch takes the job as a new one, its recovery (the refetch of a timed-out
claim) finds nothing left, and the dead worker's late acknowledgement touches nothing."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from library_adapters import assert_harmless
from library_apps.hangfire_app import RELEASES, Hangfire, install, utcnow

from dashboard.cli import main
from dashboard.setup import schema

PRESET = ("--preset", "hangfire")


@pytest.fixture(params=sorted(RELEASES, reverse=True), ids=lambda v: f"schema{v}")
def hangfire(request, dsn, connect) -> Hangfire:
    """A database at schema version N with the library release whose statements run on it."""
    conn = connect(autocommit=True)
    install(conn, request.param)
    schema.init_audit(conn)
    return Hangfire(conn, RELEASES[request.param])


@pytest.fixture
def latest(dsn, connect) -> Hangfire:
    conn = connect(autocommit=True)
    install(conn, 23)
    schema.init_audit(conn)
    return Hangfire(conn)


def queuetop(capsys, *argv: str) -> tuple[int, dict | str]:
    code = main([*argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if "--json" in argv and out else err)


def snapshot(capsys, dsn: str, *more: str) -> dict:
    code, snap = queuetop(capsys, "snapshot", "--json", *PRESET, "--dsn", dsn, *more)
    assert code == 0, snap
    return snap


def stale(snap: dict) -> list[tuple[int, str | None, bool | None]]:
    return [(int(s["id"]), s["worker"], s["worker_alive"]) for s in snap["stale_leases"]]


def queue_rows(hf: Hangfire, job: int) -> list[tuple]:
    return hf.conn.execute(
        "SELECT id, queue, fetchedat FROM hangfire.jobqueue WHERE jobid = %s ORDER BY id", (job,)
    ).fetchall()


def test_a_gone_servers_stale_claim_is_requeued_for_the_librarys_own_fetch(hangfire, dsn, capsys):
    hf = hangfire
    hf.announce("srv-gone:101:aa")
    hf.announce("srv-live:202:bb")
    orphan, busy, waiting = hf.create(), hf.create(), hf.create()
    claim = hf.fetch()
    assert claim.job_id == orphan
    hf.process(claim, "srv-gone:101:aa")
    fresh = hf.fetch()
    assert fresh.job_id == busy
    hf.process(fresh, "srv-live:202:bb")
    # time passes for the orphan: its claim is past the invisibility timeout, and its server
    # stopped heartbeating past ServerTimeout, so ServerWatchdog removed it
    hf.conn.execute(
        "UPDATE hangfire.jobqueue SET fetchedat = fetchedat - interval '31 minutes' WHERE id = %s",
        (claim.id,),
    )
    hf.conn.execute(
        "UPDATE hangfire.server SET lastheartbeat = now() - interval '6 minutes' WHERE id = %s",
        ("srv-gone:101:aa",),
    )
    assert hf.watchdog() == 1

    snap = snapshot(capsys, dsn)
    assert stale(snap) == [(orphan, "srv-gone:101:aa", False)]
    assert {k: v for k, v in snap["counts"].items() if v} == {"ready": 1, "running": 2}

    code, result = queuetop(capsys, "requeue", str(orphan), "--json", *PRESET, "--dsn", dsn)
    assert code == 0 and result["changed"] == [orphan], result
    # every copy in step: the job row, its state history, one new unfetched queue row
    assert hf.conn.execute(
        "SELECT j.statename, s.name, s.reason, s.data::jsonb ->> 'Queue', j.expireat "
        "FROM hangfire.job AS j JOIN hangfire.state AS s ON s.id = j.stateid WHERE j.id = %s",
        (orphan,),
    ).fetchone() == ("Enqueued", "Enqueued", "Requeued by queuetop", "default", None)
    [(row, queue, fetched_at)] = queue_rows(hf, orphan)
    assert (queue, fetched_at) == ("default", None) and row != claim.id
    # the dead worker's late acknowledgement (RemoveFromQueue) finds its row gone
    assert hf.remove_from_queue(claim) == 0
    if hf.release == "1.19.12":  # its recovery pass alone: no timed-out claim is left
        assert hf.recover() is None
    # the library's own fetch takes the requeued job as a new one, then the one waiting,
    # then nothing: no claim is past the timeout (the live server's is untouched)
    taken = [hf.fetch() for _ in range(3)]
    assert [t.job_id if t else None for t in taken] == [orphan, waiting, None]
    hf.process(taken[0], "srv-live:202:bb")
    hf.succeed(taken[0])
    assert hf.conn.execute(
        "SELECT count(*) FILTER (WHERE name = 'Succeeded'), "
        "       (SELECT statename FROM hangfire.job WHERE id = %s) "
        "FROM hangfire.state WHERE jobid = %s",
        (orphan, orphan),
    ).fetchone() == (1, "Succeeded")
    assert queue_rows(hf, orphan) == []
    assert stale(snapshot(capsys, dsn)) == []


# Hangfire's states as the preset maps them (a Scheduled state with AutomaticRetry's
# reason reads "Scheduled (retry)")
ROLES = {
    "Enqueued": "ready",
    "Scheduled": "scheduled",
    "Awaiting": "scheduled",
    "Scheduled (retry)": "failed",
    "Processing": "running",
    "Succeeded": "done",
    "Failed": "dead",
    "Deleted": "dead",
}


def state_of(hf: Hangfire, job: int) -> tuple:
    """The job's statename, its current state row's name and reason, expireat set."""
    return hf.conn.execute(
        "SELECT j.statename, s.name, s.reason, j.expireat IS NOT NULL "
        "FROM hangfire.job AS j JOIN hangfire.state AS s ON s.id = j.stateid WHERE j.id = %s",
        (job,),
    ).fetchone()


def in_sets(hf: Hangfire, job: int) -> list[str]:
    return [
        r[0]
        for r in hf.conn.execute(
            'SELECT "key" FROM hangfire."set" WHERE "value" IN (%s, %s) ORDER BY 1',
            (str(job), f"default:{job}"),
        ).fetchall()
    ]


def counter(hf: Hangfire, key: str) -> int:
    return hf.conn.execute(
        'SELECT coalesce(sum("value"), 0) FROM hangfire.counter WHERE "key" = %s', (key,)
    ).fetchone()[0]


def test_counts_are_its_monitoring_apis_and_recovery_speaks_its_states(latest, dsn, capsys):
    hf = latest
    hf.announce("srv-live:1:cc")
    running, retried, failed, succeeded = (hf.create() for _ in range(4))
    for job in (running, retried, failed, succeeded):
        claim = hf.fetch()
        assert claim.job_id == job
        hf.process(claim, "srv-live:1:cc")
        if job == retried:
            hf.fail(claim, attempt=1)  # AutomaticRetry: Scheduled, "Retry attempt 1 of 10"
        elif job == failed:
            hf.fail(claim, attempt=None)  # its attempts spent: Failed
        elif job == succeeded:
            hf.succeed(claim)
    ready, urgent, parent = hf.create(), hf.create("critical"), hf.create("critical")
    later, deleted, waiting = hf.create(None), hf.create(None), hf.create(None)
    hf.schedule(later, 3600, iso=True)  # BackgroundJob.Schedule (CompatibilityLevel < 1.7)
    hf.schedule(deleted, 3600)
    hf.delete(deleted)  # the dashboard's delete of a scheduled job
    hf.await_parent(waiting, parent)  # BackgroundJob.ContinueJobWith

    snap = snapshot(capsys, dsn)
    own = dict(hf.run("statistics").fetchall())  # GetStatistics' count per state
    assert own == {
        "Enqueued": 3, "Processing": 1, "Scheduled": 2, "Succeeded": 1, "Failed": 1,
        "Deleted": 1, "Awaiting": 1,
    }  # fmt: skip
    retries = {
        int(v) for (v,) in hf.conn.execute("SELECT value FROM hangfire.set WHERE key = 'retries'")
    }
    assert retries == {retried}  # Hangfire's Retries page: the retries set
    by_status = dict(snap["by_status"])
    assert by_status.pop("Scheduled (retry)") == len(retries)
    by_status["Scheduled"] += len(retries)
    assert by_status == own
    for name, n in own.items():  # ScheduledCount, FailedCount, ... each its own statement
        assert hf.run("count_by_state_name", StateName=name).fetchone()[0] == n
    mapped = {
        role: sum(n for s, n in snap["by_status"].items() if ROLES[s] == role)
        for role in snap["counts"]
    }
    assert snap["counts"] == mapped == {
        "ready": 3, "scheduled": 2, "running": 1, "done": 1, "failed": 1, "dead": 2,
    }  # fmt: skip
    # each queue's Length and Fetched (its Queues page): the ready and running of its group
    groups = {g["name"]: g for g in snap["groups"]}
    for queue in ("default", "critical"):
        length, fetched = hf.run("enqueued_and_fetched_count", Queue=queue).fetchone()
        assert (groups[queue]["ready"], groups[queue]["running"]) == (length, fetched)
    assert stale(snap) == []
    assert_harmless(dsn, "hangfire")

    # requeue: the retry now, the failed and the deleted one again, as the dashboard does
    code, result = queuetop(
        capsys, "requeue", str(retried), str(failed), str(deleted), "--json", *PRESET, "--dsn", dsn
    )
    assert code == 0 and result["changed"] == [retried, failed, deleted], result
    for job in (retried, failed, deleted):
        assert state_of(hf, job) == ("Enqueued", "Enqueued", "Requeued by queuetop", False)
        assert [(q, f) for _, q, f in queue_rows(hf, job)] == [("default", None)]
        assert in_sets(hf, job) == []  # out of schedule and retries, as their unapply does
    assert counter(hf, "stats:deleted") == 0  # the Deleted handler's unapply
    assert [hf.fetch().job_id for _ in range(4)] == sorted([ready, retried, failed, deleted])

    # dead-letter: a Failed state as its worker writes it, out of every queue and set
    code, result = queuetop(
        capsys, "dead-letter", str(later), str(urgent), "--reason", "poison message",
        "--json", *PRESET, "--dsn", dsn,
    )  # fmt: skip
    assert code == 0 and result["changed"] == [later, urgent], result
    assert state_of(hf, later) == ("Failed", "Failed", "Dead-lettered by queuetop", False)
    failed_page = {
        r[0]: r for r in hf.run("get_jobs", StateName="Failed", Limit=10, Offset=0).fetchall()
    }  # fmt: skip
    data = failed_page[urgent][8]
    data = data if isinstance(data, dict) else json.loads(data)
    assert data["ExceptionMessage"] == "poison message" and data["FailedAt"]
    assert queue_rows(hf, urgent) == [] and in_sets(hf, later) == []
    assert hf.fetch(("critical",)).job_id == parent  # never the dead-lettered one
    assert hf.fetch(("critical",)) is None
    today = hf.conn.execute(
        "SELECT 'stats:failed:' || to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
    ).fetchone()[0]
    assert dict(hf.run("timeline_stats", Keys=[today]).fetchall()) == {today: 2}

    # a state change in flight (Hangfire's state lock held) is left to Hangfire
    resource = f"hangfire:job:{waiting}:state-lock"
    hf.run("try_lock", Resource=resource, Acquired=utcnow())
    code, result = queuetop(
        capsys, "dead-letter", str(waiting), "--reason", "x", "--json", *PRESET, "--dsn", dsn
    )
    assert code == 1 and "state lock" in result["skipped"][0]["reason"], result
    assert state_of(hf, waiting)[0] == "Awaiting"
    hf.run("release_lock", Resource=resource, Timeout=datetime.max.replace(tzinfo=timezone.utc))
    code, result = queuetop(
        capsys, "dead-letter", str(waiting), "--reason", "x", "--json", *PRESET, "--dsn", dsn
    )
    assert code == 0 and result["changed"] == [waiting] and in_sets(hf, waiting) == []
    code, result = queuetop(
        capsys, "dead-letter", str(waiting), "--reason", "x", "--json", *PRESET, "--dsn", dsn
    )
    assert code == 1 and result["skipped"][0]["reason"] == "already dead-lettered", result


def test_stale_after_is_the_invisibility_timeout_its_fetch_applies(latest, dsn, capsys):
    """A live server's job claimed two minutes ago: within Hangfire's default 30 minutes it
    is no stale lease; with InvisibilityTimeout = 60 s (passed as --stale-after 60s) the
    library's own fetch takes it again, and queuetop calls it stale, its server alive."""
    hf = latest
    hf.announce("srv-slow:7:dd")
    long_job, fresh_job = hf.create(), hf.create()
    long_claim, fresh_claim = hf.fetch(), hf.fetch()
    assert (long_claim.job_id, fresh_claim.job_id) == (long_job, fresh_job)
    for claim in (long_claim, fresh_claim):
        hf.process(claim, "srv-slow:7:dd")
    hf.conn.execute(
        "UPDATE hangfire.jobqueue SET fetchedat = fetchedat - interval '2 minutes' WHERE id = %s",
        (long_claim.id,),
    )
    snap = snapshot(capsys, dsn)
    assert stale(snap) == [] and snap["threshold"]["seconds"] == 1800
    assert (
        hf.run("fetch_candidate", {"timeoutSeconds": -1800}, Queues=["default"]).fetchone() is None
    )

    snap = snapshot(capsys, dsn, "--stale-after", "60s")
    assert stale(snap) == [(long_job, "srv-slow:7:dd", True)]
    assert (snap["threshold"]["seconds"], snap["threshold"]["source"]) == (60, "--stale-after")
    # the library's own fetch with that timeout: the same job, and only it
    assert (
        hf.run("fetch_candidate", {"timeoutSeconds": -60}, Queues=["default"]).fetchone()[1]
        == long_job
    )

    # dead-letter: the stale one fails as its worker's failure path ends; the fresh one is
    # a live claim, left alone unless forced
    flags = ("--reason", "hung", "--stale-after", "60s", "--json", *PRESET, "--dsn", dsn)
    code, result = queuetop(capsys, "dead-letter", str(long_job), str(fresh_job), *flags)
    assert code == 1 and result["changed"] == [long_job], result
    assert result["skipped"] == [{"id": fresh_job, "reason": "lease not expired (use --force)"}]
    assert state_of(hf, long_job) == ("Failed", "Failed", "Dead-lettered by queuetop", False)
    assert queue_rows(hf, long_job) == [] and hf.remove_from_queue(long_claim) == 0
    assert hf.fetch(timeout_s=60) is None  # nothing left for its recovery either


def test_its_keep_alive_renews_the_claim(latest, dsn, capsys):
    """UseSlidingInvisibilityTimeout: the fetched job's keep-alive rewrites fetchedat, so a
    long job whose worker lives is never past the timeout."""
    hf = latest
    hf.announce("srv:8:ee")
    job = hf.create()
    claim = hf.fetch()
    hf.process(claim, "srv:8:ee")
    hf.conn.execute(
        "UPDATE hangfire.jobqueue SET fetchedat = fetchedat - interval '2 minutes' WHERE id = %s",
        (claim.id,),
    )
    old = hf.conn.execute("SELECT fetchedat FROM hangfire.jobqueue WHERE id = %s", (claim.id,))
    assert stale(snapshot(capsys, dsn, "--stale-after", "60s")) == [(job, "srv:8:ee", True)]
    renewed = hf.run("keep_alive", id=claim.id, fetchedAt=old.fetchone()[0]).fetchone()
    assert renewed is not None
    assert stale(snapshot(capsys, dsn, "--stale-after", "60s")) == []


@pytest.mark.parametrize("version", [19, 21, 22, 23])
def test_discovered_with_its_schema_version(version, dsn, connect, capsys):
    conn = connect(autocommit=True)
    install(conn, version)
    code, found = queuetop(capsys, "discover", "--json", "--dsn", dsn)
    assert code == 0
    ours = [q for q in found["queues"] if q["adapter"] == "hangfire"]
    release = {19: "1.9.10, 1.19.11-1.19.12", 21: "1.19.13, 1.20.0-1.20.7",
               22: "1.20.8-1.20.9", 23: "1.20.10-1.21.x"}[version]  # fmt: skip
    assert [(q["table"], q["version"], q["confidence"]) for q in ours] == [
        ("hangfire.job", release, "high")
    ]
    # its other tables (jobqueue, state, server ...) are the library's, not queues of their own
    assert not [q for q in found["queues"] if q["table"].startswith("hangfire.") and q not in ours]


SUPPORTED = (
    "preset hangfire supports 1.9.10, 1.19.11-1.19.12 (schema 19), 1.19.13, 1.20.0-1.20.7 "
    "(schema 21), 1.20.8-1.20.9 (schema 22), 1.20.10-1.21.x (schema 23). Use a supported "
    "Hangfire.PostgreSql release, or copy the preset and adapt its SQL"
)


@pytest.mark.parametrize(
    ("upto", "change", "found"),
    [
        (18, None, "found schema 18"),  # timestamps without time zone until Install.v19
        (23, 'UPDATE hangfire."schema" SET version = 24', "found schema 24"),
        (23, 'DROP TABLE hangfire."schema"', "found no schema queuetop can read"),
    ],
)
def test_an_unknown_schema_version_is_refused_in_one_line(
    upto, change, found, dsn, connect, capsys
):
    conn = connect(autocommit=True)
    install(conn, upto)
    if change:
        conn.execute(change)
    code, err = queuetop(capsys, "snapshot", *PRESET, "--dsn", dsn)
    assert code == 2
    assert err.strip().splitlines() == [
        f"queuetop: error: Hangfire.PostgreSql at hangfire.job: {found}; {SUPPORTED}"
    ]


def test_a_claim_given_back_is_no_lease_and_a_lost_one_is(latest, dsn, capsys):
    """A stopping worker gives its job back (Requeue: fetchedat cleared, the state left
    Processing) and its server leaves: no claim is left to judge, and the library's own
    fetch takes the job at once. A Processing job with no queue row at all, which no fetch
    will ever take, is stale once its Processing state is older than the limit, its server
    alive or not."""
    hf = latest
    hf.announce("srv-stopping:9:ff")
    hf.announce("srv-live:9:gg")
    given_back, lost = hf.create(), hf.create()
    claims = [hf.fetch(), hf.fetch()]
    hf.process(claims[0], "srv-stopping:9:ff")
    hf.process(claims[1], "srv-live:9:gg")
    assert hf.run("requeue_fetched", Id=claims[0].id, FetchedAt=claims[0].fetched_at).rowcount == 1
    hf.conn.execute("DELETE FROM hangfire.server WHERE id = 'srv-stopping:9:ff'")  # RemoveServer
    hf.remove_from_queue(claims[1])  # its row gone while the job stays Processing
    hf.conn.execute(
        "UPDATE hangfire.state SET createdat = createdat - interval '2 hours' "
        "WHERE jobid = %s AND name = 'Processing'",
        (lost,),
    )

    snap = snapshot(capsys, dsn)
    assert snap["by_status"] == {"Processing": 2}
    assert stale(snap) == [(lost, "srv-live:9:gg", True)]
    assert hf.fetch().job_id == given_back and hf.fetch() is None
