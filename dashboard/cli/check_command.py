"""`queuetop check`: one snapshot against thresholds; exit 0 ok, 1 over, 2 error.

For cron, Nagios-style checks and CI smoke tests.
"""

from __future__ import annotations

import argparse
import json

from dashboard import config, monitor
from dashboard.cli.common import checked, connection_options, open_queue, queue_options
from dashboard.errors import UserError
from dashboard.metrics import checks
from dashboard.text.untrusted import printable

EXIT_OVER = 1
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
        parents=[connection_options(), queue_options()],
        help="check one snapshot against thresholds: exit 0 ok, 1 over, 2 error",
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
        help='print {"status", "queue", "taken_at", "checks": [{"check", "value", '
        '"max", "over"}], "warnings"}',
    )
    p.set_defaults(handler=run_check)


def run_check(args: argparse.Namespace) -> int:
    limits = {
        c.name: getattr(args, c.name) for c in checks.CHECKS if getattr(args, c.name) is not None
    }
    if not limits:
        raise UserError(
            "no threshold given: pass at least one of " + ", ".join(c.flag for c in checks.CHECKS)
        )
    _, conn, spec = open_queue(args)
    with conn:
        checks.refuse_unknown(spec, limits)  # before polling: nothing to wait for
        snap = monitor.collect(conn, spec)
    results = checks.evaluate(snap, spec, limits)
    over = [r for r in results if r.over]
    if args.json:
        print(
            json.dumps(
                {
                    "status": "over" if over else "ok",
                    "queue": snap.queue,
                    "taken_at": snap.taken_at.isoformat(),
                    "checks": [r.as_dict() for r in results],
                    "warnings": list(snap.warnings),
                },
                indent=2,
            )
        )
    else:
        for result in sorted(results, key=lambda r: not r.over):  # what is over first
            print(printable(result.text()))  # a queue or group name may hold anything
    return EXIT_OVER if over else 0
