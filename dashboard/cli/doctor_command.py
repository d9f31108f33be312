"""`queuetop doctor [--json]`: findings about the queue table and its server, each with the
SQL that would fix it; exit 0 healthy, 1 findings, 2 error. Runs no DDL."""

from __future__ import annotations

import argparse
import json

from dashboard import config, db, doctor
from dashboard.cli.check_command import duration_limit
from dashboard.cli.common import connection_options, queue_options, spec_from_args
from dashboard.cli.target_args import apply_target, target_options
from dashboard.text.untrusted import printable

EXIT_FINDINGS = 1
TIMEOUT_MS = 5000


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor",
        parents=[connection_options(), target_options(), queue_options()],
        help="what would make the queue cheap to watch and healthy to run, with "
        "the SQL to fix it (never run): exit 0 healthy, 1 findings, 2 error",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"queue", "healthy", "findings": [{"check", "title", "detail", '
        '"fix"}], "notes", "checks"}',
    )
    p.add_argument(
        "--horizon-age",
        type=duration_limit,
        metavar="DURATION",
        default=doctor.Limits.horizon_age_s,
        help="report transactions and snapshots open longer than this (default 1m)",
    )
    p.set_defaults(handler=run_doctor)


def run_doctor(args: argparse.Namespace) -> int:
    apply_target(args)
    spec = spec_from_args(args)  # a bad spec fails before any connection
    target = db.resolve_target(args.dsn)
    with db.connect_monitor(target.dsn, TIMEOUT_MS, idle_timeout=False) as conn:
        spec = config.validate(conn, spec)
        report = doctor.examine(conn, spec, doctor.Limits(horizon_age_s=args.horizon_age))
    # a finding names sessions, queries and tables: their text escaped (JSON keeps it)
    print(json.dumps(report.as_dict(), indent=2) if args.json else printable(report.text()))
    return 0 if report.healthy else EXIT_FINDINGS
