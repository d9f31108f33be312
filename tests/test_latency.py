"""Latency: how long jobs wait and run, read by the monitor against the truth of the rows.

A staged workload (tests/latency_stage.py: two groups with their own fixed wait and run
times) is read by a Monitor poll and by `snapshot --json`; their p50/p95 are within one
poll interval of the percentiles computed from the rows themselves, per group and for the
queue. A table without a finish time says which flag would measure it and `check` answers
UNKNOWN over it; without an index on the timestamps the section is paced and doctor names
the index; the monitor takes nothing stronger than AccessShareLock reading it. A history
table with naive timestamps read in another session zone, pgqueuer's log as its real worker
writes it, and every library preset that maps a finish time on its library's own schema.
"""

from __future__ import annotations

import json
import time
from importlib import resources

import psycopg
import pytest
from helpers import wait_until
from latency_stage import (
    FLAGS,
    GAP_S,
    GROUPS,
    Stage,
    create_queue,
    fill_history,
    percentile,
    truth,
)
from test_adapter_pgqueuer import library, pgq_dsn, workers  # noqa: F401 (fixtures)
from test_discover import dbos_python, django_python, oban_python, twelve  # noqa: F401 (fixtures)

import queries
from dashboard import config, db, doctor
from dashboard.cli import main
from dashboard.models import LATENCY_BUCKETS, Latency
from dashboard.monitor import Monitor
from dashboard.monitor.budget import FINISHED_SHARE
from dashboard.monitor.latency import served, side_statements, sides
from dashboard.queue_sql.parts import queue_parts

pytestmark = pytest.mark.db  # tier: see tests/conftest.py

INTERVAL = 1.0
PERCENTILES = (("p50_s", 0.5), ("p95_s", 0.95))


def assert_near_truth(latency: Latency, real: dict, tolerance: float) -> int:
    """Queue and per-group p50/p95 of wait and run within `tolerance` of the truth; how
    many numbers were compared."""
    groups = {g.group: g for g in latency.groups}
    assert set(groups) == set(GROUPS)
    compared = 0
    for name, mine in [(None, latency.queue), *groups.items()]:
        want = real[name]
        for kind, values in (("wait", want.waits), ("run", want.runs)):
            got = getattr(mine, kind)
            # at most the jobs that start or finish within a poll interval
            assert got.count == pytest.approx(len(values), abs=len(GROUPS) / GAP_S * tolerance)
            for field, q in PERCENTILES:
                expected = want.wait(q) if kind == "wait" else want.run(q)
                assert getattr(got, field) == pytest.approx(expected, abs=tolerance), (
                    name,
                    kind,
                    field,
                )
                compared += 1
    return compared


def test_staged_workload_read_within_one_poll_of_the_truth(dsn, connect, capsys):
    with db.connect_monitor(dsn, db.monitor_timeout_ms(INTERVAL)) as mon:
        spec = config.validate(mon, create_queue(dsn))
    watcher = connect(autocommit=True)
    stage = Stage(dsn)
    stage.start()
    try:
        monitor = Monitor(spec, INTERVAL)
        with db.connect_monitor(dsn, db.monitor_timeout_ms(INTERVAL)) as mon:
            for _ in range(3):  # while jobs flow: the truth read right after the poll
                time.sleep(1.2)
                snap = monitor.poll(mon)
                assert snap.latency.error is None and snap.latency.missing == ()
                assert_near_truth(snap.latency, truth(watcher), INTERVAL)
            stage.stop()
            settled = Monitor(spec, INTERVAL).poll(mon)
    finally:
        stage.stop()
    real = truth(watcher)
    compared = assert_near_truth(settled.latency, real, INTERVAL)
    assert compared == 12
    # settled: the same rows, so the same numbers (percentile_cont interpolates as numpy)
    queue = settled.latency.queue
    assert queue.wait.p95_s == pytest.approx(real[None].wait(0.95), abs=1e-6)
    assert queue.run.p50_s == pytest.approx(real[None].run(0.5), abs=1e-6)
    assert (queue.finished, queue.failed) == (real[None].finished, real[None].failed)
    assert queue.failed > 0
    for durations, values in ((queue.wait, real[None].waits), (queue.run, real[None].runs)):
        assert durations.buckets == tuple(
            sum(1 for v in values if v <= bound) for bound in LATENCY_BUCKETS
        )
        assert durations.sum_s == pytest.approx(sum(values))
    # by construction each group waited and ran at least its fixed times, and the truth
    # says so from the rows
    for name, timing in GROUPS.items():
        assert min(real[name].waits) >= timing.wait_s - 0.01
        assert min(real[name].runs) >= timing.run_s - 0.01

    # the same through the command line: snapshot --json, and check's thresholds
    assert main(["snapshot", "--dsn", dsn, *FLAGS, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["latency"]
    assert data["window_s"] == 300.0 and data["error"] is None and data["paced"] is None
    by_group = {g["group"]: g for g in data["groups"]}
    for name in (None, *GROUPS):
        got = data["queue"] if name is None else by_group[name]
        assert got["wait"]["p95_s"] == pytest.approx(real[name].wait(0.95), abs=INTERVAL)
        assert got["run"]["p50_s"] == pytest.approx(real[name].run(0.5), abs=INTERVAL)
        assert got["finished"] == real[name].finished
    assert main(["snapshot", "--dsn", dsn, *FLAGS]) == 0
    text = capsys.readouterr().out
    assert "latency over the last 5m: wait p50" in text and "failed" in text

    slowest = max(real[None].waits)
    assert main(["check", "--dsn", dsn, *FLAGS, "--max-wait-p95", "0.05"]) == 1
    assert capsys.readouterr().out.startswith("OVER  p95 wait time:")
    assert main(["check", "--dsn", dsn, *FLAGS, "--max-wait-p95", f"{slowest + 60:.0f}"]) == 0
    assert capsys.readouterr().out.startswith("ok    p95 wait time:")
    assert main(["check", "--dsn", dsn, *FLAGS, "--max-run-p95", "1h", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "ok" and doc["checks"][0]["check"] == "run_p95_s"
    assert doc["checks"][0]["value"] == pytest.approx(real[None].run(0.95), abs=INTERVAL)


def demo_without(tmp_path, *keys: str) -> str:
    """The demo preset as a TOML file, without the given column keys."""
    text = resources.files("dashboard").joinpath("presets", "demo.toml").read_text()
    lines = [ln for ln in text.splitlines() if ln.split(" = ")[0].strip() not in keys]
    path = tmp_path / "demo.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_a_table_without_a_finish_time_says_which_flag_and_check_is_unknown(
    dsn, connect, tmp_path, capsys
):
    create_queue(dsn)
    Stage(dsn, seconds=1.5, workers=2).run()
    spec_file = demo_without(tmp_path, "finished_at")
    assert main(["snapshot", "--dsn", dsn, "--queue", spec_file, "--json"]) == 0
    latency = json.loads(capsys.readouterr().out)["latency"]
    assert latency["queue"]["run"] is None and latency["finished_measured"] is False
    assert (
        latency["queue"]["wait"]["count"] == truth(connect(autocommit=True))[None].waits.__len__()
    )
    [missing] = latency["missing"]
    assert "--finished-at-column" in missing and "finished_at" in missing

    code = main(["check", "--dsn", dsn, "--queue", spec_file, "--max-run-p95", "1h"])
    out = capsys.readouterr().out
    assert code == 3, out  # UNKNOWN, never ok
    [line] = out.strip().splitlines()
    assert line.startswith("UNKNOWN  --max-run-p95: p95 run time unknown:")
    assert "--finished-at-column" in line
    # the wait is measured all the same; and a spec with no start time names that flag
    assert main(["check", "--dsn", dsn, "--queue", spec_file, "--max-wait-p95", "1h"]) == 0
    capsys.readouterr()
    bare = demo_without(tmp_path, "finished_at", "started_at")
    assert main(["check", "--dsn", dsn, "--queue", bare, "--max-wait-p95", "1h"]) == 3
    assert "--started-at-column" in capsys.readouterr().out


def test_without_an_index_the_latency_is_paced_and_doctor_names_the_index(dsn, connect):
    setup = connect(autocommit=True)
    create_queue(dsn)
    setup.execute(
        "DROP INDEX queuetop_demo.jobs_started_at_idx, queuetop_demo.jobs_finished_at_idx"
    )
    fill_history(setup, 20_000)
    with db.connect_monitor(dsn, 5000, idle_timeout=False) as mon:
        spec = config.validate(mon, config.load_preset("demo"))
        snap = Monitor(spec, INTERVAL).poll(mon)
        report = doctor.examine(mon, spec)
    latency = snap.latency
    assert latency.error is None
    assert latency.queue.finished == 37 and latency.queue.failed == 3
    assert latency.paced.startswith("read every ")
    assert "started_at and finished_at" in latency.paced and "doctor" in latency.paced
    section = {s.name: s for s in snap.sections}["latency"]
    assert section.every_s == pytest.approx(
        max(INTERVAL, min(section.cost_ms / 1000 / FINISHED_SHARE, 2.0)), rel=0.01
    )  # paced at the finished counts' share (a first read, cold, at most 2 s)
    found = [f for f in report.findings if f.check == "latency_index"]
    assert [f.fix for f in found] == [
        'CREATE INDEX CONCURRENTLY "jobs_started_at_idx" ON "queuetop_demo"."jobs" '
        '("started_at") WHERE "started_at" IS NOT NULL;',
        'CREATE INDEX CONCURRENTLY "jobs_finished_at_idx" ON "queuetop_demo"."jobs" '
        '("finished_at") WHERE "finished_at" IS NOT NULL;',
    ]
    for finding in found:  # what the user does with them (queuetop never runs DDL)
        setup.execute(finding.fix)
    setup.execute("ANALYZE queuetop_demo.jobs")
    with db.connect_monitor(dsn, 5000, idle_timeout=False) as mon:
        snap = Monitor(spec, INTERVAL).poll(mon)
        assert not [f for f in doctor.examine(mon, spec).findings if f.check == "latency_index"]
        # the statement as it runs, with the planner's own choice: through the indexes alone
        parts = queue_parts(spec)
        started, finished, params = side_statements(spec, parts, sides(spec))
        for side in (started, finished):
            plan = mon.execute(queries.get("monitor/explain", statement=side), params).fetchone()
            assert served(plan[0][0]["Plan"]), plan
    assert snap.latency.paced is None and snap.latency.queue.finished == 37


def test_reading_the_latency_takes_only_access_share_locks(dsn, connect):
    setup = connect(autocommit=True)
    create_queue(dsn)
    fill_history(setup, 200)
    with db.connect_monitor(dsn) as mon:
        spec = config.validate(mon, config.load_preset("demo"))
        # every statement of the poll in one transaction: pg_locks then shows all it took
        mon.autocommit = False
        snap = Monitor(spec, INTERVAL).poll(mon)
        held = mon.execute(
            """SELECT l.locktype, l.mode, coalesce(c.relname, '')
               FROM pg_locks l LEFT JOIN pg_class c ON c.oid = l.relation
               WHERE l.pid = pg_backend_pid()"""
        ).fetchall()
        assigned_xid = mon.execute("SELECT pg_current_xact_id_if_assigned()").fetchone()[0]
        mon.rollback()
    assert snap.latency.error is None and snap.latency.queue.finished == 37
    relations = {name for kind, _, name in held if kind == "relation"}
    assert {"jobs", "jobs_started_at_idx", "jobs_finished_at_idx"} <= relations
    assert {mode for _, mode, _ in held} <= {"AccessShareLock", "ExclusiveLock"}
    assert all(kind == "virtualxid" for kind, mode, _ in held if mode == "ExclusiveLock")
    assert assigned_xid is None


MAIL_SPEC = """
[queue]
table = "mail_jobs"
id = "id"
status = "status"
created_at = "created_at"
started_at = "started_at"
group = "kind"
time_zone = "UTC"

[queue.states]
ready = ["new"]
running = ["sending"]
done = ["sent"]
dead = ["bounced"]

[queue.history]
table = "mail_log"
status = "outcome"
started_at = "started_at"
finished_at = "ended_at"
group = "kind"
"""


def test_a_history_table_and_naive_timestamps_in_another_zone(dsn, connect, tmp_path):
    """Finished jobs deleted into a history table that keeps their start and end; every
    time a `timestamp without time zone` in UTC, read by a session in New York: the window
    still finds exactly its rows, through the indexes on the naive columns."""
    setup = connect(autocommit=True)
    setup.execute(
        """CREATE TABLE mail_jobs (id serial PRIMARY KEY, status text NOT NULL, kind text,
                                   created_at timestamp NOT NULL, started_at timestamp);
           CREATE TABLE mail_log (id serial PRIMARY KEY, kind text, outcome text NOT NULL,
                                  started_at timestamp, ended_at timestamp NOT NULL);
           CREATE INDEX ON mail_jobs (started_at);
           CREATE INDEX ON mail_log (ended_at)"""
    )
    utc = "(now() AT TIME ZONE 'UTC')"
    # sending now: started 2 s (welcome) or 7 s (digest) after enqueue, 10 to 40 s ago
    setup.execute(
        f"""INSERT INTO mail_jobs (status, kind, created_at, started_at)
            SELECT 'sending', k, {utc} - make_interval(secs => 10 * g + w),
                   {utc} - make_interval(secs => 10 * g)
            FROM generate_series(1, 4) AS g,
                 (VALUES ('welcome', 2), ('digest', 7)) AS v(k, w)"""
    )
    setup.execute(
        f"INSERT INTO mail_jobs (status, kind, created_at) VALUES ('new', 'welcome', {utc})"
    )
    # logged: one every 20 s back from 5 s ago (15 in the window), runs of 1 s and 3 s,
    # every third one bounced; and one from an hour ago, out of the window
    setup.execute(
        f"""INSERT INTO mail_log (kind, outcome, started_at, ended_at)
            SELECT CASE WHEN g % 2 = 0 THEN 'welcome' ELSE 'digest' END,
                   CASE WHEN g % 3 = 0 THEN 'bounced' ELSE 'sent' END,
                   {utc} - make_interval(secs => 20 * g - 15 + 1 + 2 * (g % 2)),
                   {utc} - make_interval(secs => 20 * g - 15)
            FROM generate_series(1, 15) AS g
            UNION ALL
            SELECT 'digest', 'sent', {utc} - interval '1 hour 1 second',
                   {utc} - interval '1 hour'"""
    )
    setup.execute("ANALYZE mail_jobs; ANALYZE mail_log")
    path = tmp_path / "mail.toml"
    path.write_text(MAIL_SPEC)
    with db.connect_monitor(dsn) as mon:
        mon.execute("SET TimeZone = 'America/New_York'")
        spec = config.validate(mon, config.load_file(str(path)))
        snap = Monitor(spec, INTERVAL).poll(mon)
        report = doctor.examine(mon, spec)
    latency = snap.latency
    assert latency.error is None and latency.paced is None and latency.missing == ()
    assert not [f for f in report.findings if f.check == "latency_index"]
    groups = {g.group: g for g in latency.groups}
    assert (latency.queue.wait.count, latency.queue.wait.p50_s) == (8, pytest.approx(4.5))
    assert groups["welcome"].wait.p95_s == pytest.approx(2.0)
    assert groups["digest"].wait.p95_s == pytest.approx(7.0)
    assert (latency.queue.finished, latency.queue.failed) == (15, 5)
    assert (groups["welcome"].finished, groups["digest"].finished) == (7, 8)
    assert groups["welcome"].run.p99_s == pytest.approx(1.0)
    assert groups["digest"].run.p50_s == pytest.approx(3.0)
    assert latency.queue.run.buckets[LATENCY_BUCKETS.index(1.0)] == 7


LIBRARY_PRESETS = {  # the presets that map a finish time, on their library's own schema
    "public.pgqueuer": "pgqueuer",
    "public.chancy_jobs": "chancy",
    "public.oban_jobs": "oban",
    "pgboss.job": "pg-boss",
    "public.river_job": "river",
    "public.good_jobs": "good-job",
    "public.solid_queue_jobs": "solid-queue",
    "public.que_jobs": "que",
    "public.django_tasks_database_dbtaskresult": "django-tasks",
    "dbos.workflow_status": "dbos",
}


def test_each_library_preset_reads_its_latency_on_the_library_schema(request):
    """The latency statements of each preset that maps a finish time run on the schema its
    library made (its migrations or installer): read, planned, nothing missing but what the
    library does not keep; where the library indexes its finish time, that index serves
    the finished side."""
    read, unserved = {}, {}
    dsn = request.getfixturevalue("twelve")  # test_discover.py's twelve libraries
    with db.connect_monitor(dsn, 5000, idle_timeout=False) as mon:
        for table, preset in LIBRARY_PRESETS.items():
            spec = config.validate(mon, config.build_spec(preset=preset, table=table))
            monitor = Monitor(spec, INTERVAL)
            latency = monitor.poll(mon).latency
            assert latency.error is None, (preset, latency.error)
            assert latency.finished_measured, preset
            read[preset] = (latency.queue.wait is not None, latency.queue.run is not None)
            unserved[preset] = monitor.latency.unserved
    assert read.pop("que") == (False, False)  # Que keeps no start time: its finishes alone
    assert set(read.values()) == {(True, True)}
    # Oban's three partial indexes, good_job's finished_at index, DBOS's completed_at one,
    # pg-boss's and pgqueuer's log's: the finished side is read through them
    for preset in ("oban", "good-job", "dbos", "pg-boss", "pgqueuer"):
        assert "finished" not in unserved[preset], preset


def test_pgqueuer_latency_from_its_log_with_its_real_workers(request):
    """pgqueuer deletes a finished job and logs each step (queued, picked, the end): the
    wait and run of each job are read back from its log, as its real worker loop wrote it,
    and equal the truth computed here from the same log rows."""
    dsn = request.getfixturevalue("pgq_dsn")
    start = request.getfixturevalue("workers")

    async def enqueue(queries) -> None:
        await queries.enqueue(["quick"] * 8 + ["boom"] * 4, [None] * 12, [0] * 12)

    library(dsn, enqueue)
    time.sleep(0.5)  # every job waits a while before the worker starts
    start(dsn, "quick,boom", "worker")
    log = "SELECT job_id, status::text, created, entrypoint FROM pgqueuer_log ORDER BY id"
    with psycopg.connect(dsn, autocommit=True) as conn:
        wait_until(
            lambda: len([r for r in conn.execute(log).fetchall() if r[1] != "queued"]) == 24,
            timeout=60,
        )
        events = conn.execute(log).fetchall()
    by_job: dict[int, dict[str, object]] = {}
    for job_id, status, at, entrypoint in events:
        by_job.setdefault(job_id, {"group": entrypoint})[status] = at
    end = {"quick": "successful", "boom": "exception"}
    waits = {g: [] for g in end}
    runs = {g: [] for g in end}
    for job in by_job.values():
        group = job["group"]
        waits[group].append((job["picked"] - job["queued"]).total_seconds())
        runs[group].append((job[end[group]] - job["picked"]).total_seconds())
    with db.connect_monitor(dsn) as mon:
        spec = config.validate(mon, config.load_preset("pgqueuer"))
        monitor = Monitor(spec, INTERVAL)
        latency = monitor.poll(mon).latency
    assert latency.error is None and latency.missing == () and latency.paced is None
    assert monitor.latency.unserved == []  # the log's indexes serve both sides
    assert (latency.queue.finished, latency.queue.failed) == (12, 4)
    groups = {g.group: g for g in latency.groups}
    for group in end:
        mine = groups[group]
        assert mine.wait.count == len(waits[group]) and mine.run.count == len(runs[group])
        for field, q in PERCENTILES:
            assert getattr(mine.wait, field) == pytest.approx(percentile(waits[group], q))
            assert getattr(mine.run, field) == pytest.approx(percentile(runs[group], q))
    assert min(waits["quick"]) >= 0.5  # they waited for the worker to start


def test_bad_latency_input_is_one_line_and_exit_2(dsn, tmp_path):
    from test_cli_errors import assert_one_line_error, run_cli

    home = str(tmp_path / "home")
    for window, why in (("2d", "at most a day"), ("0", "above zero"), ("soon", "bad")):
        result = run_cli("check", "--latency-window", window, "--max-run-p95", "1m", env_home=home)
        assert_one_line_error(result, "argument --latency-window", why)
    spec_file = tmp_path / "q.toml"
    spec_file.write_text(
        resources.files("dashboard").joinpath("presets", "demo.toml").read_text()
        + 'latency_window = "2 days"\n'
    )
    result = run_cli("snapshot", "--dsn", dsn, "--queue", str(spec_file), env_home=home)
    assert_one_line_error(result, "bad latency_window '2 days'", "at most a day")
    # a finish time that is no timestamp: said before anything is read
    create_queue(dsn)
    result = run_cli("snapshot", "--dsn", dsn, "--finished-at-column", "payload", env_home=home)
    assert_one_line_error(result, "column 'payload' (finished_at)", "is text, not a timestamp")


def test_a_window_of_many_jobs_is_read_every_sixtieth_of_it(dsn):
    """At a 1 s refresh the demo's 12,000 jobs a window cost the server 1.8 % of a core on
    the monitor: a window holding LATENCY_MANY_JOBS or more is read every window/60
    (5 s for 5 minutes); one holding a few jobs on every poll."""
    from demo_queue import setup_demo

    from dashboard.monitor.poll import LATENCY_MANY_JOBS

    spec = setup_demo(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO queuetop_demo.jobs (payload, status, started_at, finished_at) "
            "SELECT 'job ' || g, 'done', now() - interval '61 s' + g * interval '10 ms', "
            "now() - interval '60 s' + g * interval '10 ms' FROM generate_series(1, %s) g",
            (LATENCY_MANY_JOBS,),
        )
    clock = [1000.0]
    monitor = Monitor(spec, 1.0, clock=lambda: clock[0])
    reads = []
    with db.connect_monitor(dsn, db.monitor_timeout_ms(1.0)) as mon:
        for _ in range(7):  # a poll a second, on the monitor's own clock
            snap = monitor.poll(mon)
            reads.append(snap.latency.read_at)
            clock[0] += 1.0
    assert snap.latency.queue.run.count == LATENCY_MANY_JOBS  # what the rows hold
    # read at 0 s, carried through 1-4 s, read again at 5 s
    assert len(set(reads)) == 2 and reads[:5] == [reads[0]] * 5 and reads[5] != reads[0], reads
