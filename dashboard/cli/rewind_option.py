"""`--rewind DURATION` (watch, demo): how far back the dashboard's rewind (h) reaches."""

from __future__ import annotations

import argparse

from dashboard import config
from dashboard.errors import UserError

DEFAULT_REWIND = "15m"
OFF = ("0", "0s", "0m", "off")


def rewind_span(value: str) -> float:
    """A duration ('15m', '1h', 90), or 0 for no rewind. An argparse `type`."""
    if value.strip().lower() in OFF:
        return 0.0
    try:
        return config.parse_duration(value, "--rewind")
    except UserError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (or 0: no rewind)") from None


def add_rewind_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rewind",
        metavar="DURATION",
        type=rewind_span,
        default=rewind_span(DEFAULT_REWIND),
        help=f"keep the last DURATION of snapshots in memory (default {DEFAULT_REWIND}; at "
        "most 32 MiB of frames) for the rewind: h opens it at now in the replay view, s "
        "there saves it as a recording; 0: no rewind",
    )


def rewind_buffer(args: argparse.Namespace):
    """The dashboard's rewind buffer, or None with --rewind 0."""
    span = getattr(args, "rewind", 0.0)
    if not span:
        return None
    from dashboard.cli.dispatch import installed_version  # (dispatch imports the commands)
    from dashboard.recorder.rewind import RewindBuffer

    return RewindBuffer(
        span,
        redact_queries=getattr(args, "redact_queries", False),
        version=installed_version,
    )
