"""`queuetop audit`: the latest actions, from queuetop.audit_log or an --audit-file.

Reads only: the table through the monitoring connection (autocommit, read-only,
statement timeout), the file from its end.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime, timedelta, timezone

from dashboard import config, db
from dashboard.audit.trail import DEFAULT_LIMIT, AuditPage, read_latest
from dashboard.cli.common import checked, connection_options, text
from dashboard.errors import UserError
from dashboard.render.report import one_line
from dashboard.text.untrusted import escape_controls, printable

LIMIT = checked(int, lambda n: 1 <= n <= 100_000, "a whole number from 1 to 100000")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "audit",
        parents=[connection_options()],
        help="list the latest recovery actions from the audit trail (reads only)",
    )
    p.add_argument(
        "--since",
        metavar="D",
        type=text("a duration or a timestamp"),
        help="only actions since then: a duration back from now ('2h', "
        "'30 minutes') or a timestamp with its time zone",
    )
    p.add_argument(
        "--limit",
        type=LIMIT,
        default=DEFAULT_LIMIT,
        metavar="N",
        help=f"at most N records, newest first (default {DEFAULT_LIMIT})",
    )
    p.add_argument(
        "--audit-file",
        metavar="PATH",
        type=text("a file path"),
        help="read this JSON-lines audit file instead of the queuetop.audit_log "
        "table (no database is needed)",
    )
    p.add_argument(
        "--json", action="store_true", help='print {"source", "records": [...], "unreadable_lines"}'
    )
    p.set_defaults(handler=run_audit)


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """'2h' or '30 minutes' back from now, or an ISO timestamp with its time zone."""
    now = now or datetime.now(timezone.utc)
    try:
        return now - timedelta(seconds=config.parse_duration(text, "--since"))
    except UserError:
        pass
    try:
        at = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        at = None
    if at is None or at.tzinfo is None:
        raise UserError(
            f"bad --since {text!r}: give a duration back from now ('2h', "
            "'30 minutes') or a timestamp with its time zone "
            "('2026-01-02 03:04:05+00')"
        )
    return at


def read_audit(args: argparse.Namespace) -> AuditPage:
    since = parse_since(args.since) if args.since else None
    # a file needs no server: the embedded one is not started for it
    dsn = None if args.audit_file else db.resolve_target(args.dsn).dsn
    return read_latest(dsn, args.audit_file, since, args.limit)


def audit_text(page: AuditPage) -> str:
    """A table, newest first; times in this machine's time zone. Every value a record holds
    is untrusted (a reason, a target, a state): its control characters escaped."""
    notes = [escape_controls(n) for n in page.notes]
    if not page.records:
        return f"no audited action in {escape_controls(str(page.source))}" + "".join(
            f"\n{n}" for n in notes
        )
    header = ["at", "action", "target", "from -> to", "outcome", "reason", "who"]
    rows = []
    for r in page.records:
        cells = [
            f"{r.at.astimezone():%Y-%m-%d %H:%M:%S}",
            r.action,
            r.target,
            f"{r.was} -> {r.to_state or '-'}",
            r.what_happened,
            one_line(r.reason or "-", 40),
            r.who,
        ]
        rows.append([escape_controls(str(c)) for c in cells])
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    lines = [f"{len(rows)} latest record(s) of {escape_controls(str(page.source))}, newest first"]
    lines += [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]
    return "\n".join(lines + notes)


def run_audit(args: argparse.Namespace) -> int:
    page = read_audit(args)
    if args.json:
        print(
            json.dumps(
                {
                    "source": page.source,
                    "records": [r.as_dict() for r in page.records],
                    "unreadable_lines": page.unreadable,
                },
                indent=2,
                default=str,
            )
        )
    else:
        print(printable(audit_text(page)))
    return 0
