"""The parser of every subcommand, and running one: errors become one line, exit 2."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from typing import Any

import psycopg

from dashboard.cli.common import EXIT_USAGE, OneLineParser
from dashboard.errors import UserError
from dashboard.text import redact
from dashboard.text.untrusted import escape_controls, printable

# subcommand -> the module (under dashboard.cli) that registers and runs it. A command
# line imports only the module of its subcommand: the load generator, the actions,
# prometheus_client or textual load for the commands that use them, not for `check`.
COMMANDS = {
    "db": "db_commands",
    "init-demo": "db_commands",
    "init-audit": "db_commands",
    "snapshot": "snapshot_command",
    "watch": "watch_commands",
    "demo": "demo_command",
    "requeue": "action_commands",
    "dead-letter": "action_commands",
    "retry-dead": "action_commands",
    "cancel": "action_commands",
    "terminate": "action_commands",
    "audit": "audit_command",
    "load": "load_command",
    "export": "export_command",
    "check": "check_command",
    "serve": "serve_command",
    "presets": "presets_command",
    "doctor": "doctor_command",
    "discover": "discover_command",
    "lab": "lab_command",
    "record": "record_command",
    "replay": "replay_command",
    "incident": "incident_command",
}


def installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # 30 ms: only for --version

    try:
        return version("queuetop")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


class VersionAction(argparse.Action):
    """argparse's version action, with the version looked up only when asked for."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(f"queuetop {installed_version()}")  # to stdout, as argparse's own does
        parser.exit()


def command_of(argv: list[str]) -> str | None:
    """The subcommand named on the command line: the first word that is not an option of
    `queuetop` itself (those take no value); None if there is none or it is unknown."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in COMMANDS else None


def build_parser(command: str | None = None, *, subcommands: bool = True) -> OneLineParser:
    """The parser of `command`'s family of subcommands, or of every subcommand (for
    --help, a usage error, and the tests); none at all with `subcommands=False`."""
    parser = OneLineParser(
        prog="queuetop",
        description="A terminal dashboard for PostgreSQL tables used as job queues.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    parser.add_argument("--version", action=VersionAction, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    sub.required = True
    modules = [COMMANDS[command]] if command else list(dict.fromkeys(COMMANDS.values()))
    if not subcommands:
        modules = []
    for name in modules:
        importlib.import_module(f"dashboard.cli.{name}").register(sub)
    return parser


def log_forks() -> None:
    """Under --debug: why a piece of the UI's toolkit forks (dashboard/ui/forks) or of the
    embedded server's internals (dashboard/embedded_internals.py) runs on the stock path,
    once each, on stderr."""
    log = logging.getLogger("queuetop.forks")
    if not log.handlers:
        log.addHandler(logging.StreamHandler(sys.stderr))
    log.setLevel(logging.DEBUG)


def run(argv: list[str]) -> int:
    redact.remember_given(argv)  # before parsing: a usage error may quote any argument
    command = command_of(argv)
    # `queuetop --version` needs no subcommand's parser (nor its imports)
    parser = build_parser(command, subcommands=command is not None or "--version" not in argv)
    args = parser.parse_args(argv)
    debug = args.debug or getattr(args, "sub_debug", False)
    if debug:
        log_forks()
    try:
        return int(args.handler(args) or 0)
    except UserError as exc:
        if debug:
            raise
        # an error may quote the catalog or the server (a table name, a value): escaped
        print(printable(f"queuetop: error: {redact.scrub(str(exc))}"), file=sys.stderr)
        return EXIT_USAGE
    except psycopg.Error as exc:
        if debug:
            raise
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        print(
            escape_controls(
                f"queuetop: database error: {redact.scrub(first)}; rerun with --debug for details"
            ),
            file=sys.stderr,
        )
        return EXIT_USAGE
