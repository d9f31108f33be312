"""`queuetop snapshot [--json]`: one poll, printed."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

from dashboard import config, db, monitor
from dashboard.cli import discover_command
from dashboard.cli.common import (
    connection_options,
    latency_options,
    open_queue,
    queue_options,
)
from dashboard.cli.target_args import apply_target, target_options
from dashboard.discover.overview import Overview
from dashboard.render import report
from dashboard.text.untrusted import escape_controls, printable


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "snapshot",
        parents=[connection_options(), target_options(), queue_options(), latency_options()],
        help="print one snapshot of the queue and the sessions around it",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.add_argument(
        "--all-groups",
        action="store_true",
        help="list every group (the text lists the 50 busiest; --json always has all)",
    )
    p.add_argument(
        "--exact",
        action="store_true",
        help="count every state exactly, however large the table (finished states "
        "above exact_count_limit are otherwise estimates, marked ~)",
    )
    p.set_defaults(handler=run_snapshot)


def run_snapshot(args: argparse.Namespace) -> int:
    apply_target(args)  # before anything connects
    found = discover_command.discovered(args)  # a DSN but no queue: what the catalog holds
    if found and len(found) > 1:
        return print_overview(args, found)
    if found:
        conn = db.connect_monitor(
            db.resolve_target(args.dsn).dsn, timeout_ms=db.monitor_timeout_ms(args.interval)
        )
        try:
            spec = config.validate(conn, discover_command.spec_of(args)(found[0]))
        except Exception:
            conn.close()
            raise
    else:
        _, conn, spec = open_queue(args)
    with conn:
        snap = monitor.collect(conn, spec, exact=args.exact)
    # part of the snapshot, so that the text and the JSON report the same warnings
    warning = config.unmatched_values(spec, snap.by_status)
    if warning:
        snap = replace(snap, warnings=(*snap.warnings, warning))
    if args.json:
        data = report.snapshot_dict(snap)
        data["understood"] = report.understood_dict(spec.understood)
        print(json.dumps(data, indent=2))
    else:
        print(printable(report.snapshot_text(snap, all_groups=args.all_groups)))
        if spec.understood is not None:
            print()
            print(printable("\n".join(report.understood_text(spec.understood))))
    return 0


def print_overview(args: argparse.Namespace, found: list) -> int:
    """Several queues and none named: one line each (`watch` shows the same, live)."""
    dsn = db.resolve_target(args.dsn).dsn
    with db.connect_monitor(dsn, timeout_ms=db.monitor_timeout_ms(args.interval)) as conn:
        overview = Overview.open(conn, found, args.interval, discover_command.spec_of(args))
        rows = overview.poll(conn)
    hint = discover_command.dsn_hint(args)
    if args.json:
        print(json.dumps({"queues": [row.as_json(hint) for row in rows]}, indent=2))
        return 0
    print(f"{len(rows)} queues found; pass --preset or --table (or run one command below)")
    for row in rows:
        numbers = (
            f"ready {row.ready}, running {row.running}, oldest ready "
            f"{report.age(row.oldest_ready_age_s)}, stale {row.stale_leases}, "
            f"waiting {row.waiting}"
            if row.error is None
            else row.error
        )
        print(escape_controls(f"  {row.found.table}: {numbers}"))
        print(f"      {escape_controls(row.found.command(hint))}")
    return 0
