"""`queuetop serve`: the dashboard in a browser (textual-serve), read-only by default."""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

from dashboard import db
from dashboard.cli.common import (
    connection_options,
    open_queue,
    queue_options,
    text,
    warn_password_in_dsn,
)
from dashboard.cli.export_command import listen_address
from dashboard.cli.watch_commands import check_audit_file
from dashboard.errors import UserError
from dashboard.setup.schema import ensure_demo

DEFAULT_SERVE_LISTEN = "127.0.0.1:8000"
# queue options handed on to each tab's `queuetop watch`, as (dest, flag)
QUEUE_FLAGS = (
    ("queue", "--queue"),
    ("preset", "--preset"),
    ("table", "--table"),
    ("id_column", "--id-column"),
    ("status_column", "--status-column"),
    ("stale_after", "--stale-after"),
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        parents=[connection_options(), queue_options()],
        help="the dashboard in a browser (textual-serve), read-only unless --allow-actions",
    )
    p.add_argument(
        "--listen",
        type=listen_address,
        default=DEFAULT_SERVE_LISTEN,
        metavar="HOST:PORT",
        help=f"where to serve the page (default {DEFAULT_SERVE_LISTEN}: this machine only)",
    )
    p.add_argument(
        "--public-url",
        metavar="URL",
        type=public_url,
        help="the address browsers use, if not http://HOST:PORT (a proxy)",
    )
    p.add_argument(
        "--allow-actions",
        action="store_true",
        help="let the browser requeue, dead-letter, cancel and terminate (default: read-only)",
    )
    p.add_argument(
        "--audit-file",
        metavar="PATH",
        type=text("a file path"),
        help="with --allow-actions: the audit trail as JSON lines in this file",
    )
    p.add_argument(
        "--demo",
        action="store_true",
        help="show the demo (queue created if absent, workers started): each "
        "browser tab runs its own workers",
    )
    p.set_defaults(handler=run_serve)


def public_url(value: str) -> str:
    """--public-url: an http(s) address with a host (browsers are sent there)."""
    if not re.match(r"https?://[^/\s]+", value.strip()):
        raise argparse.ArgumentTypeError(f"expected an http:// or https:// address, got {value!r}")
    return value.strip()


def tab_options(args: argparse.Namespace) -> list[str]:
    """The flags each tab's dashboard process gets (never the DSN: see run_serve)."""
    options = ["--interval", f"{args.interval:g}"]
    if not args.demo:
        for dest, flag in QUEUE_FLAGS:
            value = getattr(args, dest)
            if value is not None:
                value = str(Path(value).resolve()) if dest == "queue" else value
                options += [flag, value]
    if args.allow_actions:
        if args.audit_file:
            options += ["--audit-file", str(Path(args.audit_file).resolve())]
    else:
        options.append("--read-only")
    return options


def run_serve(args: argparse.Namespace) -> int:
    from dashboard.ui import web

    host, port = args.listen
    if args.audit_file and not args.allow_actions:
        raise UserError("--audit-file records actions: add --allow-actions, or drop it")
    check_audit_file(args)  # a bad path fails here, not in every tab
    if port == 0:
        raise UserError(
            f"--listen: serve needs a fixed port (the page names it), e.g. {DEFAULT_SERVE_LISTEN}"
        )
    if args.demo:
        target = db.resolve_target(args.dsn)
        ensure_demo(target.dsn)
        title = "queuetop demo"
    else:
        target, conn, spec = open_queue(args)  # a bad spec fails here, in one line
        conn.close()
        title = f"queuetop: {spec.table}"
    # Each tab's process finds the server through the environment it inherits, so the
    # DSN (and its password) never shows in a process list. "" keeps the libpq PG* path.
    os.environ["DATABASE_URL"] = target.dsn
    warn_password_in_dsn(args)  # the tabs never see --dsn; this process's argv still has it
    command = web.dashboard_command("demo" if args.demo else "watch", tab_options(args))
    mode = "actions allowed" if args.allow_actions else "read-only"
    print(
        f"queuetop serve: {title} ({mode}) on {args.public_url or web.public_url(host, port)}",
        flush=True,
    )
    web.serve(command, host, port, title=title, url=args.public_url)
    return 0
