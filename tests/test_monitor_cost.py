"""What a poll costs: counts through the indexes that exist, one pass where none does,
estimates above the limit, sections paced by their cost, and a locked table that stales
only the sections reading it."""

from __future__ import annotations

import json
from dataclasses import replace
from importlib import resources

import psycopg
import pytest

import queries
from dashboard import config, db
from dashboard.cli import main
from dashboard.models import QueueSpec
from dashboard.monitor import Monitor
from dashboard.monitor import counts as counting
from dashboard.monitor.budget import FIRST_READ_PACE_S, PACE_FLOOR_S, SHARE
from dashboard.monitor.plan import plan_counts
from dashboard.queue_sql.parts import queue_parts
from dashboard.setup import schema
from tests.helpers import is_waiting_on_lock, wait_until

# every server of the matrix (tests/servers.py)
pytestmark = pytest.mark.matrix

SCANS = """SELECT seq_scan FROM pg_stat_user_tables
           WHERE schemaname = 'queuetop_demo' AND relname = 'jobs'"""


def fill(conn: psycopg.Connection, rows: int, *, indexes: bool = True) -> None:
    """The demo queue: 0.1 % active (ready, running, one running job past its lease),
    3 % failed, 0.5 % dead, the rest done, all started before the latency window (so its
    indexes find none); analyzed."""
    schema.init_demo(conn)
    if not indexes:
        conn.execute("DROP INDEX queuetop_demo.jobs_ready_idx, queuetop_demo.jobs_running_idx")
    conn.execute(
        """
        INSERT INTO queuetop_demo.jobs (status, created_at, started_at, worker, leased_until)
        SELECT s, now() - interval '10 minutes', now() - interval '10 minutes', 'w-' || g,
               CASE WHEN s = 'running' THEN now() + CASE WHEN g = 1001 THEN interval '-1 minute'
                                                         ELSE interval '1 hour' END END
        FROM generate_series(1, %s) AS g
        CROSS JOIN LATERAL (SELECT CASE WHEN g %% 1000 = 0 THEN 'ready'
                                        WHEN g %% 1000 = 1 THEN 'running'
                                        WHEN g %% 1000 < 32 THEN 'failed'
                                        WHEN g %% 1000 < 37 THEN 'dead'
                                        ELSE 'done' END AS s) AS x""",
        (rows,),
    )
    conn.execute("VACUUM ANALYZE queuetop_demo.jobs")


def truth(conn: psycopg.Connection) -> dict[str, int]:
    return dict(
        conn.execute("SELECT status, count(*) FROM queuetop_demo.jobs GROUP BY 1").fetchall()
    )


def demo_spec(conn: psycopg.Connection, limit: int | None = None) -> QueueSpec:
    spec = config.validate(conn, config.load_preset("demo"))
    if limit is not None:
        spec = replace(spec, policy=replace(spec.policy, exact_count_limit=limit))
    return spec


def nodes(plan: dict) -> list[dict]:
    return [plan] + [n for child in plan.get("Plans", ()) for n in nodes(child)]


def table_reads(plan: dict) -> list[str]:
    """How the plan reads the queue table: 'Seq Scan', or the name of each index."""
    return sorted(
        n["Index Name"] if "Index Name" in n else n["Node Type"]
        for n in nodes(plan)
        if n.get("Relation Name") == "jobs"
        or ("Index Name" in n and n["Node Type"] != "Bitmap Heap Scan")
    )


def explain(conn: psycopg.Connection, stmt, params) -> dict:
    return conn.execute(queries.get("monitor/explain", statement=stmt), params).fetchone()[0][0][
        "Plan"
    ]


def test_each_active_value_is_counted_through_its_partial_index(dsn, connect):
    setup = connect(autocommit=True)
    fill(setup, 20_000)
    with db.connect_monitor(dsn) as mon:
        spec = demo_spec(mon)
        parts = queue_parts(spec)
        plan = plan_counts(mon, spec, parts)
        assert plan.mode == "index"
        stmt, params = counting.index_count(spec, parts, plan)
        reads = table_reads(explain(mon, stmt, params))
        snap = Monitor(spec, 1.0).poll(mon)
    # one branch per value: ready through jobs_ready_idx, running through jobs_running_idx
    # (a bitmap read names its index in its child node), and no pass over the table
    assert [r for r in reads if r != "Bitmap Heap Scan"] == ["jobs_ready_idx", "jobs_running_idx"]
    assert snap.count_mode == "index"
    real = truth(setup)
    assert (snap.counts["ready"], snap.counts["running"]) == (real["ready"], real["running"])
    assert [lease.worker for lease in snap.stale_leases] == ["w-1001"]


def test_primary_key_only_table_is_read_once_per_poll(dsn, connect):
    setup = connect(autocommit=True)
    fill(setup, 20_000, indexes=False)
    with db.connect_monitor(dsn) as mon:
        spec = demo_spec(mon)
        parts = queue_parts(spec)
        assert plan_counts(mon, spec, parts).mode == "scan"
        stmt, params = counting.one_pass_count(spec, parts, [])
        assert table_reads(explain(mon, stmt, params)) == ["Seq Scan"]

        for session in (setup, mon):  # earlier reads counted before we start counting
            session.execute("SELECT pg_stat_force_next_flush()")
        before = setup.execute(SCANS).fetchone()[0]
        snap = Monitor(spec, 1.0).poll(mon)
        mon.execute("SELECT pg_stat_force_next_flush()")  # this session's counters, now
        after = setup.execute(SCANS).fetchone()[0]
    assert after - before == 1  # counts, oldest ready, stale leases: all from one read
    assert snap.count_mode == "scan" and snap.estimated == ()
    assert snap.by_status == truth(setup)
    assert snap.oldest_ready_age_s >= 60
    assert [lease.worker for lease in snap.stale_leases] == ["w-1001"]


def test_estimates_above_the_limit_are_marked_and_exact_on_demand(dsn, connect, tmp_path, capsys):
    setup = connect(autocommit=True)
    fill(setup, 5000)
    real = truth(setup)
    with db.connect_monitor(dsn) as mon:
        monitor = Monitor(demo_spec(mon, limit=1000), 1.0)
        estimated = monitor.poll(mon)
        monitor.request_exact()
        exact = monitor.poll(mon)
        below = Monitor(demo_spec(mon), 1.0).poll(mon)  # under the default limit
    assert estimated.estimated == ("done", "failed", "dead")
    assert estimated.counts["ready"] == real["ready"]  # active rows: exact, always
    assert estimated.counts["done"] == pytest.approx(real["done"], rel=0.1)
    assert exact.estimated == () and exact.by_status == real
    assert below.estimated == () and below.by_status == real

    spec_file = tmp_path / "big.toml"
    text = resources.files("dashboard").joinpath("presets", "demo.toml").read_text()
    spec_file.write_text(text + "exact_count_limit = 1000\n")
    for flags, marked in (([], ["done", "failed", "dead"]), (["--exact"], [])):
        assert main(["snapshot", "--dsn", dsn, "--queue", str(spec_file), "--json", *flags]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["estimated"] == marked
        if not marked:
            assert data["by_status"] == real


def test_rare_status_above_the_limit_is_not_zero(dsn, connect):
    setup = connect(autocommit=True)
    fill(setup, 20_000)
    setup.execute(
        "UPDATE queuetop_demo.jobs SET status = 'failed' WHERE status = 'dead' "
        "AND NOT (id % 1000 = 32 AND id < 5000)"
    )  # 5 dead jobs left
    # statistics that list the common values only (as on a column of many values, or a
    # value the sample missed): the rare one is not among them, yet it has rows
    setup.execute("ALTER TABLE queuetop_demo.jobs ALTER COLUMN status SET STATISTICS 1")
    setup.execute("VACUUM ANALYZE queuetop_demo.jobs")
    common = setup.execute(
        "SELECT most_common_vals::text FROM pg_stats WHERE schemaname = "
        "'queuetop_demo' AND tablename = 'jobs' AND attname = 'status'"
    ).fetchone()[0]
    assert "dead" not in common
    real = truth(setup)
    assert real["dead"] == 5
    with db.connect_monitor(dsn) as mon:
        snap = Monitor(demo_spec(mon, limit=1000), 1.0).poll(mon)
    assert "dead" in snap.estimated
    assert snap.counts["dead"] > 0  # its share of what the statistics leave unlisted
    finished = ("done", "failed", "dead")
    assert sum(snap.counts[r] for r in finished) == pytest.approx(
        sum(real[r] for r in finished), rel=0.05
    )

    # with a partial index of its own, a rare value is counted exactly, not estimated
    setup.execute("ALTER TABLE queuetop_demo.jobs ALTER COLUMN status SET STATISTICS -1")
    setup.execute("CREATE INDEX jobs_dead_idx ON queuetop_demo.jobs (id) WHERE status = 'dead'")
    setup.execute("ANALYZE queuetop_demo.jobs")
    with db.connect_monitor(dsn) as mon:
        snap = Monitor(demo_spec(mon, limit=1000), 1.0).poll(mon)
    assert snap.counts["dead"] == 5
    assert "dead" not in snap.estimated and "done" in snap.estimated


def all_due(monitor: Monitor) -> Monitor:
    for section in monitor.sections.values():
        section.tried_at = None
    return monitor


def test_table_locked_by_another_session_degrades_only_its_sections(dsn, connect, background):
    setup = connect(autocommit=True)
    fill(setup, 2000)
    with db.connect_monitor(dsn, 1000) as mon:
        spec = demo_spec(mon)
        monitor = Monitor(spec, 1.0)
        first = monitor.poll(mon)
        locker = connect(application_name="migration")
        locker.execute("LOCK TABLE queuetop_demo.jobs IN ACCESS EXCLUSIVE MODE")
        reader = connect(application_name="reader")
        read = background(
            lambda: reader.execute("SELECT count(*) FROM queuetop_demo.jobs").fetchone()
        )
        wait_until(lambda: is_waiting_on_lock(setup, reader.info.backend_pid))
        blocked = all_due(monitor).poll(mon)
        # a fresh monitor (no plan yet, nothing to carry) degrades the same way
        fresh = Monitor(spec, 1.0).poll(mon)
        locker.rollback()
        read.join()
        after = all_due(monitor).poll(mon)
    blocker = f"pid {locker.info.backend_pid} (migration, holds AccessExclusiveLock)"
    for snap in (blocked, fresh):
        sections = {s.name: s for s in snap.sections}
        assert blocker in sections["counts"].error
        assert all(
            sections[n].error is None and sections[n].age_s is not None
            for n in ("locks", "waits", "idle")
        )
        # read on this poll: the locker's lock and the session queued behind it
        assert any(
            lk.pid == locker.info.backend_pid and lk.mode == "AccessExclusiveLock"
            for lk in snap.locks
        )
        assert reader.info.backend_pid in {w.pid for w in snap.waiting}
    assert blocked.by_status == first.by_status  # the last counts, carried with their age
    assert {s.name: s for s in after.sections}["counts"].error is None


def test_costly_section_is_read_less_often_and_carries_its_age(dsn, connect):
    setup = connect(autocommit=True)
    fill(setup, 200_000, indexes=False)  # one pass over the table: the costly read
    now = [1000.0]
    interval = 0.1  # the cheap sections cost well under SHARE of it; the pass does not
    with db.connect_monitor(dsn) as mon:
        monitor = Monitor(demo_spec(mon), interval, clock=lambda: now[0])
        cold = monitor.poll(mon)
        scan = {s.name: s for s in cold.sections}["scan"]
        paced = max(interval, scan.cost_ms / 1000 / SHARE)
        # the first read is cold: it paces the pass at most FIRST_READ_PACE_S
        assert scan.every_s == pytest.approx(min(paced, FIRST_READ_PACE_S), rel=0.01)
        now[0] += scan.every_s
        first = monitor.poll(mon)  # the second read: its cost is the one that paces
        scan = {s.name: s for s in first.sections}["scan"]
        assert scan.age_s == 0
        assert scan.cost_ms / 1000 > PACE_FLOOR_S  # a read worth pacing
        assert scan.every_s == pytest.approx(max(interval, scan.cost_ms / 1000 / SHARE), rel=0.01)
        assert scan.every_s > interval
        now[0] += interval
        second = monitor.poll(mon)
        now[0] += scan.every_s
        third = monitor.poll(mon)
    sections = {s.name: s for s in second.sections}
    assert sections["scan"].age_s == pytest.approx(interval)  # not read again: carried
    assert second.by_status == first.by_status
    assert sections["locks"].age_s == 0 and sections["idle"].age_s == 0  # read again
    assert {s.name: s for s in third.sections}["scan"].age_s == 0  # its turn came


def test_budget_room_and_pacing():
    """The pacing rules alone, on a stepped clock."""
    from dashboard.monitor.budget import BUDGET, HEADROOM, LoadMeter, Section

    section = Section("scan")
    section.succeeded("data", cost_s=0.6, now=0.0, interval=1.0)
    assert section.every_s == FIRST_READ_PACE_S  # a first read is cold: it paces at most so
    section.succeeded("data", cost_s=0.6, now=0.0, interval=1.0)
    assert section.every_s == pytest.approx(0.6 / SHARE)
    assert not section.due(10.0, 1.0) and section.due(0.6 / SHARE, 1.0)
    section.succeeded("data", cost_s=0.005, now=0.0, interval=1.0)
    assert section.every_s == 1.0  # a cheap read is never paced
    meter = LoadMeter(started=0.0)
    meter.add(1.0, now=0.0)
    meter.add(1.0, now=20.0)
    # a third 1 s read within the minute, planned at HEADROOM x its cost, would take the
    # last minute over BUDGET x 60 s: it waits
    assert 2.0 + HEADROOM * 1.0 > BUDGET * 60
    assert not meter.room_for(1.0, now=30.0)
    assert meter.room_for(1.0, now=61.0)  # the first read left the window
    assert meter.room_for(0.001, now=30.0)  # a cheap read always fits
    assert not meter.room_for(5.0, now=30.0)
    assert meter.room_for(5.0, now=81.0)  # alone over budget: once the window is quiet
    assert meter.load(now=30.0) == pytest.approx(2.0 / 30)
    # the finished states' whole-table count has a tenth of another section's share
    from dashboard.monitor.budget import FINISHED_FLOOR_S, FINISHED_SHARE

    fin = Section("finished", share=FINISHED_SHARE, floor_s=FINISHED_FLOOR_S)
    fin.succeeded("data", cost_s=0.004, now=0.0, interval=1.0)
    assert fin.every_s == pytest.approx(0.004 / FINISHED_SHARE)  # 2 s: under the others' floor
    fin.succeeded("data", cost_s=0.0005, now=0.0, interval=1.0)
    assert fin.every_s == 1.0
