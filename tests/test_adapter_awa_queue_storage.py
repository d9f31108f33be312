"""The awa preset on awa's queue storage engine, against real awa-pg 0.6.9 Python workers
(tests/library_apps/awa_app.py), one SIGKILLed mid-job as a crash would.

A fresh awa 0.6 database switches to queue storage when its first worker starts on it empty
(awa.storage_auto_finalize_if_fresh), so every test starts a worker before it enqueues. A job
is then no row of one table: it lives in one plane at a time (a ready entry, a claim receipt
with its heartbeat in attempt_state, a deferred row, a done entry); the preset's SQL folder
(queries/presets/awa/queue-storage/) presents each as one row. The truth is awa's own: its
get_job (load_job across the planes) for every job, its rescue's own selection for the stale
ones, its own rows for what recovery wrote, and its own workers running the requeued job.

Workers take a job silent for STALE_S for dead, but sweep for such jobs once an hour
(heartbeat_rescue_interval), so the orphan is still there when queuetop is asked; their ring
rotates once an hour too, so no finished job is pruned between two reads of a test. The
worker tests run twice: with awa's default deadline (a claim is a row of lease_claims) and
with none (deadline_duration 0: claims are items of compact lease_claim_batches).
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import psycopg
import pytest
from helpers import wait_until
from library_support import kill_group, rows, side_effects
from test_adapter_awa import ROLE_OF, STALE_S, Awa, queuetop

from dashboard.cli import main
from dashboard.setup import schema

HOUR_MS = "3600000"
STALE_PAST = timedelta(seconds=STALE_S + 1)
FLAGS = ("--preset", "awa", "--stale-after", f"{STALE_S}s")
MARKER = "40, queue_storage engine"

# awa's own stale-heartbeat selection on queue storage (awa-model queue_storage.rs, 0.6:
# rescue_stale_heartbeats for materialized leases, rescue_stale_receipt_claims_for_slot_tx
# for open claim receipts: no closure evidence, not lease-managed), with its cutoff
AWA_STALE = """
SELECT lease.job_id
FROM awa.leases AS lease
LEFT JOIN awa.attempt_state AS attempt
  ON attempt.job_id = lease.job_id AND attempt.run_lease = lease.run_lease
WHERE lease.state = 'running'
  AND COALESCE(attempt.heartbeat_at, lease.heartbeat_at) < now() - %(staleness)s
UNION
SELECT claims.job_id
FROM awa.lease_claims AS claims
LEFT JOIN awa.attempt_state AS attempt
  ON attempt.job_id = claims.job_id AND attempt.run_lease = claims.run_lease
WHERE COALESCE(attempt.heartbeat_at, claims.claimed_at) < now() - %(staleness)s
  AND claims.closed_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM awa.lease_claim_closures AS c
                  WHERE c.claim_slot = claims.claim_slot AND c.job_id = claims.job_id
                    AND c.run_lease = claims.run_lease)
  AND NOT EXISTS (SELECT 1 FROM awa.lease_claim_closure_batches AS b
                  WHERE b.receipt_ranges @> claims.receipt_id)
  AND NOT EXISTS (SELECT 1 FROM awa.done_entries AS d
                  WHERE d.job_id = claims.job_id AND d.run_lease = claims.run_lease)
  AND NOT EXISTS (SELECT 1 FROM awa.deferred_jobs AS d
                  WHERE d.job_id = claims.job_id AND d.run_lease = claims.run_lease)
  AND NOT EXISTS (SELECT 1 FROM awa.dlq_entries AS d
                  WHERE d.job_id = claims.job_id AND d.run_lease = claims.run_lease)
  AND NOT EXISTS (SELECT 1 FROM awa.leases AS l
                  WHERE l.job_id = claims.job_id AND l.run_lease = claims.run_lease)
UNION
SELECT items.job_id
FROM awa.lease_claim_batches AS batches
CROSS JOIN LATERAL unnest(batches.job_ids, batches.run_leases, batches.receipt_ids)
     AS items(job_id, run_lease, receipt_id)
LEFT JOIN awa.attempt_state AS attempt
  ON attempt.job_id = items.job_id AND attempt.run_lease = items.run_lease
WHERE COALESCE(attempt.heartbeat_at, batches.claimed_at) < now() - %(staleness)s
  AND NOT EXISTS (SELECT 1 FROM awa.lease_claim_closures AS c
                  WHERE c.claim_slot = batches.claim_slot AND c.job_id = items.job_id
                    AND c.run_lease = items.run_lease)
  AND NOT EXISTS (SELECT 1 FROM awa.lease_claim_closure_batches AS b
                  WHERE b.claim_slot = batches.claim_slot
                    AND b.receipt_ranges @> items.receipt_id)
  AND NOT EXISTS (SELECT 1 FROM awa.done_entries AS d
                  WHERE d.job_id = items.job_id AND d.run_lease = items.run_lease)
  AND NOT EXISTS (SELECT 1 FROM awa.deferred_jobs AS d
                  WHERE d.job_id = items.job_id AND d.run_lease = items.run_lease)
  AND NOT EXISTS (SELECT 1 FROM awa.dlq_entries AS d
                  WHERE d.job_id = items.job_id AND d.run_lease = items.run_lease)
  AND NOT EXISTS (SELECT 1 FROM awa.leases AS l
                  WHERE l.job_id = items.job_id AND l.run_lease = items.run_lease)
"""
# a job's claims, as rows (lease_claims) or as compact batch items: when, and how closed
CLAIMS = """
SELECT claims.run_lease, claims.claimed_at,
       (SELECT c.outcome FROM awa.lease_claim_closures AS c
        WHERE c.claim_slot = claims.claim_slot AND c.job_id = claims.job_id
          AND c.run_lease = claims.run_lease)
FROM awa.lease_claims AS claims WHERE claims.job_id = %(id)s
UNION ALL
SELECT items.run_lease, batches.claimed_at,
       (SELECT b.outcome FROM awa.lease_claim_closure_batches AS b
        WHERE b.claim_slot = batches.claim_slot AND b.receipt_ranges @> items.receipt_id)
FROM awa.lease_claim_batches AS batches
CROSS JOIN LATERAL unnest(batches.job_ids, batches.run_leases, batches.receipt_ids)
     AS items(job_id, run_lease, receipt_id)
WHERE items.job_id = %(id)s
ORDER BY 1
"""
CLAIM_KINDS = {"claim rows": None, "compact claim batches": "0"}


@pytest.fixture
def awa(dsn, tmp_path, request):
    """awa-pg 0.6.9 on a fresh database, its ring rotating once an hour; its claims rows or
    compact batches as the test's indirect parameter (a key of CLAIM_KINDS) says."""
    app = Awa("0.6.9", dsn, tmp_path)
    app.env["AWA_ROTATE_MS"] = HOUR_MS
    deadline = CLAIM_KINDS[getattr(request, "param", "claim rows")]
    if deadline is not None:
        app.env["AWA_DEADLINE_MS"] = deadline
    app.run("migrate")
    with psycopg.connect(dsn, autocommit=True) as conn:
        schema.init_audit(conn)
    yield app
    app.stop()


def first_worker(awa: Awa, name: str, queue: str, slots: int = 1):
    """The first worker on the empty database: awa switches it to queue storage."""
    proc = awa.start(name, queue, rescue_ms=HOUR_MS, slots=slots)
    wait_until(
        lambda: rows(awa.dsn, "SELECT awa.active_storage_engine()") == [("queue_storage",)],
        timeout=60,
    )
    return proc


def awa_roles(awa: Awa, ids: list[int]) -> dict[str, int]:
    """Jobs per role by awa's own get_job of every job the test made."""
    return dict(Counter(ROLE_OF[job["state"]] for job in awa.jobs(*ids).values()))


def awa_stale(dsn: str) -> set[int]:
    """The jobs awa's own stale-heartbeat rescue would take now (AWA_STALE)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        found = conn.execute(AWA_STALE, {"staleness": timedelta(seconds=STALE_S)}).fetchall()
    return {job_id for (job_id,) in found}


def claims(dsn: str, job_id: int) -> list[tuple]:
    """The job's claims, rows or compact batch items: (run_lease, claimed_at, closed as)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        return [tuple(r) for r in conn.execute(CLAIMS, {"id": job_id}).fetchall()]


def closures(dsn: str, job_id: int) -> list[tuple[int, str | None]]:
    """How awa's closure evidence closes each of the job's claims: (run_lease, outcome)."""
    return [(lease, outcome) for lease, _, outcome in claims(dsn, job_id)]


def started(awa: Awa, job_id: int) -> bool:
    return side_effects(awa.dsn, job_id)["started"] >= 1


def test_discovered_with_its_engine_and_version(awa, capsys):
    first_worker(awa, "first", "demo")
    awa.enqueue(0.1)
    code, found = queuetop(capsys, "discover", "--dsn", awa.dsn)
    assert code == 0
    ours = [q for q in found["queues"] if q["adapter"] == "awa"]
    assert [(q["table"], q["version"], q["schema_marker"], q["confidence"]) for q in ours] == [
        ("awa.jobs_hot", "0.6.5 to 0.6.9", MARKER, "high")
    ]
    # awa's planes (ready_entries, deferred_jobs, leases, ...) are not queues of their own
    assert not [q for q in found["queues"] if q["table"].startswith("awa.") and q not in ours]


@pytest.mark.parametrize("awa", list(CLAIM_KINDS), indirect=True)
def test_killed_worker_job_is_the_one_stale_lease_then_requeued_and_run_once(awa, capsys):
    dsn, flags = awa.dsn, [*FLAGS, "--dsn", awa.dsn]
    doomed = first_worker(awa, "doomed", "demo", slots=3)
    orphan = awa.enqueue(600)
    quick = awa.enqueue(0.1)
    failing = awa.enqueue(0.1, "demo", "fail")
    later = awa.enqueue(0.1, "demo", "later")
    wait_until(lambda: started(awa, orphan), timeout=60)
    wait_until(lambda: awa.jobs(quick, failing)[failing]["state"] == "failed", timeout=60)
    assert awa.jobs(quick)[quick]["state"] == "completed"
    kill_group(doomed)  # mid-job: its claim receipt stays open, nobody beats for it
    live = awa.enqueue(600, "live")
    awa.start("alive", "live", rescue_ms=HOUR_MS)
    wait_until(lambda: started(awa, live), timeout=60)
    ids = [orphan, quick, failing, later, live]

    def stale_now():
        _, snap = queuetop(capsys, "snapshot", *flags)
        return snap if snap["stale_leases"] else None

    snap = wait_until(stale_now, timeout=STALE_S + 30, interval=0.5)
    assert snap["threshold"]["source"] == "--stale-after"
    assert [(s["id"], s["worker_alive"], s["group"]) for s in snap["stale_leases"]] == [
        (orphan, False, "demo")
    ]
    assert awa_stale(dsn) == {orphan}  # awa's own rescue would take that one
    # the counts are awa's own: get_job of every job (the later one is deferred)
    assert snap["counts"] == {role: awa_roles(awa, ids).get(role, 0) for role in snap["counts"]}
    assert awa_roles(awa, ids) == {"scheduled": 1, "running": 2, "done": 1, "dead": 1}

    # the live worker's job, older than the limit now, is not stale: queue storage heartbeats
    # work in awa-pg 0.6.9 (attempt_state.heartbeat_at), unlike its canonical path
    [(_, claimed, _)] = claims(dsn, live)
    wait_until(lambda: rows(dsn, "SELECT now()")[0][0] > claimed + STALE_PAST, timeout=30)
    _, snap = queuetop(capsys, "snapshot", *flags)
    assert {s["id"] for s in snap["stale_leases"]} == awa_stale(dsn) == {orphan}
    beat = rows(dsn, "SELECT heartbeat_at FROM awa.attempt_state WHERE job_id = %s", live)
    assert beat and beat[0][0] > claimed + STALE_PAST - timedelta(seconds=STALE_S)

    code, result = queuetop(capsys, "requeue", str(orphan), *flags, "--reason", "worker killed")
    assert code == 0 and result["changed"] == [orphan], result
    job = awa.jobs(orphan)[orphan]
    assert (job["state"], job["attempt"]) == ("available", 1)
    assert job["last_error"]["error"] == "rescued by queuetop requeue: worker presumed dead"
    # the claim receipt closed as awa's rescue closes it; its heartbeat row gone with it
    assert closures(dsn, orphan) == [(1, "rescued")]
    assert rows(dsn, "SELECT 1 FROM awa.attempt_state WHERE job_id = %s", orphan) == []
    _, snap = queuetop(capsys, "snapshot", *flags)
    assert orphan not in {s["id"] for s in snap["stale_leases"]}
    assert snap["counts"]["ready"] == awa_roles(awa, ids)["ready"] == 1
    # a fresh worker runs it, once: the killed run, then one
    awa.start("fresh", "demo", rescue_ms=HOUR_MS)
    wait_until(lambda: side_effects(dsn, orphan)["done"] == 1, timeout=60)
    assert side_effects(dsn, orphan) == Counter(started=2, done=1)
    wait_until(lambda: awa.jobs(orphan)[orphan]["state"] == "completed", timeout=30)
    assert awa.jobs(orphan)[orphan]["attempt"] == 2
    assert rows(
        dsn,
        "SELECT action, outcome, reason FROM queuetop.audit_log WHERE target = %s",
        str(orphan),
    ) == [("requeue", "changed", "worker killed")]


@pytest.mark.parametrize("awa", list(CLAIM_KINDS), indirect=True)
def test_dead_letter_ends_where_the_library_failure_ends(awa, capsys):
    dsn, flags = awa.dsn, [*FLAGS, "--dsn", awa.dsn]
    doomed = first_worker(awa, "doomed", "stuck")
    stuck = awa.enqueue(600, "stuck")
    wait_until(lambda: started(awa, stuck), timeout=60)
    kill_group(doomed)  # its job: running, its heartbeat silent from now on
    awa.start("w", "demo", rescue_ms=HOUR_MS)
    failing = awa.enqueue(0.1, "demo", "fail")
    parked = awa.enqueue(0.1, "parked")  # no worker takes queue parked: available
    later = awa.enqueue(0.1, "demo", "later")  # deferred: refused by name
    wait_until(lambda: awa.jobs(failing)[failing]["state"] == "failed", timeout=60)

    code, result = queuetop(capsys, "dead-letter", str(parked), "--reason", "poison", *flags)
    assert code == 0 and result["changed"] == [parked], result
    # taken out of its lane as awa's cancel does: a tombstone on its ready entry
    assert rows(dsn, "SELECT count(*) FROM awa.ready_tombstones WHERE job_id = %s", parked) == [
        (1,)
    ]
    wait_until(lambda: awa_stale(dsn) == {stuck}, timeout=STALE_S + 30, interval=0.5)
    code, result = queuetop(capsys, "dead-letter", str(stuck), "--reason", "hung", *flags)
    assert code == 0 and result["changed"] == [stuck], result

    jobs = awa.jobs(failing, parked, stuck)
    library = jobs[failing]
    # where awa's worker leaves a job that failed for good (TerminalError), for the available
    # job and the running one alike
    for ours, reason in ((jobs[parked], "poison"), (jobs[stuck], "hung")):
        assert ours["state"] == library["state"] == "failed"
        assert ours["finalized_at"] and library["finalized_at"]
        assert set(ours["last_error"]) == set(library["last_error"])
        assert ours["last_error"]["error"] == reason
        assert ours["last_error"]["terminal"] is library["last_error"]["terminal"] is True
    assert library["last_error"]["error"].startswith("TerminalError: boom")
    # the running attempt's receipt closed as awa's own failure closes it, and its done entry
    # backed by its ready entry, as awa's is
    assert closures(dsn, stuck) == [(1, "failed")] and closures(dsn, failing) == [(1, "failed")]
    backed = "SELECT args IS NULL FROM awa.done_entries WHERE job_id = %s"
    assert rows(dsn, backed, stuck) == rows(dsn, backed, failing) == [(True,)]
    ids = [stuck, failing, parked, later]
    _, snap = queuetop(capsys, "snapshot", *flags)
    assert snap["counts"] == {role: awa_roles(awa, ids).get(role, 0) for role in snap["counts"]}
    assert snap["counts"]["dead"] == 3 and not snap["stale_leases"]

    for action in ("requeue", "dead-letter"):
        code, result = queuetop(capsys, action, str(later), "--reason", "no", *flags)
        assert code == 1 and result["changed"] == [], result
        (skipped,) = result["skipped"]
        assert skipped["id"] == later and "awa keeps this scheduled job" in skipped["reason"]
    assert awa.jobs(later)[later]["state"] == "scheduled"
    # and back: requeue of a failed job is awa's admin retry (available, attempt 0)
    code, result = queuetop(capsys, "requeue", str(parked), *flags)
    assert code == 0 and result["changed"] == [parked], result
    assert (awa.jobs(parked)[parked]["state"], awa.jobs(parked)[parked]["attempt"]) == (
        "available",
        0,
    )
    awa.start("parked-worker", "parked", rescue_ms=HOUR_MS)
    wait_until(lambda: awa.jobs(parked)[parked]["state"] == "completed", timeout=60)
    assert side_effects(dsn, parked) == Counter(started=1, done=1)


def test_a_transition_still_draining_canonical_jobs_is_refused_in_one_line(awa, capsys):
    """awa's staged transition (awa storage prepare / enter-mixed-transition): while mixed,
    canonical jobs still drain from awa.jobs_hot beside the queue storage; refused."""
    awa.enqueue(0.1)  # a canonical job: the database stays canonical
    rows(awa.dsn, "SELECT awa.storage_prepare('queue_storage', '{\"schema\": \"awa\"}')")
    awa.env["AWA_ROLE"] = "queue_storage_target"
    awa.start("target", "other", rescue_ms=HOUR_MS)

    def entered() -> bool:  # awa refuses until a queue_storage_target runtime reports
        try:
            rows(awa.dsn, "SELECT awa.storage_enter_mixed_transition()")
        except psycopg.Error:
            return False
        return True

    wait_until(entered, timeout=60, interval=0.5)
    code = main(["snapshot", *FLAGS, "--dsn", awa.dsn])
    captured = capsys.readouterr()
    assert code == 2 and "Traceback" not in captured.err
    (line,) = captured.err.strip().splitlines()
    assert f"found schema {MARKER} in mixed_transition state; preset awa supports" in line
