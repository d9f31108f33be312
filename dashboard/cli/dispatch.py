"""The parser of every subcommand, and running one: errors become one line, exit 2."""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version

import psycopg

from dashboard.cli import (
    action_commands,
    audit_command,
    check_command,
    db_commands,
    doctor_command,
    export_command,
    incident_command,
    load_command,
    presets_command,
    record_command,
    replay_command,
    serve_command,
    snapshot_command,
    watch_commands,
)
from dashboard.cli.common import EXIT_USAGE, OneLineParser
from dashboard.errors import UserError
from dashboard.text import redact

COMMAND_MODULES = (
    db_commands,
    snapshot_command,
    watch_commands,
    action_commands,
    audit_command,
    load_command,
    export_command,
    check_command,
    serve_command,
    presets_command,
    doctor_command,
    record_command,
    replay_command,
    incident_command,
)


def installed_version() -> str:
    try:
        return version("queuetop")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog="queuetop",
        description="A terminal dashboard for PostgreSQL tables used as job queues.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    parser.add_argument("--version", action="version", version=f"queuetop {installed_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    sub.required = True
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def run(argv: list[str]) -> int:
    redact.remember_given(argv)  # before parsing: a usage error may quote any argument
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = args.debug or getattr(args, "sub_debug", False)
    try:
        return int(args.handler(args) or 0)
    except UserError as exc:
        if debug:
            raise
        print(f"queuetop: error: {redact.scrub(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except psycopg.Error as exc:
        if debug:
            raise
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        print(
            f"queuetop: database error: {redact.scrub(first)}; rerun with --debug for details",
            file=sys.stderr,
        )
        return EXIT_USAGE
