"""`--preset pg-boss` on the pg-boss releases before 12: 10.4.2 and 11.1.2 (the newest of
each major whose `engines` admit Node 20), their schemas from their own migrations, jobs and
queues made with their API, their real workers (boss.work) in Node processes.

Neither release has heartbeats: a claim runs out at started_on + its queue's expiry
(expire_in in 10, expire_seconds in 11), which is how pg-boss's own supervisor judges it and
how queuetop maps it (queries/presets/pg-boss/v10/, v11/). The victim's queue expires claims
after 2 s, the live worker's after an hour: the SIGKILLed worker's job is stale, the live
worker's long job is not, and whether either worker lives is unknown (pg-boss records no
worker on the job). After `queuetop requeue --preset pg-boss`, a fresh worker completes the
orphan exactly once; a dead-letter is failed plus its copy in the dead-letter queue.

Also here: a schema marker faked ahead is refused in one line naming both versions, and a
schema changing under a running monitor is explained in one line.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timezone

import psycopg
import pytest
from helpers import wait_until
from library_support import kill_group
from node_apps import NodeApp
from test_cli_errors import run_cli

from dashboard import config, db, monitor
from dashboard.cli import main
from dashboard.config.versions import SchemaChanged

HOUR_MS = 3_600_000
RELEASES = {"10.4.2": ("pg-boss 10", "24"), "11.1.2": ("pg-boss 11 (and 12.0 to 12.5)", "26")}
QUEUES = {
    "dlq": {},
    "live": {"retryLimit": 0, "expireInSeconds": 3600, "deadLetter": "dlq"},
    "victim": {"retryLimit": 0, "expireInSeconds": 2},
}
JOBS = {  # in this order: the live worker takes one job at a time, oldest first
    "quick": {"queue": "live", "data": {"ms": 10}},
    "failed": {"queue": "live", "data": {"fail": "boom"}},
    "live_long": {"queue": "live", "data": {"ms": HOUR_MS}},
    "scheduled": {"queue": "live", "options": {"startAfter": 3600}},
    "orphan": {"queue": "victim", "data": {"first_ms": HOUR_MS, "ms": 10}},
}


@pytest.fixture(params=list(RELEASES))
def boss(request, dsn, tmp_path):
    yield from _boss(request.param, dsn, tmp_path)


@pytest.fixture
def boss10(dsn, tmp_path):
    yield from _boss("10.4.2", dsn, tmp_path)


def _boss(release: str, dsn: str, tmp_path):
    app = NodeApp(
        f"pg-boss-{release}", [f"pg-boss@{release}"], "pgboss_legacy_app.mjs", dsn, tmp_path
    )
    app.release, app.marker = RELEASES[release]
    try:
        yield app
    finally:
        app.stop()


def states(conn: psycopg.Connection, ids: dict[str, str]) -> dict[str, str]:
    found = dict(
        conn.execute(
            "SELECT id::text, state::text FROM pgboss.job WHERE id = ANY(%s::uuid[])",
            (list(ids.values()),),
        ).fetchall()
    )
    return {label: found.get(i) for label, i in ids.items()}


def runs(conn: psycopg.Connection, job_id: str, event: str) -> list[int]:
    rows = conn.execute(
        "SELECT retry_count FROM job_runs WHERE job_id = %s AND event = %s ORDER BY at",
        (job_id, event),
    ).fetchall()
    return [r for (r,) in rows]


def library_roles(boss: NodeApp, ids: dict[str, str]) -> dict[str, int]:
    """pg-boss's own view: getJobById for each job, as queuetop's roles; its getQueueSize
    of the dead-letter queue for the copies pg-boss made there (ready)."""
    view = boss.run("view", json.dumps({k: [JOBS[k]["queue"], v] for k, v in ids.items()}))
    roles = {"ready": 0, "scheduled": 0, "running": 0, "done": 0, "dead": 0}
    now = datetime.now(timezone.utc)
    for job in view["jobs"].values():
        if job["state"] in ("created", "retry"):
            later = datetime.fromisoformat(job["startAfter"].replace("Z", "+00:00")) > now
            roles["scheduled" if later else "ready"] += 1
        else:
            roles[{"active": "running", "completed": "done"}.get(job["state"], "dead")] += 1
    dlq = boss.run("view", json.dumps({"x": ["dlq", "00000000-0000-0000-0000-000000000000"]}))
    roles["ready"] += dlq["sizes"]["dlq"]
    return roles


def queuetop(capsys, *argv: str) -> tuple[int, dict]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


def test_killed_worker_of_pgboss_10_and_11_requeued_and_completed_once(boss, dsn, connect, capsys):
    ids = boss.run("setup", json.dumps({"queues": QUEUES, "jobs": JOBS}))
    assert main(["init-audit", "--dsn", dsn]) == 0
    conn = connect(autocommit=True)
    with db.connect_monitor(dsn) as mon:
        mapped = config.validate(mon, config.load_preset("pg-boss")).library_version
    assert (mapped.release, mapped.marker) == (boss.release, boss.marker)

    boss.start("worker-live", "work", "live")
    settled = {"quick": "completed", "failed": "failed", "live_long": "active"}
    wait_until(lambda: states(conn, {k: ids[k] for k in settled}) == settled, timeout=60)
    victim = boss.start("worker-victim", "work", "victim")
    wait_until(lambda: runs(conn, ids["orphan"], "start"), timeout=60, interval=0.2)
    kill_group(victim)  # mid-job
    capsys.readouterr()

    def orphan_stale() -> dict | None:
        code, snap = queuetop(capsys, "snapshot", "--preset", "pg-boss", "--json", "--dsn", dsn)
        stale = {lease["id"] for lease in snap["stale_leases"]}
        return snap if code == 0 and stale == {ids["orphan"]} else None

    snap = wait_until(orphan_stale, timeout=60, interval=0.5)  # not the live worker's job
    [lease] = snap["stale_leases"]
    assert (lease["worker_alive"], lease["group"], lease["lease_token"]) == (None, "victim", 0)
    assert snap["threshold"]["signal"] == "expiry"
    counts = {r: n for r, n in snap["counts"].items() if n}
    assert counts == {r: n for r, n in library_roles(boss, ids).items() if n}
    assert counts == {"ready": 1, "scheduled": 1, "running": 2, "done": 1, "dead": 1}

    code, result = queuetop(
        capsys, "requeue", "--preset", "pg-boss", "--dsn", dsn, "--json", ids["orphan"]
    )
    assert (code, result["changed"]) == (0, [ids["orphan"]])
    assert states(conn, {"o": ids["orphan"]}) == {"o": "retry"}
    boss.start("worker-fresh", "work", "victim")
    wait_until(lambda: states(conn, {"o": ids["orphan"]}) == {"o": "completed"}, timeout=60)
    assert runs(conn, ids["orphan"], "start") == [0, 1]  # the killed run, then the fresh one
    assert runs(conn, ids["orphan"], "done") == [1]  # completed exactly once

    # dead-letter as pg-boss fails a job for good: failed, the reason in output, a copy in
    # the queue's dead-letter queue; the live worker's job on its live claim is skipped
    code, result = queuetop(
        capsys,
        "dead-letter",
        "--preset",
        "pg-boss",
        "--dsn",
        dsn,
        "--json",
        "--reason",
        "not wanted",
        ids["scheduled"],
        ids["live_long"],
    )
    assert code == 1 and result["changed"] == [ids["scheduled"]]
    view = boss.run(
        "view", json.dumps({"s": ["live", ids["scheduled"]], "d": ["dlq", ids["quick"]]})
    )
    assert (view["jobs"]["s"]["state"], view["jobs"]["s"]["output"]) == (
        "failed",
        {"value": {"message": "not wanted"}},
    )
    assert view["sizes"]["dlq"] == 2  # the copies of `failed` and `scheduled`


async def dashboard_sees_the_upgrade(dsn: str, conn: psycopg.Connection) -> None:
    from test_ui_live import until

    from dashboard.ui.app import QueuetopApp

    with db.connect_monitor(dsn) as mon:
        spec = config.validate(mon, config.load_preset("pg-boss"))
    app = QueuetopApp(spec, dsn, interval=0.2)
    async with app.run_test(size=(200, 40)) as pilot:
        await until(pilot, lambda: app.snapshots_applied >= 1)
        conn.execute("UPDATE pgboss.version SET version = 26")  # pg-boss 11 migrated it
        app.source.monitor._schema.checked_at = None  # re-read now, not 10 s later
        await until(pilot, lambda: "schema changed" in app.link.reason)
        assert app.link.reason == (
            "pg-boss schema changed under queuetop: schema 26 at pgboss.job, was schema 24 "
            "(pg-boss 10) when it started; restart queuetop to map pg-boss 11 (and 12.0 to 12.5)"
        )
    conn.execute("UPDATE pgboss.version SET version = 24")


def test_unknown_marker_is_refused_and_a_change_mid_watch_is_one_line(
    boss10, dsn, connect, tmp_path
):
    boss10.run("setup", json.dumps({"queues": {"q": {}}, "jobs": {}}))
    conn = connect(autocommit=True)
    with db.connect_monitor(dsn) as mon:
        spec = config.validate(mon, config.load_preset("pg-boss"))
        clock = [0.0]  # the monitor's section clock: the marker is re-read every 10 s
        watching = monitor.Monitor(spec, clock=lambda: clock[0])
        watching.poll(mon)
        conn.execute("UPDATE pgboss.version SET version = 25")  # an upgrade, mid-watch
        clock[0] += 11
        with pytest.raises(SchemaChanged) as changed:
            watching.poll(mon)
    assert str(changed.value) == (
        "pg-boss schema changed under queuetop: schema 25 at pgboss.job, was schema 24 "
        "(pg-boss 10) when it started; queuetop supports pg-boss 10 (schema 24), "
        "11 (and 12.0 to 12.5) (schema 26), 12.38 (schema 46)"
    )
    result = run_cli("snapshot", "--preset", "pg-boss", "--dsn", dsn, env_home=str(tmp_path))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "queuetop: error: pg-boss at pgboss.job: found schema 25; preset pg-boss supports "
        "10 (schema 24), 11 (and 12.0 to 12.5) (schema 26), 12.38 (schema 46). Use a "
        "supported pg-boss release, or copy the preset and adapt its SQL"
    ]

    # the dashboard says it in its header's one line, in those words
    conn.execute("UPDATE pgboss.version SET version = 24")
    asyncio.run(dashboard_sees_the_upgrade(dsn, conn))

    # the marker unchanged, a column gone: the statement's error, said as a schema change
    with db.connect_monitor(dsn) as mon:
        spec = config.validate(mon, config.load_preset("pg-boss"))
        watching = monitor.Monitor(spec, clock=lambda: clock[0])
        watching.poll(mon)
        conn.execute("ALTER TABLE pgboss.job RENAME COLUMN expire_in TO expire_after")
        clock[0] += 11  # every section due again
        with pytest.raises(SchemaChanged, match="the schema of pgboss.job changed under queuetop"):
            watching.poll(mon)
