"""python -m tests.emulated_workers LIB --dsn DSN --name NAME: one emulated worker process."""

from __future__ import annotations

import argparse
import sys

from tests.emulated_workers import WORKERS


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("lib", choices=sorted(WORKERS))
    p.add_argument("--dsn", required=True)
    p.add_argument("--name", required=True, help="worker name (River: its client id)")
    p.add_argument("--poll", type=float, default=0.1, help="seconds between empty polls")
    p.add_argument("--heartbeat", type=float, default=0.2, help="process heartbeat, seconds")
    p.add_argument(
        "--mode",
        choices=("advisory", "skiplocked"),
        default="advisory",
        help="good_job's lock strategy",
    )
    p.add_argument(
        "--clock-behind",
        type=float,
        default=0.0,
        help="River: the worker's clock runs this many seconds behind",
    )
    opts = p.parse_args(argv)
    WORKERS[opts.lib](opts.dsn, opts.name, opts).run()


if __name__ == "__main__":
    main(sys.argv[1:])
