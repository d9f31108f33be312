"""The `queuetop` command: argparse subcommands that parse, wire and print.

Each module here registers a family of subcommands (dispatch.py builds the
parser); the work happens in the layers below (config, db, monitor, actions,
loadgen, ui). This module imports nothing heavy, so that Ctrl-C while Python
is still loading psycopg or textual ends the command quietly (exit 130), as
Ctrl-C does later on.
"""

from __future__ import annotations

import os
import sys

EXIT_INTERRUPTED = 130
EXIT_PIPE_CLOSED = 1


def main(argv: list[str] | None = None) -> int:
    try:
        from dashboard.cli.dispatch import run

        return run(sys.argv[1:] if argv is None else argv)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return _reader_gone()


def _reader_gone() -> int:
    """`queuetop snapshot --json | head`: the reader closed the pipe. Nothing to say, and
    nothing more to write: stdout goes to /dev/null so that the flush at exit (of what
    is still buffered) cannot fail again. Exit 1, as a write that could not finish."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a descriptor (a test's capture)
        pass
    finally:
        os.close(devnull)
    return EXIT_PIPE_CLOSED


def build_parser():  # noqa: ANN201 (the parser class lives in a heavier module)
    """The whole command line's parser (for tests and documentation)."""
    from dashboard.cli.dispatch import build_parser as build

    return build()
