"""Skip-locked versus for-update with hold-transaction mode, for 1, 2, 4 and 8 workers.

    python bench/contention.py [--dsn DSN] [--work-ms 50] [--seconds 3]

Every worker works W ms inside its claim transaction. With SKIP LOCKED the
others take the next row, so throughput grows with the workers (about N/W);
with plain FOR UPDATE they all queue on the first ready row, so the queue
moves one job per W whatever the worker count.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import fresh_demo, loadgen_throughput, server  # noqa: E402
from dashboard.loadgen import LoadSettings  # noqa: E402

STRATEGIES = ("skip-locked", "for-update")


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
            for strategy in STRATEGIES:
                spec = fresh_demo(dsn, int(n * one_per_w * (args.seconds + 10)) + 100)
                settings = LoadSettings(
                    workers=n, strategy=strategy, hold_tx=True, work_ms=args.work_ms
                )
                cells.append(loadgen_throughput(dsn, spec, settings, args.seconds)[:2])
            rows.append((n, cells))
    print(
        f"hold-transaction mode, work W = {args.work_ms:g} ms (1/W = {one_per_w:.0f} jobs/s), "
        f"{args.seconds:g}s per cell; jobs/s (claims that waited on a row lock)"
    )
    print(f"{'workers':>7}  {'N/W':>6}  {'skip-locked':>18}  {'for-update':>18}")
    for n, ((sl, sl_waits), (fu, fu_waits)) in rows:
        print(
            f"{n:>7}  {n * one_per_w:>6.0f}  {sl:>9.1f} ({sl_waits:>5})  {fu:>9.1f} ({fu_waits:>5})"
        )


if __name__ == "__main__":
    main()
