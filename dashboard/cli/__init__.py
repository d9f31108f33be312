"""The `queuetop` command: argparse subcommands that parse, wire and print.

Each module here registers a family of subcommands (dispatch.py builds the
parser); the work happens in the layers below (config, db, monitor, actions,
loadgen, ui). This module imports nothing heavy, so that Ctrl-C while Python
is still loading psycopg or textual ends the command quietly (exit 130), as
Ctrl-C does later on.
"""

from __future__ import annotations

import sys

EXIT_INTERRUPTED = 130


def main(argv: list[str] | None = None) -> int:
    try:
        from dashboard.cli.dispatch import run

        return run(sys.argv[1:] if argv is None else argv)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def build_parser():  # noqa: ANN201 (the parser class lives in a heavier module)
    """The whole command line's parser (for tests and documentation)."""
    from dashboard.cli.dispatch import build_parser as build

    return build()
