"""queuetop doctor: each finding on a table built to trigger it, its fix making it go away,
and nothing to say about a healthy queue."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import replace

import psycopg
import pytest
from helpers import wait_until
from psycopg import sql

from dashboard import config, db, doctor, monitor
from dashboard.cli import main
from dashboard.setup import schema

# every server of the matrix (tests/servers.py)
pytestmark = pytest.mark.matrix

JOBS = "queuetop_demo.jobs"


def demo_table(
    conn: psycopg.Connection, rows: int = 200, *, every: int = 20, indexes: bool = True
) -> None:
    """The demo queue with `rows` jobs: one in `every` ready, one running, the rest done."""
    schema.init_demo(conn)
    if not indexes:
        conn.execute("DROP INDEX queuetop_demo.jobs_ready_idx, queuetop_demo.jobs_running_idx")
    conn.execute(
        """INSERT INTO queuetop_demo.jobs (status, worker, started_at, leased_until)
                    SELECT CASE WHEN g %% %(every)s = 0 THEN 'ready'
                                WHEN g %% %(every)s = 1 THEN 'running' ELSE 'done' END,
                           'w-' || g, now(), now() + interval '1 minute'
                    FROM generate_series(1, %(rows)s) AS g""",
        {"rows": rows, "every": every},
    )
    conn.execute("ANALYZE queuetop_demo.jobs")


def healthy_database(conn: psycopg.Connection) -> None:
    conn.execute(
        sql.SQL("ALTER DATABASE {} SET idle_in_transaction_session_timeout = '5min'").format(
            sql.Identifier(conn.info.dbname)
        )
    )


def examine(dsn: str, limits: doctor.Limits | None = None) -> doctor.Report:
    with db.connect_monitor(dsn, 5000, idle_timeout=False) as conn:
        spec = config.validate(conn, config.load_preset("demo"))
        return doctor.examine(conn, spec, limits)


def checks(report: doctor.Report) -> list[str]:
    return [f.check for f in report.findings]


def run_fix(dsn: str, finding: doctor.Finding) -> None:
    """What the user does with a finding (queuetop itself never runs it)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(finding.fix)


def test_healthy_queue_has_no_findings(dsn, connect, capsys):
    setup = connect(autocommit=True)
    demo_table(setup)
    healthy_database(setup)
    report = examine(dsn)
    assert report.findings == ()
    assert report.healthy
    assert main(["doctor", "--dsn", dsn]) == 0
    assert "healthy" in capsys.readouterr().out
    assert main(["doctor", "--dsn", dsn, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["healthy"] is True and data["findings"] == []


def test_primary_key_only_table_gets_partial_indexes_that_serve_the_counts(dsn, connect, capsys):
    setup = connect(autocommit=True)
    demo_table(setup, rows=20_000, every=1000, indexes=False)  # 0.1 % active
    healthy_database(setup)
    count_indexes = (
        "SELECT count(*) FROM pg_indexes WHERE schemaname = 'queuetop_demo' AND tablename = 'jobs'"
    )
    before = setup.execute(count_indexes).fetchone()[0]
    report = examine(dsn)
    assert checks(report) == ["index", "index"]
    ready, running = report.findings
    assert ready.fix.startswith("CREATE INDEX CONCURRENTLY ")
    assert ready.fix.endswith("""WHERE "status" = 'ready';""")
    assert '("created_at", "id")' in ready.fix  # the due order of the claim
    assert running.fix.endswith("""WHERE "status" = 'running';""")
    assert '("leased_until")' in running.fix  # by lease expiry: the stale scan
    assert "INCLUDE" in running.fix  # what the count reads, for an index-only scan
    # doctor ran nothing: the table still has the indexes it had (no ready or running one)
    assert setup.execute(count_indexes).fetchone()[0] == before
    assert main(["doctor", "--dsn", dsn, "--json"]) == 1
    assert [f["check"] for f in json.loads(capsys.readouterr().out)["findings"]] == [
        "index",
        "index",
    ]

    for finding in report.findings:
        run_fix(dsn, finding)
    setup.execute("ANALYZE queuetop_demo.jobs")
    assert examine(dsn).findings == ()
    with db.connect_monitor(dsn) as mon:
        snap = monitor.collect(mon, config.validate(mon, config.load_preset("demo")))
    assert snap.count_mode == "index"


def test_lease_column_without_an_index(dsn, connect):
    setup = connect(autocommit=True)
    demo_table(setup)
    healthy_database(setup)
    # the running rows are found through an index, but not by their lease
    setup.execute("DROP INDEX queuetop_demo.jobs_running_idx")
    setup.execute(
        "CREATE INDEX jobs_running_by_id ON queuetop_demo.jobs (id) WHERE status = 'running'"
    )
    report = examine(dsn)
    assert checks(report) == ["lease_index"]
    assert "leased_until" in report.findings[0].title
    assert '("leased_until") WHERE "status" = \'running\'' in report.findings[0].fix
    run_fix(dsn, report.findings[0])
    assert examine(dsn).findings == ()


def test_dead_rows_with_autovacuum_off_for_the_table(dsn, connect):
    setup = connect(autocommit=True)
    demo_table(setup, rows=2000)
    healthy_database(setup)
    setup.execute(
        "ALTER TABLE queuetop_demo.jobs SET (autovacuum_enabled = false, fillfactor = 70)"
    )  # room for HOT: this test is about vacuum alone
    setup.execute("UPDATE queuetop_demo.jobs SET attempts = attempts + 1 WHERE id % 4 <> 0")
    setup.execute("SELECT pg_stat_force_next_flush()")  # the counters, visible to doctor now
    report = examine(dsn)
    assert checks(report) == ["vacuum"]
    finding = report.findings[0]
    assert "1,500 dead rows" in finding.detail
    assert "last vacuum: never" in finding.detail
    assert "autovacuum_enabled = false" in finding.detail
    assert "RESET (autovacuum_enabled)" in finding.fix and "VACUUM (ANALYZE)" in finding.fix
    for statement in finding.fix.split(";"):  # VACUUM may not run in a transaction block
        if statement.strip():
            run_fix(dsn, doctor.Finding("vacuum", "", "", statement))
    assert examine(dsn).findings == ()


def test_high_churn_table_waiting_for_the_default_scale_factor(dsn, connect):
    setup = connect(autocommit=True)
    demo_table(setup, rows=20_000)
    healthy_database(setup)
    setup.execute("ALTER TABLE queuetop_demo.jobs SET (fillfactor = 70)")
    for _ in range(2):  # more updates than rows: the churn of a queue
        setup.execute("UPDATE queuetop_demo.jobs SET attempts = attempts + 1")
        setup.execute("SELECT pg_stat_force_next_flush()")  # counted before the vacuum
        setup.execute("VACUUM queuetop_demo.jobs")
    report = examine(dsn)
    assert checks(report) == ["vacuum"]
    # 50 + 0.2 x the live rows (about 20,000: vacuum estimates them): over 4,000 dead rows
    waits = re.search(r"autovacuum waits for ([\d,]+) dead rows", report.findings[0].detail)
    assert waits and int(waits.group(1).replace(",", "")) > 4000
    assert (
        "autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000"
        in report.findings[0].fix
    )
    run_fix(dsn, report.findings[0])
    assert examine(dsn).findings == ()


def test_few_hot_updates_on_full_pages_suggest_a_fillfactor(dsn, connect):
    setup = connect(autocommit=True)
    demo_table(setup, rows=2000)
    healthy_database(setup)
    setup.execute("UPDATE queuetop_demo.jobs SET payload = 'x' WHERE id % 2 = 0")
    setup.execute("SELECT pg_stat_force_next_flush()")  # counted before the vacuum
    setup.execute("VACUUM queuetop_demo.jobs")  # this test is about HOT, not dead rows
    report = examine(dsn)
    assert checks(report) == ["fillfactor"]
    assert "of 1,000 updates were HOT (fillfactor 100)" in report.findings[0].title
    assert report.findings[0].fix.startswith(
        'ALTER TABLE "queuetop_demo"."jobs" SET (fillfactor = 80);'
    )
    run_fix(dsn, report.findings[0])
    assert examine(dsn).findings == ()


def test_old_snapshot_holds_the_xmin_horizon(dsn, connect, capsys):
    setup = connect(autocommit=True)
    demo_table(setup)
    healthy_database(setup)
    reader = connect(application_name="report-job")
    reader.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    reader.execute("SELECT count(*) FROM queuetop_demo.jobs")  # holds its snapshot
    report = examine(dsn, doctor.Limits(horizon_age_s=0))
    assert checks(report) == ["xmin_horizon"]
    pid = reader.info.backend_pid
    assert f"session pid {pid} (report-job, idle in transaction)" in report.findings[0].detail
    assert f"pg_terminate_backend({pid})" in report.findings[0].fix
    # a transaction younger than the limit is not reported
    assert examine(dsn, doctor.Limits(horizon_age_s=3600)).findings == ()
    assert main(["doctor", "--dsn", dsn, "--horizon-age", "0", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["findings"][0]["check"] == "xmin_horizon"
    assert main(["doctor", "--dsn", dsn, "--horizon-age", "1h"]) == 0
    reader.commit()
    assert examine(dsn, doctor.Limits(horizon_age_s=0)).findings == ()


def test_a_waiter_is_named_as_waiting_not_as_a_session_to_end(dsn, connect):
    # a session waiting on a row lock holds its snapshot only until its blocker ends:
    # ending it fixes nothing, and doctor offered to terminate it beside its blocker
    setup = connect(autocommit=True)
    demo_table(setup)
    healthy_database(setup)
    holder = connect(application_name="holder")
    holder.execute("UPDATE queuetop_demo.jobs SET attempts = attempts + 1 WHERE id = 1")
    waiter = connect(application_name="waiter")
    waiting = threading.Thread(
        target=waiter.execute,
        args=("UPDATE queuetop_demo.jobs SET attempts = attempts + 1 WHERE id = 1",),
    )
    waiting.start()
    blockers = "SELECT pg_blocking_pids(%s)"
    wait_until(lambda: setup.execute(blockers, (waiter.info.backend_pid,)).fetchone()[0])
    assert setup.execute(blockers, (waiter.info.backend_pid,)).fetchone()[0] == [
        holder.info.backend_pid
    ]
    report = examine(dsn, doctor.Limits(horizon_age_s=0))
    [finding] = report.findings
    assert f"pg_terminate_backend({holder.info.backend_pid})" in finding.fix
    assert f"pg_terminate_backend({waiter.info.backend_pid})" not in finding.fix
    assert f"waiting on pid {holder.info.backend_pid}" in finding.detail
    holder.commit()
    waiting.join(timeout=30)
    waiter.commit()


def test_idle_in_transaction_timeout_unset(dsn, connect):
    setup = connect(autocommit=True)
    demo_table(setup)
    report = examine(dsn)  # the server's default: 0, never
    assert checks(report) == ["idle_timeout"]
    assert report.findings[0].fix.startswith(
        f'ALTER DATABASE "{setup.info.dbname}" SET idle_in_transaction_session_timeout'
    )
    run_fix(dsn, report.findings[0])
    assert examine(dsn).findings == ()
    # the monitor's own connection sets one for itself: doctor does not read that one
    with db.connect_monitor(dsn) as mon:
        assert mon.execute("SHOW idle_in_transaction_session_timeout").fetchone()[0] == "1min"


@pytest.mark.parametrize("argv", [["--table", "no_such_table"], ["--preset", "nope"]])
def test_doctor_errors_exit_2(dsn, connect, capsys, argv):
    schema.init_demo(connect(autocommit=True))
    assert main(["doctor", "--dsn", dsn, *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("queuetop: error:") and len(err.strip().splitlines()) == 1


def test_an_index_walked_whole_does_not_count_as_serving(dsn, connect):
    setup = connect(autocommit=True)
    demo_table(setup, rows=2000, indexes=False)
    healthy_database(setup)
    # an index on the group column gives the counts' GROUP BY its order, read end to end
    setup.execute("CREATE INDEX jobs_queue_idx ON queuetop_demo.jobs (queue)")
    with db.connect_monitor(dsn, 5000, idle_timeout=False) as conn:
        spec = config.validate(conn, config.load_preset("demo"))
        spec = replace(spec, columns=replace(spec.columns, group="queue"))
        report = doctor.examine(conn, spec)
    assert checks(report) == ["index", "index"]
    assert '("created_at", "id") INCLUDE ("queue")' in report.findings[0].fix
