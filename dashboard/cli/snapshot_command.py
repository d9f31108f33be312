"""`queuetop snapshot [--json]`: one poll, printed."""

from __future__ import annotations

import argparse
import sys

from dashboard import config, monitor, report
from dashboard.cli.common import connection_options, open_queue, queue_options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("snapshot", parents=[connection_options(), queue_options()],
                       help="print one snapshot of the queue and the sessions around it")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.set_defaults(handler=run_snapshot)


def run_snapshot(args: argparse.Namespace) -> int:
    _, conn, spec = open_queue(args)
    with conn:
        snap = monitor.collect(conn, spec)
    warning = config.unmatched_values(spec, snap.by_status)
    if warning:
        print(f"queuetop: warning: {warning}", file=sys.stderr)
    print(report.snapshot_json(snap) if args.json else report.snapshot_text(snap))
    return 0
