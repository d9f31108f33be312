"""`queuetop snapshot [--json]`: one poll, printed."""

from __future__ import annotations

import argparse
from dataclasses import replace

from dashboard import config, monitor
from dashboard.cli.common import connection_options, open_queue, queue_options
from dashboard.render import report


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "snapshot",
        parents=[connection_options(), queue_options()],
        help="print one snapshot of the queue and the sessions around it",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.add_argument(
        "--exact",
        action="store_true",
        help="count every state exactly, however large the table (finished states "
        "above exact_count_limit are otherwise estimates, marked ~)",
    )
    p.set_defaults(handler=run_snapshot)


def run_snapshot(args: argparse.Namespace) -> int:
    _, conn, spec = open_queue(args)
    with conn:
        snap = monitor.collect(conn, spec, exact=args.exact)
    # part of the snapshot, so that the text and the JSON report the same warnings
    warning = config.unmatched_values(spec, snap.by_status)
    if warning:
        snap = replace(snap, warnings=(*snap.warnings, warning))
    print(report.snapshot_json(snap) if args.json else report.snapshot_text(snap))
    return 0
