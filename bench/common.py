"""Shared by the bench scripts: a server, a fresh demo queue, and a timed window of a run."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from dashboard import config, db
from dashboard.loadgen import LoadGenerator, LoadSettings
from dashboard.loadgen.producer import enqueue
from dashboard.loadgen.strategies import build
from dashboard.models import QueueSpec
from dashboard.setup import schema


@contextmanager
def server(dsn: str | None) -> Iterator[str]:
    """The given DSN, else a private embedded server stopped at the end."""
    if dsn:
        yield dsn
        return
    home = Path(tempfile.mkdtemp(prefix="queuetop-bench-"))
    try:
        yield db.start_embedded(home / "pgdata")
    finally:
        db.stop_embedded(home / "pgdata")
        shutil.rmtree(home, ignore_errors=True)


def fresh_demo(dsn: str, jobs: int) -> QueueSpec:
    """Drop and recreate the demo queue with `jobs` ready jobs, vacuumed and analyzed."""
    with psycopg.connect(dsn) as conn:
        schema.init_demo(conn, reset=True)
    with psycopg.connect(dsn, autocommit=True) as conn:
        spec = config.validate(conn, config.load_preset("demo"))
        enqueue(conn, build(spec), jobs, 64)
        conn.execute("VACUUM ANALYZE queuetop_demo.jobs")
    return spec


def process_cpu_s(pid: int | None) -> float:
    """User + system CPU seconds of a live process (Linux /proc); 0 where unknown."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def process_run_s(pid: int | None) -> float:
    """Seconds on a CPU of a live process's threads, to the nanosecond (the first field of
    each thread's /proc schedstat); 0 where unknown. /proc/PID/stat's user + system time
    is counted in clock ticks (10 ms), sampled: a monitor using 0.3 % of a core gets a
    tick every 3 s, and a 30 s window is then +-1 tick, +-10 %. A thread that ended
    meanwhile is not counted: measure processes whose threads live as long as the window."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):  # a thread that just ended
                continue
    except OSError:
        return 0.0
    return total / 1e9


def loadgen_throughput(
    dsn: str, spec: QueueSpec, settings: LoadSettings, seconds: float
) -> tuple[float, int, float]:
    """Completed jobs/s over `seconds` once every worker is connected; lock waits; the
    workers' CPU microseconds per completed job."""
    with LoadGenerator(dsn, spec, settings) as gen:
        while gen.stats().live_workers < settings.workers:
            if gen.stats().errors:
                raise SystemExit(gen.stats().errors[0])
            time.sleep(0.05)
        time.sleep(0.3)  # past the first prepared statements
        pids = [w.pid for w in gen.stats().workers]
        first, t0 = gen.stats(), time.monotonic()
        cpu0 = sum(process_cpu_s(pid) for pid in pids)
        time.sleep(seconds)
        last, t1 = gen.stats(), time.monotonic()
        cpu1 = sum(process_cpu_s(pid) for pid in pids)
    done = last.totals["completed"] - first.totals["completed"]
    waits = last.totals["lock_waits"] - first.totals["lock_waits"]
    if gen.stats().double_claims:
        raise SystemExit(f"double claims: {gen.stats().errors}")
    return done / (t1 - t0), waits, (cpu1 - cpu0) / max(done, 1) * 1e6
