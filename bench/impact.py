"""What a dashboard left open costs the workers: load-generator throughput with and without
a Monitor polling every second, on the same queue, in alternating windows.

    .venv/bin/python bench/impact.py [--dsn DSN] [--rounds 40] [--window 2] [--workers 4]
                                     [--backlog 1000000] [--ready 30000] [--interval 1]

The queue: the demo table (its own partial indexes on ready and running) with BACKLOG
finished jobs (what procrastinate or Oban keep until pruned). One load generator runs at
full speed throughout (no simulated work, skip-locked, WORKERS processes); the dashboard,
a Monitor on its own connection in a thread polling every INTERVAL (the next poll armed
when the last one ends, every section paced by its budget as on screen), is switched on
and off for windows of WINDOW seconds in the order off-on-on-off, on-off-off-on, … (so
that a drift of the machine's load hurts both alike). Before each pair, outside its
windows, the ready jobs are topped up to READY and the table vacuumed, so that every pair
starts from the same queue (the alternating order cancels what a pair's first window
leaves to its second). Prints jobs/s per window, the throughput ratio with/without (target
>= 0.98), and what the dashboard itself spent: its database time per second of wall time,
the CPU of its server backend and of its own thread (Linux /proc, local servers only).
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
from bench.common import server  # noqa: E402
from dashboard import config, db  # noqa: E402
from dashboard.loadgen import LoadGenerator, LoadSettings  # noqa: E402
from dashboard.models import QueueSpec, Snapshot  # noqa: E402
from dashboard.monitor import Monitor  # noqa: E402
from dashboard.setup import schema  # noqa: E402

BACKLOG_SQL = """
INSERT INTO queuetop_demo.jobs (status, created_at, started_at, finished_at, attempts, payload)
SELECT 'done', now() - make_interval(secs => (%(rows)s - g) * 0.01), now(), now(), 1, 'job ' || g
FROM generate_series(1, %(rows)s) AS g
"""
TOP_UP_SQL = """
INSERT INTO queuetop_demo.jobs (payload)
SELECT 'job ' || g FROM generate_series(1, %(ready)s - (
    SELECT count(*) FROM queuetop_demo.jobs WHERE status = 'ready')) AS g
"""
READY_LEFT = "SELECT count(*) FROM queuetop_demo.jobs WHERE status = 'ready'"
SETTLE_S = 0.3


def build(dsn: str, backlog: int) -> QueueSpec:
    started = time.monotonic()
    with psycopg.connect(dsn) as conn:
        schema.init_demo(conn, reset=True)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET statement_timeout = 0")
        conn.execute(BACKLOG_SQL, {"rows": backlog})
        conn.execute("VACUUM ANALYZE queuetop_demo.jobs")
        spec = config.validate(conn, config.load_preset("demo"))
    print(
        f"built queuetop_demo.jobs: {backlog:,} done jobs in {time.monotonic() - started:.0f} s",
        flush=True,
    )
    return spec


def backend_cpu_s(pid: int) -> float:
    """CPU time of a local server process (Linux schedstat, in ns); 0 where unknown."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


class Dashboard(threading.Thread):
    """The dashboard's polling, without the screen, while `active` is set."""

    def __init__(self, dsn: str, spec: QueueSpec, interval: float):
        super().__init__(name="bench-dashboard", daemon=True)
        self.monitor = Monitor(spec, interval)
        self.conn = db.connect_monitor(dsn, db.monitor_timeout_ms(interval))
        self.interval = interval
        self.active, self.stop = threading.Event(), threading.Event()
        self.polls, self.spent_s, self.client_cpu_s = 0, 0.0, 0.0
        self.last: Snapshot | None = None
        self.errors: list[str] = []

    def run(self) -> None:
        with self.conn:
            while not self.stop.is_set():
                if not self.active.wait(0.05):
                    continue
                cpu = time.thread_time()
                try:
                    snap = self.monitor.poll(self.conn)
                except Exception as exc:  # reported by the bench, which then stops
                    self.errors.append(str(exc).splitlines()[0])
                    return
                self.client_cpu_s += time.thread_time() - cpu
                self.polls += 1
                self.spent_s += snap.elapsed_ms / 1000
                self.last = snap
                self.stop.wait(self.interval)


def prepare(dsn: str, ready: int) -> None:
    """Ready jobs topped up and the last window's dead rows vacuumed away (a claim walks past
    dead index entries: an unvacuumed queue slows window after window, watched or not)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(TOP_UP_SQL, {"ready": ready})
        conn.execute("VACUUM queuetop_demo.jobs")


def completed(gen: LoadGenerator) -> int:
    stats = gen.stats()
    if stats.errors or stats.double_claims:
        raise SystemExit(f"load generator: {stats.errors[:1]}, {stats.double_claims} double claims")
    return stats.totals["completed"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn")
    parser.add_argument("--rounds", type=int, default=40, help="pairs of windows")
    parser.add_argument("--window", type=float, default=2.0, help="seconds per window")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--backlog", type=int, default=1_000_000)
    parser.add_argument(
        "--ready",
        type=int,
        default=30_000,
        help="ready jobs at the start of each window (they must not run out)",
    )
    parser.add_argument("--interval", type=float, default=1.0)
    args = parser.parse_args()
    order = [
        on for k in range(args.rounds) for on in ((False, True) if k % 2 == 0 else (True, False))
    ]
    rates: dict[bool, list[float]] = {False: [], True: []}
    with server(args.dsn) as dsn:
        spec = build(dsn, args.backlog)
        dashboard = Dashboard(dsn, spec, args.interval)
        backend = dashboard.conn.info.backend_pid
        dashboard.start()
        settings = LoadSettings(workers=args.workers, work_ms=0.0, strategy="skip-locked")
        on_s = server_cpu = client_cpu = spent = 0.0
        with LoadGenerator(dsn, spec, settings) as gen:
            prepare(dsn, args.ready)
            while gen.stats().live_workers < args.workers:
                completed(gen)
                time.sleep(0.05)
            dashboard.active.set()  # its first poll makes the plan, as a dashboard opening
            while dashboard.polls == 0 and not dashboard.errors:
                time.sleep(0.05)
            dashboard.active.clear()
            for n, on in enumerate(order):
                if n % 2 == 0:  # before each pair: both of its windows start alike
                    prepare(dsn, args.ready)
                if on:
                    dashboard.active.set()
                time.sleep(SETTLE_S)
                spent0, cpu0, server0 = (
                    dashboard.spent_s,
                    dashboard.client_cpu_s,
                    backend_cpu_s(backend),
                )
                done0, t0 = completed(gen), time.monotonic()
                time.sleep(args.window)
                done1, t1 = completed(gen), time.monotonic()
                rates[on].append((done1 - done0) / (t1 - t0))
                if on:
                    on_s += t1 - t0
                    server_cpu += backend_cpu_s(backend) - server0
                    client_cpu += dashboard.client_cpu_s - cpu0
                    spent += dashboard.spent_s - spent0
                    dashboard.active.clear()
                with psycopg.connect(dsn) as conn:
                    if conn.execute(READY_LEFT).fetchone()[0] == 0:
                        raise SystemExit("the ready jobs ran out within a window: raise --ready")
                print(
                    f"  {'with' if on else 'without':7} a dashboard: {rates[on][-1]:.0f} jobs/s",
                    flush=True,
                )
        dashboard.stop.set()
        dashboard.join()
    if dashboard.errors:
        raise SystemExit(f"monitor failed: {dashboard.errors[0]}")
    without, with_ = rates[False], rates[True]
    a, b = statistics.median(without), statistics.median(with_)
    ratios = sorted(w / o for w, o in zip(with_, without, strict=True))
    paired = statistics.median(ratios)
    quartiles = statistics.quantiles(ratios, n=4)
    total = sum(with_) / sum(without)
    last = dashboard.last
    print(
        f"\n{args.workers} workers at full speed, {args.rounds} pairs of {args.window:g} s "
        f"windows (off-on-on-off …), {args.backlog:,} finished jobs in the table, ready "
        f"jobs topped up to {args.ready:,} before each pair, {os.cpu_count()} CPUs"
    )
    print("| window | jobs/s (median) | windows |\n| --- | ---: | --- |")
    print(f"| without a dashboard | {a:.0f} | {', '.join(f'{x:.0f}' for x in without)} |")
    print(
        f"| with a dashboard polling every {args.interval:g} s | {b:.0f} | "
        f"{', '.join(f'{x:.0f}' for x in with_)} |"
    )
    print(
        f"throughput with/without: {total:.3f} (all jobs), {b / a:.3f} (medians), "
        f"{paired:.3f} (median of the pairs, whose middle half spans {quartiles[0]:.3f} to "
        f"{quartiles[2]:.3f}); target >= 0.98"
    )
    print(
        f"the dashboard while on: {dashboard.polls} polls, database time "
        f"{spent / on_s:.2%} of wall time; CPU of its server backend {server_cpu / on_s:.2%} "
        f"and of its own thread {client_cpu / on_s:.2%} of one core; {last.count_mode} "
        f"mode, estimated {list(last.estimated) or 'nothing'}"
    )
    print(
        "  sections: "
        + ", ".join(f"{s.name} {s.cost_ms:.1f} ms every {s.every_s:g} s" for s in last.sections)
    )


if __name__ == "__main__":
    main()
