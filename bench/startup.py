"""How long the short commands take, against Python importing psycopg and nothing else.

Cron checks and scripts pay a command's start-up on every call. Alternated in one
run (each round runs every command once, in turn), this times the wall time of
`queuetop --version`, `queuetop snapshot --json` and `queuetop check` (both on the
demo queue of a private embedded server, or --dsn) and of
`python -c "import psycopg"`, and prints each command's median, p90 and its ratio
to the psycopg baseline (target <= 2). Measured on a shared machine the absolute
numbers are noisy; the ratios are taken side by side.

    .venv/bin/python bench/startup.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import server  # noqa: E402
from dashboard.setup import schema  # noqa: E402

TARGET = 2.0


def commands(dsn: str) -> dict[str, list[str]]:
    queuetop = str(Path(sys.executable).with_name("queuetop"))
    return {
        "python -c 'import psycopg'": [sys.executable, "-c", "import psycopg"],
        "queuetop --version": [queuetop, "--version"],
        "queuetop snapshot --json": [queuetop, "snapshot", "--json", "--dsn", dsn],
        "queuetop check": [queuetop, "check", "--max-stale", "100", "--dsn", dsn],
    }


def wall_s(argv: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    took = time.perf_counter() - start
    if done.returncode not in (0, 1):  # check: 1 is "over a threshold", a valid answer
        raise SystemExit(f"{' '.join(argv[:3])} failed ({done.returncode}): {done.stderr}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", help="a server to use (default: a private embedded one)")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    with server(args.dsn) as dsn:
        schema.ensure_demo(dsn)
        cmds = commands(dsn)
        for argv in cmds.values():  # warm the page cache and the server's catalog cache
            wall_s(argv)
        times: dict[str, list[float]] = {name: [] for name in cmds}
        for _ in range(args.rounds):
            for name, argv in cmds.items():
                times[name].append(wall_s(argv))
    base_name = next(iter(cmds))
    base = statistics.median(times[base_name])
    print(
        f"{args.rounds} rounds, commands alternated, wall time (measured while the machine "
        "may be shared)"
    )
    for name, values in times.items():
        med = statistics.median(values)
        p90 = statistics.quantiles(values, n=10)[-1] if len(values) > 1 else med
        ratio = "" if name == base_name else f"  {med / base:.2f}x psycopg (target <= {TARGET:g})"
        print(f"  {name:28} median {med * 1000:6.0f} ms  p90 {p90 * 1000:6.0f} ms{ratio}")


if __name__ == "__main__":
    main()
