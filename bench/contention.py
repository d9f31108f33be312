"""Skip-locked versus for-update, the claim transaction short and held, for 1, 2, 4 and 8
workers.

    python bench/contention.py [--dsn DSN] [--work-ms 50] [--seconds 3] [--workers 1,2,4,8]

Every worker works W ms per job. With the claim committed at once (short), both
strategies grow with the workers (about N/W): a for-update claim waits on the
first ready row only while another claim holds it, for a millisecond. With the
work inside the claim transaction (held), SKIP LOCKED still lets the others take
the next row, while plain FOR UPDATE makes them all queue on the first ready
row, so the queue moves one job per W whatever the worker count. The slowdown
is the held transaction's, not FOR UPDATE's.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import fresh_demo, loadgen_throughput, server  # noqa: E402
from dashboard.loadgen import LoadSettings  # noqa: E402

CELLS = (("skip-locked", False), ("for-update", False), ("skip-locked", True), ("for-update", True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn")
    parser.add_argument("--work-ms", type=float, default=50.0)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--workers", default="1,2,4,8")
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    one_per_w = 1000.0 / args.work_ms
    rows = []
    with server(args.dsn) as dsn:
        for n in counts:
            cells = []
            for strategy, held in CELLS:
                spec = fresh_demo(dsn, int(n * one_per_w * (args.seconds + 10)) + 100)
                settings = LoadSettings(
                    workers=n, strategy=strategy, hold_tx=held, work_ms=args.work_ms
                )
                cells.append(loadgen_throughput(dsn, spec, settings, args.seconds)[:2])
            rows.append((n, cells))
    print(
        f"work W = {args.work_ms:g} ms (1/W = {one_per_w:.0f} jobs/s), {args.seconds:g}s per "
        "cell; jobs/s (claims that waited on a row lock)"
    )
    head = "".join(f"{s + (' held' if h else ' short'):>19}" for s, h in CELLS)
    print(f"{'workers':>7}  {'N/W':>6}{head}")
    for n, cells in rows:
        line = "".join(f"{jobs:>11.1f} ({waits:>5})" for jobs, waits in cells)
        print(f"{n:>7}  {n * one_per_w:>6.0f}{line}")
    for n, cells in rows:
        (sl, _), (fu, _), (slh, _), (fuh, _) = cells
        print(
            f"{n} workers: short for-update/skip-locked {fu / max(sl, 1e-9):.2f}, "
            f"held skip-locked/for-update {slh / max(fuh, 1e-9):.2f}"
        )


if __name__ == "__main__":
    main()
