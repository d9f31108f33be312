"""What one poll costs against the naive count, on 100k to 5M-row queues of two shapes.

    .venv/bin/python bench/poll_cost.py [--dsn DSN] [--sizes 100000,1000000,5000000]
                                        [--runs 9] [--load-seconds 60] [--interval 1]

For each size, builds queuetop_demo.jobs with ROWS rows in one INSERT … SELECT
generate_series, then VACUUM ANALYZE: 0.1 % active (0.08 % ready, 0.02 % running, 1 % of
the running ones past their lease), 3 % failed, 0.5 % dead, the rest done. Two shapes:
- "primary key only": the table as built;
- "doctor's indexes": the CREATE INDEX statements `queuetop doctor` prints for it (the
  active roles' and the latency's start and finish times), run by this script (queuetop
  itself never runs DDL), then ANALYZE.
Every poll reads the latency too (wait and run times over the last 5 minutes, the last
6,000 jobs here): through the start and finish time indexes where they exist, else a pass
over the table that the monitor paces and says so (the "latency" column).
Per shape, alternately (naive, fresh, warm, naive, warm, fresh, …, so that a noisy
neighbour, or following the naive count, hurts all alike), the median database time of
- the naive `SELECT status, count(*) … GROUP BY status` (a plain session: parallel
  workers allowed, as psql would run it);
- a fresh poll: Monitor.poll on a fresh Monitor, every section read and the count plan
  made (its EXPLAINs), as the first poll of a dashboard, `snapshot` or `check`;
- a warm poll: every section read again by a Monitor that has its plan (the dashboard
  makes it every 5 minutes): the most a dashboard's poll costs.
The polls share one monitoring connection, warmed by a few polls first (a dashboard's
connection has its statements prepared). Database time is the wall time of the call
minus this process's own CPU time in it.

At the largest size it then runs one Monitor at --interval for --load-seconds per shape,
as the dashboard does (the next poll armed when the last one ends), and prints its load:
database time per second of wall time over the whole run (the first poll included) and
as the header shows it (the last minute); the CPU its backend process used (from
/proc/<pid>/stat: what pg_activity's own backend is compared by); the sequential and
index scans of the queue table each poll caused (pg_stat_user_tables deltas, flushed after
every poll); and what this machine adds to a statement run after an interval idle (a
small VM's memory and CPU go cold between polls), measured side by side with the same
statement back to back.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.big_queue import fill_jobs  # noqa: E402
from bench.common import process_cpu_s, server  # noqa: E402
from dashboard import config, db, doctor  # noqa: E402
from dashboard.models import QueueSpec  # noqa: E402
from dashboard.monitor import Monitor  # noqa: E402
from dashboard.monitor.budget import LoadMeter  # noqa: E402
from dashboard.setup import schema  # noqa: E402

TABLE = "queuetop_demo.jobs"
NAIVE_COUNT = "SELECT status, count(*) FROM queuetop_demo.jobs GROUP BY status"
ACTIVE = (
    "SELECT status, count(*) FROM queuetop_demo.jobs "
    "WHERE status IN ('ready', 'running') GROUP BY 1"
)
SCANS = """SELECT seq_scan, coalesce(idx_scan, 0) FROM pg_stat_user_tables
           WHERE schemaname = 'queuetop_demo' AND relname = 'jobs'"""
WARMUP = 6  # psycopg prepares a statement on its 5th run


@dataclass
class Row:
    shape: str
    rows: int
    naive_ms: float
    fresh_ms: float
    warm_ms: float
    mode: str
    estimated: tuple[str, ...]
    exact_active: bool
    latency: str  # how the warm poll read it: through indexes, or paced, and its cost


def build(dsn: str, rows: int) -> QueueSpec:
    """The demo table with `rows` rows and its primary key only, vacuumed and analyzed."""
    started = time.monotonic()
    with psycopg.connect(dsn) as conn:
        schema.init_demo(conn, reset=True)
        conn.execute(
            "DROP INDEX queuetop_demo.jobs_ready_idx, queuetop_demo.jobs_running_idx, "
            "queuetop_demo.jobs_started_at_idx, queuetop_demo.jobs_finished_at_idx"
        )
    with psycopg.connect(dsn, autocommit=True) as conn:
        fill_jobs(conn, rows, ready=8, running=2, stale_percent=1)
        spec = config.validate(conn, config.load_preset("demo"))
    print(f"\nbuilt {TABLE}: {rows:,} rows in {time.monotonic() - started:.0f} s", flush=True)
    return spec


def apply_doctor(dsn: str, spec: QueueSpec) -> None:
    """Run the index statements doctor recommends (what a user would do after reading it)."""
    with db.connect_monitor(dsn, 10_000, idle_timeout=False) as conn:
        report = doctor.examine(conn, spec)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET statement_timeout = 0")
        for finding in report.findings:
            if finding.check in ("index", "lease_index", "latency_index"):
                print(f"  doctor: {finding.fix}", flush=True)
                conn.execute(finding.fix)
        conn.execute("ANALYZE queuetop_demo.jobs")


def db_time(fn) -> tuple[float, object]:
    """Seconds the call spent waiting on the server: wall time minus our own CPU time."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return (time.perf_counter() - wall) - (time.process_time() - cpu), result


def every_section_due(monitor: Monitor) -> Monitor:
    """Every section due now, and a budget with room for them (a full poll)."""
    for section in monitor.sections.values():
        section.tried_at = None
    monitor.meter = LoadMeter()
    return monitor


def compare(dsn: str, spec: QueueSpec, shape: str, rows: int, runs: int, interval: float) -> Row:
    naive, fresh, warm = [], [], []
    with (
        psycopg.connect(dsn, autocommit=True) as plain,
        db.connect_monitor(dsn, db.monitor_timeout_ms(interval)) as mon,
    ):
        plain.execute("SET statement_timeout = 0")
        truth = dict(plain.execute(ACTIVE).fetchall())
        kept = Monitor(spec, interval)
        for _ in range(WARMUP):
            Monitor(spec, interval).poll(mon)
            every_section_due(kept).poll(mon)
        plain.execute(NAIVE_COUNT).fetchall()
        snap = None
        for i in range(runs):
            naive.append(db_time(lambda: plain.execute(NAIVE_COUNT).fetchall())[0])
            for kind in ("fresh", "warm") if i % 2 == 0 else ("warm", "fresh"):
                if kind == "fresh":  # the poll right after the naive count alternates
                    spent, snap = db_time(lambda: Monitor(spec, interval).poll(mon))
                    fresh.append(spent)
                else:
                    spent, warm_snap = db_time(lambda: every_section_due(kept).poll(mon))
                    warm.append(spent)
    exact = all(snap.by_status.get(v, 0) == n for v, n in truth.items())
    ms = [statistics.median(x) * 1000 for x in (naive, fresh, warm)]
    return Row(shape, rows, *ms, snap.count_mode, snap.estimated, exact, latency_text(warm_snap))


def latency_text(snap) -> str:
    """How a poll read the latency: its cost, through indexes or paced, the jobs it found."""
    section = next(s for s in snap.sections if s.name == "latency")
    latency = snap.latency
    how = "paced" if latency.paced else "indexes"
    return (
        f"{how}, {section.cost_ms:.1f} ms, {latency.queue.finished} finished, "
        f"p95 run {latency.queue.run.p95_s:.2f} s"
    )


def flush_stats(conn: psycopg.Connection) -> None:
    """This backend's table statistics, flushed before the statement returns."""
    conn.execute("SELECT pg_stat_force_next_flush()")


def run_load(dsn: str, spec: QueueSpec, shape: str, interval: float, seconds: float) -> None:
    """One Monitor at `interval` for `seconds`: its load, and the scans each poll caused."""
    monitor = Monitor(spec, interval)
    per_poll: list[tuple[int, int]] = []
    spent = 0.0
    with (
        db.connect_monitor(dsn, db.monitor_timeout_ms(interval)) as mon,
        psycopg.connect(dsn, autocommit=True) as watcher,
    ):
        flush_stats(mon)
        before = watcher.execute(SCANS).fetchone()
        backend_cpu = process_cpu_s(mon.info.backend_pid)  # the server's process, not ours
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            took, snap = db_time(lambda: monitor.poll(mon))
            spent += took
            flush_stats(mon)
            after = watcher.execute(SCANS).fetchone()
            per_poll.append((after[0] - before[0], after[1] - before[1]))
            before = after
            time.sleep(interval)  # the dashboard arms the next poll when this one ends
        wall = time.monotonic() - started
        backend_cpu = process_cpu_s(mon.info.backend_pid) - backend_cpu
    seq = [s for s, _ in per_poll]
    print(
        f"  {shape}: {len(per_poll)} polls in {wall:.0f} s at {interval:g} s, "
        f"{snap.count_mode} mode: load {spent / wall:.2%} of wall time over the run "
        f"(header: {snap.monitor_load:.2%} over the last minute); its backend's CPU "
        f"{backend_cpu / wall:.2%} of a core, {1000 * backend_cpu / len(per_poll):.2f} ms per poll"
        " (the statement that flushes the statistics after each poll included)"
    )
    print(
        f"    full scans of the table per poll: max {max(seq)} "
        f"({sum(1 for s in seq if s)} polls read it whole); index scans per poll: "
        f"max {max(i for _, i in per_poll)}"
    )
    print(
        "    sections: "
        + ", ".join(f"{s.name} {s.cost_ms:.1f} ms every {s.every_s:g} s" for s in snap.sections)
    )
    print(f"    latency: {snap.latency.paced or 'read through the indexes on every poll'}")
    idle_penalty(dsn, interval)


def idle_penalty(dsn: str, interval: float) -> None:
    """What this machine adds to a statement run after `interval` idle: a small VM whose
    memory and CPU go cold between polls makes every poll's statements cost more than
    the same statements back to back (the compare table's)."""
    probe = "SELECT 1"
    with psycopg.connect(dsn, autocommit=True) as conn:
        for _ in range(WARMUP):
            conn.execute(probe).fetchone()
        hot = [db_time(lambda: conn.execute(probe).fetchone())[0] for _ in range(9)]
        cold = []
        for _ in range(9):
            time.sleep(interval)
            cold.append(db_time(lambda: conn.execute(probe).fetchone())[0])
    print(
        f"    this machine: a SELECT 1 takes {statistics.median(hot) * 1000:.2f} ms "
        f"back to back, {statistics.median(cold) * 1000:.2f} ms after {interval:g} s idle "
        "(median database time): the polls above pay the second",
        flush=True,
    )


def print_table(rows: list[Row]) -> None:
    print(
        "\n| table shape | rows | naive count | fresh poll | cheaper by | warm poll | "
        "cheaper by | mode | estimated | active exact | latency (warm poll) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- |")
    for r in rows:
        print(
            f"| {r.shape} | {r.rows:,} | {r.naive_ms:.1f} ms | {r.fresh_ms:.2f} ms | "
            f"{r.naive_ms / r.fresh_ms:.1f}x | {r.warm_ms:.2f} ms | "
            f"{r.naive_ms / r.warm_ms:.1f}x | {r.mode} | {', '.join(r.estimated) or '-'} | "
            f"{'yes' if r.exact_active else 'NO'} | {r.latency} |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn")
    parser.add_argument("--sizes", default="100000,1000000,5000000")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--load-seconds", type=float, default=60.0)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results: list[Row] = []
    with server(args.dsn) as dsn:
        for rows in sizes:
            load = rows == sizes[-1] and args.load_seconds > 0
            spec = build(dsn, rows)
            results.append(compare(dsn, spec, "primary key only", rows, args.runs, args.interval))
            print_table(results[-1:])
            if load:
                run_load(dsn, spec, "primary key only", args.interval, args.load_seconds)
            apply_doctor(dsn, spec)
            results.append(compare(dsn, spec, "doctor's indexes", rows, args.runs, args.interval))
            print_table(results[-1:])
            if load:
                run_load(dsn, spec, "doctor's indexes", args.interval, args.load_seconds)
    print_table(results)


if __name__ == "__main__":
    main()
