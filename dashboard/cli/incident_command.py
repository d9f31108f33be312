"""`queuetop incident FILE [--since T] [--until T] [--json]`: a recording's postmortem."""

from __future__ import annotations

import argparse

from dashboard import config
from dashboard.cli.common import text
from dashboard.errors import UserError
from dashboard.text.untrusted import printable


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "incident",
        help="summarise a recording for a postmortem: backlog, blockers, stale leases, "
        "idle transactions, deadlocks, the monitor's cost",
    )
    p.add_argument("file", metavar="FILE", type=text("a recording file"), help="the recording")
    times = "03:07, an ISO timestamp, +5m from the start, -10m before the end"
    p.add_argument("--since", metavar="T", type=text("a time"), help=f"from this time ({times})")
    p.add_argument("--until", metavar="T", type=text("a time"), help="up to this time")
    p.add_argument(
        "--max-oldest-ready",
        metavar="D",
        type=text("a duration"),
        default="1m",
        help="the queue backed up while its oldest ready job was older than D (default 1m)",
    )
    p.add_argument("--json", action="store_true", help="print JSON (times in ISO 8601, text exact)")
    p.add_argument(
        "--debug", dest="sub_debug", action="store_true", help="show tracebacks on errors"
    )
    p.set_defaults(handler=run_incident)


def run_incident(args: argparse.Namespace) -> int:
    from dashboard.recorder import Recording
    from dashboard.recorder.incident import summarise
    from dashboard.recorder.incident_text import incident_json, incident_text
    from dashboard.recorder.times import parse_when

    threshold = config.parse_duration(args.max_oldest_ready, "--max-oldest-ready")
    recording = Recording(args.file)
    try:
        bounds = recording.bounds()
        if bounds is None:
            raise UserError(
                f"{args.file} holds no frame yet: record for a while first"
                + "".join(f" ({note})" for note in recording.notes)
            )
        since = (
            parse_when(args.since, bounds.first_at, bounds.last_at, "--since")
            if (args.since)
            else None
        )
        until = (
            parse_when(args.until, bounds.first_at, bounds.last_at, "--until")
            if (args.until)
            else None
        )
        if since is not None and until is not None and until < since:
            raise UserError("--until is before --since: give a window that moves forward")
        incident = summarise(recording, since, until, threshold)
    finally:
        recording.close()
    print(incident_json(incident) if args.json else printable(incident_text(incident)))
    return 0
