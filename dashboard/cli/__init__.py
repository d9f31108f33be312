"""The `queuetop` command: argparse subcommands that parse, wire and print.

Each module here registers a family of subcommands; the work happens in the
layers below (config, db, monitor, actions, loadgen, ui).
"""

from __future__ import annotations

import sys

import psycopg

from dashboard.cli import (
    action_commands,
    check_command,
    db_commands,
    doctor_command,
    export_command,
    load_command,
    presets_command,
    serve_command,
    snapshot_command,
    watch_commands,
)
from dashboard.cli.common import EXIT_USAGE, OneLineParser
from dashboard.errors import UserError

COMMAND_MODULES = (
    db_commands,
    snapshot_command,
    watch_commands,
    action_commands,
    load_command,
    export_command,
    check_command,
    serve_command,
    presets_command,
    doctor_command,
)


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog="queuetop",
        description="A terminal dashboard for PostgreSQL tables used as job queues.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    sub.required = True
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = args.debug or getattr(args, "sub_debug", False)
    try:
        return int(args.handler(args) or 0)
    except UserError as exc:
        if debug:
            raise
        print(f"queuetop: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except psycopg.Error as exc:
        if debug:
            raise
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        print(f"queuetop: database error: {first}; rerun with --debug for details",
              file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
