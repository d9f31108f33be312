"""`queuetop watch` (any queue) and `queuetop demo` (the demo queue): the live dashboard.

`demo`'s parser lives in demo_command.py, so that `watch` never loads the load generator.
"""

from __future__ import annotations

import argparse
import sys

from dashboard import config, db
from dashboard.cli import discover_command, record_command, rewind_option, watch_overview
from dashboard.cli.common import (
    connection_options,
    latency_options,
    open_queue,
    queue_options,
    recovery_options,
    warn_password_in_dsn,
)
from dashboard.setup import schema


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "watch",
        parents=[connection_options(), queue_options(), latency_options(), recovery_options()],
        help="open the live dashboard on a queue table",
    )
    watch_overview.add_target_flags(p)  # watch prod, --target, --all (docs/targets.md)
    record_command.add_record_flag(p)
    rewind_option.add_rewind_flag(p)
    p.set_defaults(handler=run_watch)


# `queuetop demo` is a show: a steady flow and a few failures (loadgen/demo.py); a crash
# comes from `!` (or at random with --chaos), and its stale lease stays for the operator.


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
        rewind=rewind_option.rewind_buffer(args),
    )


def watch_app(args: argparse.Namespace):
    """`queuetop watch`'s dashboard: the spec checked against the catalog first."""
    check_audit_file(args)
    target, conn, spec = open_queue(args)  # fails fast, in one line, before the screen opens
    conn.close()
    warn_password_in_dsn(args)
    return build_app(target, spec, args, recorder=record_command.watch_recorder(args, target, spec))


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
    several = watch_overview.chosen_targets(args)  # one: args now aim at it, as --dsn would
    if several:
        return watch_overview.run_targets(args, several, run_app)
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
    loadgen = demo_loadgen(target.dsn, spec, args)
    recorder = record_command.watch_recorder(args, target, spec)  # demo --record
    code = run_app(build_app(target, spec, args, loadgen, recorder), loadgen)
    if target.embedded and db.embedded_status() is not None:
        print(EMBEDDED_STILL_RUNNING.format(data=db.data_dir()), file=sys.stderr)
    return code


# said when the demo quits on the embedded server: it keeps running (the next start is quick)
EMBEDDED_STILL_RUNNING = (
    "queuetop: the embedded PostgreSQL server is still running (data in {data}); "
    "stop it with: queuetop db stop"
)
