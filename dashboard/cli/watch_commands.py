"""`queuetop watch` (any queue) and `queuetop demo` (the demo queue): the live dashboard."""

from __future__ import annotations

import argparse
from dataclasses import replace

from dashboard import config, db
from dashboard.cli import record_command
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
from dashboard.loadgen.settings import MAX_WORKERS
from dashboard.loadgen.strategies import STRATEGIES
from dashboard.setup import schema


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "watch",
        parents=[connection_options(), queue_options(), recovery_options()],
        help="open the live dashboard on a queue table",
    )
    record_command.add_record_flag(p)
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
        "--no-load",
        action="store_true",
        help="open the dashboard on a quiet queue: no producer, no workers",
    )
    p.set_defaults(handler=run_demo)


# `queuetop demo` is a show: a steady flow, a few failures, a rare crash whose stale lease
# stays for the operator to recover (only `queuetop load --rescue` requeues expired leases).
DEMO_WORKERS = 4
DEMO_FAIL_RATE = 0.02
DEMO_CRASH_RATE = 0.001


def build_app(target: db.Target, spec, args: argparse.Namespace, loadgen=None, recorder=None):
    """The dashboard as `watch` and `demo` open it (tests run it under a Pilot)."""
    from dashboard.ui.app import QueuetopApp  # textual loads only for the dashboard

    return QueuetopApp(
        spec,
        target.dsn,
        interval=args.interval,
        read_only=args.read_only,
        audit_file=args.audit_file,
        loadgen=loadgen,
        recorder=recorder,
    )


def watch_app(args: argparse.Namespace):
    """`queuetop watch`'s dashboard: the spec checked against the catalog first."""
    check_audit_file(args)
    target, conn, spec = open_queue(args)  # fails fast, in one line, before the screen opens
    conn.close()
    warn_password_in_dsn(args)
    return build_app(target, spec, args, recorder=record_command.watch_recorder(args, target, spec))


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
        if getattr(app, "recorder", None) is not None:  # watch --record: the last frames
            app.recorder.close()
    return app.return_code or 0  # 143 after SIGTERM, 129 after SIGHUP


def demo_loadgen(dsn: str, spec, args: argparse.Namespace):
    """The demo's load generator, or None with --no-load."""
    if args.no_load:
        return None
    from dashboard.loadgen import DEMO_SETTINGS, LoadGenerator, LoadSettings

    settings: LoadSettings = replace(
        DEMO_SETTINGS,
        fail_rate=DEMO_FAIL_RATE,
        crash_rate=DEMO_CRASH_RATE,
        workers=DEMO_WORKERS if args.workers is None else args.workers,
        strategy=args.strategy or DEMO_SETTINGS.strategy,
    )
    return LoadGenerator(dsn, spec, settings)


def check_audit_file(args: argparse.Namespace) -> None:
    """A bad --audit-file fails now, in one line, not at the first action in the dashboard."""
    if args.audit_file:
        from dashboard.actions import FileAudit

        FileAudit(args.audit_file)


def run_watch(args: argparse.Namespace) -> int:
    return run_app(watch_app(args))


def run_demo(args: argparse.Namespace) -> int:
    check_audit_file(args)
    target = db.resolve_target(args.dsn)
    schema.ensure_demo(target.dsn)
    with db.connect_monitor(target.dsn) as conn:
        spec = config.validate(conn, config.load_preset(config.DEFAULT_PRESET))
    warn_password_in_dsn(args)
    return _run_app(target, spec, args, demo_loadgen(target.dsn, spec, args))
