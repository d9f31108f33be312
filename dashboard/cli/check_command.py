"""`queuetop check`: one snapshot against thresholds; exit 0 ok, 1 over, 3 unknown, 2 error.

For cron, Nagios-style checks and CI smoke tests. Never an all-clear over what could not be
read or mapped: rows no role claims, a guessed mapping, a section not read, a threshold the
spec cannot measure are UNKNOWN (exit 3), one line each.
"""

from __future__ import annotations

import argparse
import json

from dashboard import config, monitor
from dashboard.cli.common import (
    checked,
    connection_options,
    latency_options,
    open_queue,
    queue_options,
)
from dashboard.cli.target_args import apply_target, target_options
from dashboard.errors import UserError
from dashboard.metrics import checks
from dashboard.text.untrusted import printable

COUNT = checked(int, lambda n: n >= 0, "a whole number, 0 or more")


def duration_limit(text: str) -> float:
    """'5m', '30s', '1 hour', a number of seconds, or 0 (nothing allowed)."""
    try:
        if float(text) == 0:
            return 0.0
    except ValueError:
        pass
    try:
        return config.parse_duration(text)
    except UserError:
        raise argparse.ArgumentTypeError(
            f"expected a duration such as 30s, 5m or 1h (or 0), got {text!r}"
        ) from None


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        parents=[connection_options(), target_options(), queue_options(), latency_options()],
        help="check one snapshot against thresholds: exit 0 ok, 1 over, 3 unknown, 2 error",
    )
    group = p.add_argument_group("thresholds (at least one; a value above it is over)")
    for check in checks.CHECKS:
        kind = duration_limit if check.seconds else COUNT
        example = "DURATION" if check.seconds else "N"
        group.add_argument(
            check.flag,
            dest=check.name,
            type=kind,
            metavar=example,
            help=f"most {check.label} allowed",
        )
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"status": "ok"|"over"|"unknown", "queue", "taken_at", "checks": '
        '[{"check", "value", "max", "over"}], "unknowns", "warnings"}',
    )
    p.set_defaults(handler=run_check)


def run_check(args: argparse.Namespace) -> int:
    apply_target(args)
    limits = {
        c.name: getattr(args, c.name) for c in checks.CHECKS if getattr(args, c.name) is not None
    }
    if not limits:
        raise UserError(
            "no threshold given: pass at least one of " + ", ".join(c.flag for c in checks.CHECKS)
        )
    _, conn, spec = open_queue(args)
    with conn:
        snap = monitor.collect(conn, spec)
    results = checks.evaluate(snap, spec, limits)
    unknowns = (
        checks.unmeasurable(spec, limits) + checks.unread(snap, spec, limits) + list(snap.unknowns)
    )
    status, code = checks.verdict(results, unknowns)
    if args.json:
        print(
            json.dumps(
                {
                    "status": status,
                    "queue": snap.queue,
                    "taken_at": snap.taken_at.isoformat(),
                    "checks": [r.as_dict() for r in results],
                    "unknowns": unknowns,
                    "warnings": list(snap.warnings),
                },
                indent=2,
            )
        )
    else:
        for result in sorted(results, key=lambda r: not r.over):  # what is over first
            print(printable(result.text()))  # a queue or group name may hold anything
        for line in unknowns:  # whole, one line each: what to do is at its end
            print(printable(f"UNKNOWN  {line}"))
    return code
