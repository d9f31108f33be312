"""`queuetop replay FILE [--at TIME]`: the dashboard on a recording, read-only."""

from __future__ import annotations

import argparse

from dashboard.cli.common import text
from dashboard.errors import UserError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay",
        help="open the dashboard on a recording: step, seek, play at 1x/10x/60x (read-only)",
        description="The dashboard as it was, driven by a recording of `queuetop record` or "
        "`watch --record`: keys , . step a frame, < > jump a minute, g goes to a time, p "
        "plays or pauses, + - change the speed, A lists the recorded audit trail. No "
        "database is needed; every action is off.",
    )
    p.add_argument("file", metavar="FILE", type=text("a recording file"), help="the recording")
    p.add_argument(
        "--at",
        metavar="TIME",
        type=text("a time"),
        help="open at this time: 03:07, 03:07:30, an ISO timestamp, +5m from the start, "
        "-10m before the end (default: the first frame)",
    )
    p.add_argument(
        "--debug", dest="sub_debug", action="store_true", help="show tracebacks on errors"
    )
    p.set_defaults(handler=run_replay)


def replay_app(args: argparse.Namespace):
    """The replaying dashboard (tests run it under a Pilot); the file checked first."""
    from dashboard.recorder import Recording
    from dashboard.recorder.times import parse_when

    recording = Recording(args.file)
    try:
        bounds = recording.bounds()
        if bounds is None:
            raise UserError(
                f"{args.file} holds no frame yet: record for a while first"
                + "".join(f" ({note})" for note in recording.notes)
            )
        at = parse_when(args.at, bounds.first_at, bounds.last_at, "--at") if args.at else None
        spec = recording.spec()
    except BaseException:
        recording.close()
        raise
    from dashboard.ui.app import QueuetopApp  # textual loads only for the dashboard
    from dashboard.ui.replay import ReplayDriver

    return QueuetopApp(
        spec,
        None,
        interval=recording.interval,
        read_only=True,
        poll=False,
        replay=ReplayDriver(recording, at),
    )


def run_replay(args: argparse.Namespace) -> int:
    from dashboard.cli.watch_commands import run_app

    app = replay_app(args)
    try:
        return run_app(app)
    finally:
        app.replay.close()
