"""Days open, compressed: `watch` and `export` polling the demo under load for N polls.

    .venv/bin/python bench/soak.py [--mode watch|export] [--polls 10000] [--interval 0.02]
                                   [--workers 2] [--sample 1000] [--warmup 1000] [--dsn DSN]

`watch` runs the dashboard headless (App.run_test, the real widgets and poller) at
--interval; `export` runs the exporter's poll loop and scrapes /metrics over HTTP after
every poll. Both against the demo queue with --workers load-generator workers and its
producer running. Every --sample polls it samples this process's RSS, open file
descriptors and threads, and the server's connections named queuetop (the monitor) or
queuetop-action, and prints them; at the end, their growth per 1,000 polls after the
first --warmup polls, and RSS growth per 10,000 polls (the target: under 5 MB, and no
growth in descriptors, threads or connections).
Without --dsn a private embedded server is used and removed at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import fresh_demo, server  # noqa: E402
from dashboard.loadgen import LoadGenerator, LoadSettings  # noqa: E402

CONNECTIONS = """SELECT count(*) FROM pg_stat_activity
                 WHERE application_name IN ('queuetop', 'queuetop-action')"""


@dataclass
class Sample:
    polls: int
    rss_mb: float
    fds: int
    threads: int
    connections: int


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def sample(polls: int, watcher: psycopg.Connection) -> Sample:
    gc.collect()  # what stays, not what the next collection would free
    return Sample(
        polls,
        rss_mb(),
        len(os.listdir("/proc/self/fd")),
        threading.active_count(),
        watcher.execute(CONNECTIONS).fetchone()[0],
    )


def say(s: Sample) -> None:
    print(
        f"  {s.polls:>6} polls: RSS {s.rss_mb:7.2f} MB, fds {s.fds:3}, threads {s.threads:3}, "
        f"server connections {s.connections}",
        flush=True,
    )


def soak_watch(dsn: str, spec, args, watcher: psycopg.Connection) -> list[Sample]:
    from dashboard.ui.app import QueuetopApp

    samples: list[Sample] = []

    async def run() -> None:
        app = QueuetopApp(spec, dsn, interval=args.interval)
        async with app.run_test(size=(160, 48)) as pilot:
            next_at = 0
            while app.snapshots_applied < args.polls:
                await pilot.pause(0.05)
                if app.snapshots_applied >= next_at:
                    samples.append(sample(app.snapshots_applied, watcher))
                    say(samples[-1])
                    next_at += args.sample
            samples.append(sample(app.snapshots_applied, watcher))
            say(samples[-1])

    asyncio.run(run())
    return samples


def soak_export(dsn: str, spec, args, watcher: psycopg.Connection) -> list[Sample]:
    from dashboard.metrics.exporter import Exporter, serve_metrics

    exporter = Exporter(dsn, spec, args.interval, log=lambda line: print(f"  export: {line}"))
    httpd = serve_metrics(exporter, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{httpd.server_address[1]}/metrics"
    samples: list[Sample] = []
    try:
        for polls in range(args.polls + 1):
            if polls % args.sample == 0:
                samples.append(sample(exporter.polls, watcher))
                say(samples[-1])
            if polls == args.polls:
                break
            exporter.poll_once()
            with urllib.request.urlopen(url, timeout=5) as response:
                response.read()
            time.sleep(args.interval)
    finally:
        httpd.shutdown()
        httpd.server_close()
        exporter.close()
    return samples


def report(samples: list[Sample], warmup: int) -> None:
    after = [s for s in samples if s.polls >= warmup]
    if len(after) < 2:
        print("too few samples after the warm-up: raise --polls")
        return
    first, last = after[0], after[-1]
    per_k = 1000 / max(last.polls - first.polls, 1)
    print(
        f"\nafter {first.polls} polls of warm-up, over {last.polls - first.polls} polls, "
        "growth per 1,000 polls:"
    )
    print(
        f"  RSS {(last.rss_mb - first.rss_mb) * per_k:+.3f} MB "
        f"({(last.rss_mb - first.rss_mb) * per_k * 10:+.2f} MB per 10,000; target under 5), "
        f"fds {(last.fds - first.fds) * per_k:+.2f}, "
        f"threads {(last.threads - first.threads) * per_k:+.2f}, "
        f"server connections {(last.connections - first.connections) * per_k:+.2f}"
    )
    print(
        f"  max after warm-up: fds {max(s.fds for s in after)}, "
        f"threads {max(s.threads for s in after)}, "
        f"connections {max(s.connections for s in after)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("watch", "export"), default="watch")
    parser.add_argument("--polls", type=int, default=10_000)
    parser.add_argument("--interval", type=float, default=0.02)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sample", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--dsn")
    args = parser.parse_args()
    with server(args.dsn) as dsn:
        spec = fresh_demo(dsn, 2000)
        settings = LoadSettings(workers=args.workers, rate=50.0, crash_rate=0.001)
        with LoadGenerator(dsn, spec, settings), psycopg.connect(dsn, autocommit=True) as w:
            started = time.monotonic()
            print(
                f"soak: {args.mode}, {args.polls} polls at {args.interval:g} s, "
                f"{args.workers} workers on the demo queue",
                flush=True,
            )
            soak = soak_watch if args.mode == "watch" else soak_export
            samples = soak(dsn, spec, args, w)
            print(f"  {time.monotonic() - started:.0f} s")
        report(samples, args.warmup)


if __name__ == "__main__":
    main()
