"""`queuetop watch` (any queue) and `queuetop demo` (the demo queue): the live dashboard."""

from __future__ import annotations

import argparse
import sys

from dashboard import config, db
from dashboard.cli import discover_command, watch_overview
from dashboard.cli.common import (
    INTERVAL,
    MAX_INTERVAL_S,
    MIN_INTERVAL_S,
    checked,
    connection_options,
    open_queue,
    queue_options,
    recovery_options,
    warn_password_in_dsn,
)
from dashboard.loadgen.demo import DEMO_WORKERS
from dashboard.loadgen.settings import MAX_WORKERS
from dashboard.loadgen.strategies import STRATEGIES
from dashboard.setup import schema


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "watch",
        parents=[connection_options(), queue_options(), recovery_options()],
        help="open the live dashboard on a queue table",
    )
    p.set_defaults(handler=run_watch)

    p = sub.add_parser(
        "demo",
        parents=[connection_options(), recovery_options()],
        help="create the demo queue if absent, start workers on it and open the dashboard",
    )
    p.add_argument(
        "--interval",
        type=INTERVAL,
        default=1.0,
        metavar="SECONDS",
        help=f"refresh interval, {MIN_INTERVAL_S:g} to {MAX_INTERVAL_S:g}",
    )
    load = p.add_argument_group("load generator (keys w W s t ! z P in the dashboard)")
    load.add_argument(
        "--workers",
        type=checked(int, lambda n: 0 <= n <= MAX_WORKERS, f"a whole number, 0 to {MAX_WORKERS}"),
        default=None,
        metavar="N",
        help=f"worker processes to start (default {DEMO_WORKERS}; 0: the "
        "producer alone, w adds workers)",
    )
    load.add_argument(
        "--strategy",
        choices=list(STRATEGIES),
        default=None,
        help="claim strategy (default skip-locked)",
    )
    load.add_argument(
        "--chaos",
        action="store_true",
        help="random worker crashes after claims, each leaving a stale lease (off by "
        "default: the one ! makes is then the only one)",
    )
    load.add_argument(
        "--no-load",
        action="store_true",
        help="open the dashboard on a quiet queue: no producer, no workers",
    )
    p.set_defaults(handler=run_demo)


# `queuetop demo` is a show: a steady flow and a few failures (loadgen/demo.py); a crash
# comes from `!` (or at random with --chaos), and its stale lease stays for the operator.


def build_app(target: db.Target, spec, args: argparse.Namespace, loadgen=None):
    """The dashboard as `watch` and `demo` open it (tests run it under a Pilot)."""
    from dashboard.ui.app import QueuetopApp  # textual loads only for the dashboard

    return QueuetopApp(
        spec,
        target.dsn,
        interval=args.interval,
        read_only=args.read_only,
        audit_file=args.audit_file,
        loadgen=loadgen,
    )


def watch_app(args: argparse.Namespace):
    """`queuetop watch`'s dashboard: the spec checked against the catalog first."""
    check_audit_file(args)
    target, conn, spec = open_queue(args)  # fails fast, in one line, before the screen opens
    conn.close()
    warn_password_in_dsn(args)
    return build_app(target, spec, args)


def _run_app(target: db.Target, spec, args: argparse.Namespace, loadgen=None) -> int:
    return run_app(build_app(target, spec, args, loadgen), loadgen)


def run_app(app, loadgen=None) -> int:
    """Run the dashboard; its exit code (143 after SIGTERM, 129 after SIGHUP)."""
    try:  # the app starts the load generator on its own (main) thread once it is mounted
        app.run()
    finally:  # q, Ctrl-C, SIGTERM, or a crash of the app: no worker outlives the dashboard
        if loadgen is not None:
            loadgen.stop()
            loadgen.wait(30)
    return app.return_code or 0  # 143 after SIGTERM, 129 after SIGHUP


def demo_loadgen(dsn: str, spec, args: argparse.Namespace):
    """The demo's load generator, or None with --no-load. Leases an earlier run left are
    requeued first (guarded and audited, see loadgen/leftovers.py), and said."""
    if args.no_load:
        return None
    from dashboard.audit.writers import choose_sink
    from dashboard.errors import UserError
    from dashboard.loadgen import LoadGenerator
    from dashboard.loadgen.demo import demo_settings
    from dashboard.loadgen.leftovers import clear_leftovers

    with db.connect_action(dsn) as conn:
        try:
            audit = choose_sink(conn, args.audit_file)
        except UserError:  # no audit trail: the leftovers are only counted
            audit = None
    note = clear_leftovers(dsn, spec, audit).note()
    if note:
        print(f"queuetop demo: {note}", file=sys.stderr)
    settings = demo_settings(args.workers, args.strategy, chaos=getattr(args, "chaos", False))
    return LoadGenerator(dsn, spec, settings, notes=(note,) if note else ())


def check_audit_file(args: argparse.Namespace) -> None:
    """A bad --audit-file fails now, in one line, not at the first action in the dashboard."""
    if args.audit_file:
        from dashboard.actions import FileAudit

        FileAudit(args.audit_file)


def run_watch(args: argparse.Namespace) -> int:
    check_audit_file(args)
    found = discover_command.discovered(args)  # a DSN but no queue: what the catalog holds
    if found:
        return watch_overview.run_discovered(args, found, run_app)
    return run_app(watch_app(args))


def run_demo(args: argparse.Namespace) -> int:
    check_audit_file(args)
    target = db.resolve_target(args.dsn)
    schema.ensure_demo(target.dsn)
    with db.connect_monitor(target.dsn) as conn:
        spec = config.validate(conn, config.load_preset(config.DEFAULT_PRESET))
    warn_password_in_dsn(args)
    return _run_app(target, spec, args, demo_loadgen(target.dsn, spec, args))
