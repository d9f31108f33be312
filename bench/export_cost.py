"""The exporter's own database time per second of wall time, on a 5M-row demo-shaped queue.

    .venv/bin/python bench/export_cost.py [--dsn DSN] [--rows 5000000] [--interval 2]
                                          [--seconds 30] [--runs 15] [--reuse]
                                          [--shape export|poll_cost]

Builds queuetop_demo.jobs with ROWS rows in one INSERT … SELECT generate_series (1 %
ready, 0.1 % running of which half past their lease, about 3.5 % failed, 0.5 % dead, the rest
done; created over the last days), VACUUM ANALYZE, then runs `queuetop export`'s poll
loop (dashboard.metrics.exporter.Exporter) for SECONDS at INTERVAL and prints, side by side with
a plain `SELECT status, count(*) … GROUP BY status` run at the same interval:
- wall time per poll, and poll time per second of wall time (what
  rate(queuetop_poll_duration_seconds_sum[5m]) reports in production);
- the whole server's CPU time per second (backend, parallel workers, everything the
  postmaster runs; local servers only, read from /proc; 0 elsewhere).
Before that, on the same table, the exporter's poll and the dashboard's warm poll (a
Monitor with its plan and every section due, as bench/poll_cost.py measures it) run
alternately RUNS times each, an interval apart, and it prints both medians (database
time: wall less this process's CPU), their ratio, and the export poll's section costs.
--shape poll_cost builds bench/poll_cost.py's table instead (0.1 % active, 1 % of the
running ones stale), with the demo's partial indexes (doctor's).
Without --dsn a private embedded server is used and removed at the end. --reuse keeps
a queue already built with as many rows (the build takes a while).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.big_queue import fill_jobs  # noqa: E402
from bench.common import process_cpu_s, server  # noqa: E402
from dashboard import config, db  # noqa: E402
from dashboard.metrics.exporter import Exporter  # noqa: E402
from dashboard.monitor import Monitor  # noqa: E402
from dashboard.monitor.budget import LoadMeter  # noqa: E402
from dashboard.setup import schema  # noqa: E402

NAIVE_COUNT = "SELECT status, count(*) FROM queuetop_demo.jobs GROUP BY status"


# per 10,000 rows: ready, running, and the percent of the running ones past their lease
SHAPES = {
    "export": (100, 10, 50),  # this bench's own: 1 % ready, 0.1 % running, half stale
    "poll_cost": (8, 2, 1),  # bench/poll_cost.py's: 0.1 % active, 1 % of running stale
}


def build(dsn: str, rows: int, reuse: bool, shape: str = "export") -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        if reuse:
            try:
                have = conn.execute("SELECT count(*) FROM queuetop_demo.jobs").fetchone()[0]
            except psycopg.errors.UndefinedTable:
                have = -1
            if have == rows:
                print(f"reusing queuetop_demo.jobs ({rows:,} rows; built as which shape?)")
                return
    started = time.monotonic()
    with psycopg.connect(dsn) as conn:
        schema.init_demo(conn, reset=True)
    with psycopg.connect(dsn, autocommit=True) as conn:
        ready, running, stale = SHAPES[shape]
        fill_jobs(conn, rows, ready=ready, running=running, stale_percent=stale)
    print(
        f"built queuetop_demo.jobs: {rows:,} rows in {time.monotonic() - started:.0f} s", flush=True
    )


def _stat_fields(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def server_cpu_s(postmaster: int | None) -> float:
    """CPU seconds of a local server: the postmaster, its live children, and (through the
    postmaster's children times) every child that ended, parallel workers included."""
    if postmaster is None:
        return 0.0
    try:
        fields = _stat_fields(postmaster)
        ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime stime cutime cstime
        with open(f"/proc/{postmaster}/task/{postmaster}/children") as f:
            children = [int(p) for p in f.read().split()]
    except (OSError, ValueError, IndexError):
        return 0.0
    return ticks / os.sysconf("SC_CLK_TCK") + sum(process_cpu_s(p) for p in children)


def postmaster_of(backend: int) -> int | None:
    try:
        return int(_stat_fields(backend)[1])
    except (OSError, ValueError, IndexError):
        return None


def measure_export(dsn: str, interval: float, seconds: float) -> dict:
    with db.connect_monitor(dsn) as conn:
        spec = config.validate(conn, config.load_preset("demo"))
    exporter = Exporter(dsn, spec, interval, log=lambda line: print(f"  export: {line}"))
    if exporter.poll_once() is not None:  # the first poll connects and warms the cache
        raise SystemExit(f"export poll failed: {exporter.last_error}")
    postmaster = postmaster_of(exporter.backend_pid())
    polls0, sum0, cpu0 = exporter.polls, exporter.poll_seconds_sum, server_cpu_s(postmaster)
    stop = threading.Event()
    loop = threading.Thread(target=exporter.run, args=(stop,))
    started = time.monotonic()
    loop.start()
    time.sleep(seconds)
    stop.set()
    loop.join()
    wall = time.monotonic() - started
    polls = exporter.polls - polls0
    cpu = server_cpu_s(postmaster) - cpu0
    snap = exporter.snapshot
    exporter.close()
    return {
        "polls": polls,
        "per_poll_ms": (exporter.poll_seconds_sum - sum0) / polls * 1000,
        "db_per_s": (exporter.poll_seconds_sum - sum0) / wall,
        "cpu_per_s": cpu / wall,
        "errors": sum(exporter.errors.values()),
        "estimated": snap.estimated,
        "counts": snap.counts,
        "stale": len(snap.stale_leases),
    }


def measure_naive(dsn: str, interval: float, runs: int) -> dict:
    times, cpu = [], 0.0
    with psycopg.connect(dsn, autocommit=True) as conn:
        postmaster = postmaster_of(conn.info.backend_pid)
        for _ in range(runs):
            cpu0, started = server_cpu_s(postmaster), time.perf_counter()
            conn.execute(NAIVE_COUNT).fetchall()
            times.append(time.perf_counter() - started)
            cpu += server_cpu_s(postmaster) - cpu0
    per_run = statistics.median(times)
    return {
        "polls": runs,
        "per_poll_ms": per_run * 1000,
        "db_per_s": per_run / interval,
        "cpu_per_s": cpu / runs / interval,
    }


def db_time(fn) -> float:
    """Seconds the call spent waiting on the server: wall time minus this process's CPU time
    in it (as bench/poll_cost.py measures the dashboard's poll)."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - wall) - (time.process_time() - cpu)


def side_by_side(dsn: str, interval: float, runs: int) -> dict:
    """The exporter's poll and the dashboard's warm poll (a Monitor with its plan, every
    section due: bench/poll_cost.py's), alternately on the same table, an interval apart."""
    with db.connect_monitor(dsn) as conn:
        spec = config.validate(conn, config.load_preset("demo"))
    exporter = Exporter(dsn, spec, interval, log=lambda line: print(f"  export: {line}"))
    dashboard = Monitor(spec, interval)
    export_ms, warm_ms, wall_ms = [], [], []
    costs: dict[str, list[float]] = {}
    with db.connect_monitor(dsn, db.monitor_timeout_ms(interval)) as mon:
        for _ in range(6):  # both warmed: plans made, statements prepared
            exporter.poll_once()
            every_section_due(dashboard).poll(mon)
        for i in range(runs):
            for kind in ("export", "warm") if i % 2 == 0 else ("warm", "export"):
                time.sleep(interval)
                if kind == "export":
                    started = time.perf_counter()
                    export_ms.append(db_time(exporter.poll_once) * 1000)
                    wall_ms.append((time.perf_counter() - started) * 1000)
                    for section in exporter.snapshot.sections:  # which statement costs it
                        if section.age_s is not None and section.age_s < interval / 2:
                            costs.setdefault(section.name, []).append(section.cost_ms)
                else:
                    warm_ms.append(db_time(lambda: every_section_due(dashboard).poll(mon)) * 1000)
    exporter.close()
    return {
        "export": statistics.median(export_ms),
        "export_wall": statistics.median(wall_ms),
        "warm": statistics.median(warm_ms),
        "runs": runs,
        "sections": {name: statistics.median(ms) for name, ms in costs.items()},
    }


def every_section_due(monitor: Monitor) -> Monitor:
    for section in monitor.sections.values():
        section.tried_at = None
    monitor.meter = LoadMeter()
    return monitor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn")
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument(
        "--interval",
        type=float,
        default=2.0,
        help="poll interval (the dashboard's default; export's is 15 s)",
    )
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--naive-runs", type=int, default=3)
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument("--runs", type=int, default=15, help="side-by-side polls of each")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="export")
    args = parser.parse_args()
    with server(args.dsn) as dsn:
        build(dsn, args.rows, args.reuse, args.shape)
        pair = side_by_side(dsn, args.interval, args.runs)
        export = measure_export(dsn, args.interval, args.seconds)
        naive = measure_naive(dsn, args.interval, args.naive_runs)
    print(
        f"\n{args.rows:,} rows ({args.shape} shape), one poll every {args.interval:g} s, "
        "export measured over "
        f"{args.seconds:g} s ({export['polls']} polls, {export['errors']} failed)"
    )
    print(
        f"  export saw {export['counts']}, estimated {list(export['estimated'])}, "
        f"{export['stale']} stale leases"
    )
    print(f"  {'':24} {'per poll':>10} {'DB time per s':>15} {'server CPU per s':>18}")
    for name, row in (("queuetop export", export), ("naive GROUP BY count", naive)):
        print(
            f"  {name:24} {row['per_poll_ms']:8.1f}ms {row['db_per_s'] * 1000:11.1f}ms/s "
            f"{row['cpu_per_s'] * 1000:14.1f}ms/s"
        )
    print(
        f"  naive / export: {naive['per_poll_ms'] / export['per_poll_ms']:.1f}x per poll; "
        f"export's share of wall time {export['db_per_s'] * 100:.2f} % at {args.interval:g} s, "
        f"{export['per_poll_ms'] / 1000 / 15 * 100:.2f} % at export's default 15 s"
    )
    print(
        f"\n  side by side on this table, {pair['runs']} polls each, alternately, "
        f"{args.interval:g} s apart (median database time: wall less this process's CPU):"
    )
    print(
        f"  export poll {pair['export']:.2f} ms (wall {pair['export_wall']:.2f} ms), "
        f"dashboard warm poll {pair['warm']:.2f} ms: export / dashboard "
        f"{pair['export'] / pair['warm']:.2f}x (target: within 2x)"
    )
    print(
        "  the export poll's sections when read (median database time): "
        + ", ".join(f"{name} {ms:.2f} ms" for name, ms in sorted(pair["sections"].items()))
    )


if __name__ == "__main__":
    main()
