"""`queuetop demo`'s parser: the demo queue, its load generator's knobs, the dashboard.

Apart from watch_commands.py so that `queuetop watch` does not load the load generator
(its settings give this parser's limits and choices); the demo runs from there.
"""

from __future__ import annotations

import argparse

from dashboard.cli import record_command, rewind_option
from dashboard.cli.common import (
    INTERVAL,
    MAX_INTERVAL_S,
    MIN_INTERVAL_S,
    checked,
    connection_options,
    recovery_options,
)
from dashboard.cli.watch_commands import run_demo
from dashboard.loadgen.demo import DEMO_WORKERS
from dashboard.loadgen.settings import MAX_WORKERS
from dashboard.loadgen.strategies import STRATEGIES


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo",
        parents=[connection_options(), recovery_options()],
        help="create the demo queue if absent, start workers on it and open the dashboard",
    )
    p.add_argument(
        "--interval",
        type=INTERVAL,
        default=1.0,
        metavar="SECONDS",
        help=f"refresh interval, {MIN_INTERVAL_S:g} to {MAX_INTERVAL_S:g}",
    )
    load = p.add_argument_group("load generator (keys w W s t ! z P in the dashboard)")
    load.add_argument(
        "--workers",
        type=checked(int, lambda n: 0 <= n <= MAX_WORKERS, f"a whole number, 0 to {MAX_WORKERS}"),
        default=None,
        metavar="N",
        help=f"worker processes to start (default {DEMO_WORKERS}; 0: the "
        "producer alone, w adds workers)",
    )
    load.add_argument(
        "--strategy",
        choices=list(STRATEGIES),
        default=None,
        help="claim strategy (default skip-locked)",
    )
    load.add_argument(
        "--chaos",
        action="store_true",
        help="random worker crashes after claims, each leaving a stale lease (off by "
        "default: the one ! makes is then the only one)",
    )
    load.add_argument(
        "--no-load",
        action="store_true",
        help="open the dashboard on a quiet queue: no producer, no workers",
    )
    record_command.add_record_flag(p)  # demo --record FILE: the generator's state kept too
    rewind_option.add_rewind_flag(p)
    p.set_defaults(handler=run_demo)
