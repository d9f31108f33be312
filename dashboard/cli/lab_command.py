"""`queuetop lab`: the contention lab, headless: one row per cell, or JSON."""

from __future__ import annotations

import argparse
import json
import sys

from dashboard import db
from dashboard.cli.common import checked, connection_options, warn_password_in_dsn
from dashboard.loadgen.settings import MAX_WORKERS
from dashboard.loadgen.stats import LOCK_WAIT_MS

WORKER_COUNT = checked(int, lambda n: 2 <= n <= MAX_WORKERS, f"a whole number, 2 to {MAX_WORKERS}")
SECONDS = checked(float, lambda v: 0.5 <= v <= 600, "a number of seconds, 0.5 to 600")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "lab",
        parents=[connection_options()],
        help="run each claim strategy short and held, a deadlock and a lock_timeout "
        "scenario, on a scratch queue; print what each did",
    )
    p.add_argument("--workers", type=WORKER_COUNT, default=4, metavar="N", help="worker processes")
    p.add_argument(
        "--seconds", type=SECONDS, default=3.0, metavar="S", help="measured seconds per cell"
    )
    p.add_argument("--json", action="store_true", help='print {"cells": [...]}')
    p.set_defaults(handler=run_lab_command)


def format_table(rows: list[tuple[str, ...]], columns: tuple[str, ...]) -> str:
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(columns)]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return "\n".join([line(columns), *(line(r) for r in rows)])


def run_lab_command(args: argparse.Namespace) -> int:
    from dashboard.loadgen import lab  # the load generator loads only for this command

    target = db.resolve_target(args.dsn)
    with db.connect_monitor(target.dsn):  # a bad DSN fails here, in one line
        pass
    warn_password_in_dsn(args)
    tty = sys.stderr.isatty()

    done = iter(range(1, len(lab.CELLS) + 1))

    def progress(result: lab.CellResult) -> None:
        if tty or not args.json:
            print(
                f"  cell {next(done)}/{len(lab.CELLS)} {result.cell.label}: "
                f"{result.jobs_per_s:.1f} jobs/s",
                file=sys.stderr,
                flush=True,
            )

    if not args.json:
        print(
            f"queuetop lab: {len(lab.CELLS)} cells, {args.seconds:g}s each, work "
            f"{lab.WORK_MS:g} ms per job, on a scratch queue ({lab.LAB_TABLE})",
            file=sys.stderr,
        )
    results = lab.run_lab(target.dsn, args.workers, args.seconds, on_cell=progress)
    if args.json:
        print(json.dumps({"cells": [r.as_json() for r in results]}))
    else:
        print()
        print(format_table([lab.row_of(r) for r in results], lab.COLUMNS))
        print(
            "claim p50/p95: a claim's round trip (with the claim transaction short it also "
            "carries the previous job's completion); lock waits: claims slower than "
            f"{LOCK_WAIT_MS:g} ms; lost and double: from the table and its trigger log"
        )
    bad = [r for r in results if r.lost or r.double_claims]
    return 1 if bad else 0
