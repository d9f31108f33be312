"""`queuetop record`: snapshots of a queue into a recording file, headless; and the
`watch --record FILE` flag, the same recording made by the dashboard while it runs."""

from __future__ import annotations

import argparse
import re
import signal
import sys
import threading
from datetime import datetime, timezone
from pathlib import Path

from dashboard import config
from dashboard.cli.common import (
    connection_options,
    latency_options,
    open_queue,
    queue_options,
    text,
    warn_password_in_dsn,
)
from dashboard.cli.target_args import apply_target, target_options
from dashboard.errors import UserError
from dashboard.text.untrusted import escape_controls

DEFAULT_RETAIN = "7d"
DEFAULT_MAX_SIZE = "1GB"
MIN_SIZE = 64 * 1024
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:([kmgt])(i)?)?b?\s*$", re.IGNORECASE)


def size(value: str) -> int:
    """'200MB', '1.5G', '512KiB' or bytes -> bytes (KB, MB, GB: powers of 1000; KiB, MiB,
    GiB: of 1024). An argparse `type`."""
    match = _SIZE.match(value)
    if not match:
        raise argparse.ArgumentTypeError(f"expected a size such as 200MB or 1GiB, got {value!r}")
    number, unit, binary = match.groups()
    factor = (1024 if binary else 1000) ** ("kmgt".index(unit.lower()) + 1) if unit else 1
    amount = int(float(number) * factor)
    if amount < MIN_SIZE:
        raise argparse.ArgumentTypeError(f"expected at least 64KiB, got {value!r}")
    return amount


def recording_path(value: str) -> str:
    """A file to record to: not empty, not a directory, in a directory that exists. An
    argparse `type`, so that a bad one fails before anything connects, whatever the command
    does next."""
    if not value.strip():
        raise argparse.ArgumentTypeError(
            "expected a file path, got an empty value (an unset variable?)"
        )
    path = Path(value)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{value} is a directory: give a file name")
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(f"no directory {path.parent} for {value}: create it")
    return value


def retention(value: str) -> float | None:
    """A duration ('7d', '12h'), or 'forever'. An argparse `type`."""
    if value.strip().lower() == "forever":
        return None
    try:
        return config.parse_duration(value, "--retain")
    except UserError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (or 'forever')") from None


def add_retention_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--retain",
        metavar="D",
        type=retention,
        default=retention(DEFAULT_RETAIN),
        help=f"drop frames older than D (default {DEFAULT_RETAIN}; 'forever' keeps them)",
    )
    parser.add_argument(
        "--max-size",
        metavar="S",
        type=size,
        default=size(DEFAULT_MAX_SIZE),
        help=f"drop the oldest frames to keep the file under S (default {DEFAULT_MAX_SIZE})",
    )


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "record",
        parents=[connection_options(), target_options(), queue_options(), latency_options()],
        help="record snapshots of a queue into a file, headless (replay and incident read it)",
        description="Poll the queue every --interval seconds (default 1 here), as the "
        "dashboard does, and write each snapshot and the audit records of actions taken "
        "meanwhile to one SQLite file. Stop with Ctrl-C or SIGTERM.",
    )
    p.add_argument(
        "--out", required=True, metavar="FILE", type=recording_path, help="the recording"
    )
    add_retention_options(p)
    add_redact_option(p)
    p.add_argument(
        "--audit-file",
        metavar="PATH",
        type=text("a file path"),
        help="the actions' JSON-lines audit file to follow (default: queuetop.audit_log)",
    )
    p.add_argument(
        "--frames",
        metavar="N",
        type=int,
        help="stop after N frames (default: until Ctrl-C or SIGTERM)",
    )
    p.set_defaults(handler=run_record, interval=1.0)


def open_recorder(args: argparse.Namespace, dsn: str, spec, out: str, audit_file=None):
    """The Recorder for `out`: one clear line (exit 2) for a bad path or a foreign file."""
    from dashboard.cli.dispatch import installed_version  # (dispatch imports this module)
    from dashboard.recorder import Recorder, RecordingWriter
    from dashboard.recorder.audit_follow import AuditFollower

    writer = RecordingWriter(
        out,
        spec,
        args.interval,
        retain_s=args.retain,
        max_bytes=args.max_size,
        version=installed_version(),
        redact_queries=getattr(args, "redact_queries", False),
    )
    follower = AuditFollower(dsn, audit_file, datetime.now(timezone.utc), table=str(spec.table))
    return Recorder(writer, follower)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def run_record(args: argparse.Namespace) -> int:
    from dashboard.recorder.headless import RecordLoop

    apply_target(args)
    if args.frames is not None and args.frames < 1:
        raise UserError(f"bad --frames {args.frames}: give a whole number above 0")
    target, conn, spec = open_queue(args)  # a bad spec fails here, in one line
    try:
        recorder = open_recorder(args, target.dsn, spec, args.out, args.audit_file)
    except BaseException:
        conn.close()
        raise
    warn_password_in_dsn(args)
    loop = RecordLoop(target.dsn, spec, args.interval, recorder, conn=conn, log=_stderr)
    print(
        escape_controls(
            f"queuetop record: recording {spec.table} every {args.interval:g}s to {args.out} "
            f"(audit trail: {recorder.follower.source})"
        ),
        flush=True,
    )
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)  # a service manager's stop: a clean exit
    stop = threading.Event()
    try:
        loop.run(stop, args.frames)
    except KeyboardInterrupt:
        pass
    finally:
        try:
            recorder.close()  # its last read of the audit trail, on the loop's connection
        finally:
            loop.close()
    stats = recorder.writer.stats
    print(
        f"queuetop record: {stats.frames} frames ({stats.full} full), "
        f"{stats.bytes / 1000:.1f} kB of frames, {stats.audit} audit records, "
        f"{stats.dropped} dropped by retention, in {args.out}",
        file=sys.stderr,
    )
    return 0


def _stderr(line: str) -> None:
    print(escape_controls(f"queuetop record: {line}"), file=sys.stderr, flush=True)


# --- watch --record FILE ------------------------------------------------------------------


def add_record_flag(parser: argparse.ArgumentParser) -> None:
    """`watch --record FILE` (with --retain and --max-size)."""
    group = parser.add_argument_group("recording (queuetop replay / incident read it)")
    group.add_argument(
        "--record",
        metavar="FILE",
        type=recording_path,
        help="record every snapshot the dashboard takes to FILE (as queuetop record does)",
    )
    add_retention_options(group)
    add_redact_option(group)


def add_redact_option(parser) -> None:
    parser.add_argument(
        "--redact-queries",
        action="store_true",
        help="replace the literals in recorded query text by ? (as pg_stat_statements "
        "does), so that a recording can be shared without the secrets statements carry",
    )


def watch_recorder(args: argparse.Namespace, target, spec):
    """The dashboard's recorder (on a thread of its own), or None without --record."""
    if not getattr(args, "record", None):
        return None
    from dashboard.recorder import BackgroundRecorder

    recorder = open_recorder(args, target.dsn, spec, args.record, args.audit_file)
    return BackgroundRecorder(recorder)
