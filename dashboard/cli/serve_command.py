"""`queuetop serve`: the dashboard in a browser (textual-serve), read-only by default."""

from __future__ import annotations

import argparse
import ipaddress
import os
import re
import socket
import sys
from argparse import Namespace
from pathlib import Path

from dashboard import db
from dashboard.cli.common import (
    COLUMN_FLAGS,
    connection_options,
    latency_options,
    open_queue,
    queue_options,
    text,
    warn_password_in_dsn,
)
from dashboard.cli.export_command import listen_address
from dashboard.cli.watch_commands import check_audit_file
from dashboard.errors import UserError
from dashboard.models import ROLES
from dashboard.setup.schema import ensure_demo

DEFAULT_SERVE_LISTEN = "127.0.0.1:8000"
DEFAULT_MAX_TABS = 3
MAX_TABS = 20
# queue options handed on to each tab's `queuetop watch`, as (dest, flag)
QUEUE_FLAGS = (
    ("queue", "--queue"),
    ("preset", "--preset"),
    ("table", "--table"),
    ("id_column", "--id-column"),
    ("status_column", "--status-column"),
    ("stale_after", "--stale-after"),
    ("ready_value", "--ready-value"),
    ("dead_value", "--dead-value"),
    *((f"values_{role}", f"--{role}-values") for role in ROLES),
    *((f"when_{role}", f"--{role}-when") for role in ROLES),
    *((f"column_{key}", f"--{key.replace('_', '-')}-column") for key in COLUMN_FLAGS),
    ("latency_window", "--latency-window"),
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        parents=[connection_options(), queue_options(), latency_options()],
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
        "--allow-remote-actions",
        action="store_true",
        help="with --allow-actions on a --listen other than loopback: anyone who has the "
        "printed address may act (required, and warned about)",
    )
    p.add_argument(
        "--max-tabs",
        type=positive_int,
        default=DEFAULT_MAX_TABS,
        metavar="N",
        help=f"at most N browser tabs at once, each a dashboard process (default "
        f"{DEFAULT_MAX_TABS})",
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
        help="show the demo (queue created if absent): one load generator in this "
        "process, shared by every tab (its keys are not offered in the browser)",
    )
    p.set_defaults(handler=run_serve)


def positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if not 1 <= number <= MAX_TABS:
        raise argparse.ArgumentTypeError(f"expected a number of tabs from 1 to {MAX_TABS}")
    return number


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def public_url(value: str) -> str:
    """--public-url: an http(s) address with a host (browsers are sent there)."""
    if not re.match(r"https?://[^/\s]+", value.strip()):
        raise argparse.ArgumentTypeError(f"expected an http:// or https:// address, got {value!r}")
    return value.strip()


def tab_options(args: argparse.Namespace) -> list[str]:
    """The flags each tab's dashboard process gets (never the DSN: see run_serve)."""
    options = ["--interval", f"{args.interval:g}"]
    if args.demo:
        options += ["--preset", "demo"]  # the shared load generator's queue
    else:
        for dest, flag in QUEUE_FLAGS:
            value = getattr(args, dest, None)
            if isinstance(value, list):  # --id-column, once per key column
                for one in value:
                    options += [flag, one]
            elif isinstance(value, float):  # a duration parsed into seconds
                options += [flag, f"{value:g}"]
            elif value is not None:
                value = str(Path(value).resolve()) if dest == "queue" else value
                options += [flag, value]
    if args.allow_actions:
        if args.audit_file:
            options += ["--audit-file", str(Path(args.audit_file).resolve())]
    else:
        options.append("--read-only")
    return options


def check_remote_actions(args: argparse.Namespace, host: str) -> None:
    """Acting from a browser on another machine is a choice made twice, and said aloud."""
    if not args.allow_actions or is_loopback(host):
        return
    if not args.allow_remote_actions:
        raise UserError(
            f"--listen {host} with --allow-actions lets anyone who reaches {host} and has "
            "the printed address act on the queue; add --allow-remote-actions to mean it, "
            "or listen on 127.0.0.1"
        )
    print(
        f"queuetop serve: WARNING: actions allowed from other machines on {host}: whoever "
        "has the printed address can requeue, dead-letter, cancel and terminate",
        file=sys.stderr,
        flush=True,
    )


def check_port_free(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise UserError(
                f"--listen {host}:{port}: cannot listen there ({exc.strerror or exc}); "
                "choose another port"
            ) from None


def shared_demo_loadgen(dsn: str, audit_file: str | None):
    """The demo's load generator, once for every tab (each tab only watches)."""
    from dashboard import config
    from dashboard.cli.watch_commands import demo_loadgen

    with db.connect_monitor(dsn) as conn:
        spec = config.validate(conn, config.load_preset(config.DEFAULT_PRESET))
    options = Namespace(no_load=False, workers=None, strategy=None, audit_file=audit_file)
    return demo_loadgen(dsn, spec, options)


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
    check_remote_actions(args, host)
    check_port_free(host, port)
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
    command = web.dashboard_command("watch", tab_options(args))
    server = web.server(
        command, host, port, title=title, max_tabs=args.max_tabs, url=args.public_url
    )
    mode = "actions allowed" if args.allow_actions else "read-only"
    loadgen = shared_demo_loadgen(target.dsn, args.audit_file) if args.demo else None
    print(
        f"queuetop serve: {title} ({mode}, at most {args.max_tabs} tabs) on {server.page_url}",
        flush=True,
    )
    print(f"queuetop serve: each tab runs {command}", flush=True)
    if loadgen is not None:
        loadgen.start()
    try:
        server.serve()
    except OSError as exc:  # the port was taken between the check and the bind
        raise UserError(f"--listen {host}:{port}: {exc.strerror or exc}") from None
    finally:
        if loadgen is not None:
            loadgen.stop()
            loadgen.wait(30)
    return 0
