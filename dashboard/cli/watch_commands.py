"""`queuetop watch` (any queue) and `queuetop demo` (the demo queue): the live dashboard."""

from __future__ import annotations

import argparse

from dashboard import config, db, schema
from dashboard.cli.common import connection_options, open_queue, queue_options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("watch", parents=[connection_options(), queue_options()],
                       help="open the live dashboard on a queue table")
    p.add_argument("--read-only", action="store_true",
                   help="never change anything (recovery actions disabled)")
    p.add_argument("--audit-file", metavar="PATH",
                   help="audit recovery actions to this JSON-lines file instead of the "
                        "queuetop.audit_log table")
    p.set_defaults(handler=run_watch)

    p = sub.add_parser("demo", parents=[connection_options()],
                       help="create the demo queue if absent and open the dashboard on it")
    p.add_argument("--interval", type=float, default=1.0, metavar="SECONDS",
                   help="refresh interval")
    p.add_argument("--read-only", action="store_true",
                   help="never change anything (recovery actions disabled)")
    p.add_argument("--audit-file", metavar="PATH",
                   help="audit recovery actions to this JSON-lines file instead of the "
                        "queuetop.audit_log table")
    p.set_defaults(handler=run_demo)


def _run_app(target: db.Target, spec, args: argparse.Namespace) -> int:
    from dashboard.ui.app import QueuetopApp  # textual loads only for the dashboard

    QueuetopApp(spec, target.dsn, interval=args.interval, read_only=args.read_only,
                audit_file=args.audit_file).run()
    return 0


def run_watch(args: argparse.Namespace) -> int:
    target, conn, spec = open_queue(args)  # fails fast, in one line, before the screen opens
    conn.close()
    return _run_app(target, spec, args)


def ensure_demo(dsn: str) -> None:
    """Create the demo schema unless the demo queue and its dead-letter table exist."""
    spec = config.load_preset(config.DEFAULT_PRESET)
    dead = spec.policy.dead_letter.table if spec.policy.dead_letter else None
    with db.connect_monitor(dsn) as conn:
        present = config.resolve_table(conn, spec.table) is not None and (
            dead is None or config.resolve_table(conn, dead) is not None)
    if not present:
        with db.connect_admin(dsn) as conn:
            schema.init_demo(conn)


def run_demo(args: argparse.Namespace) -> int:
    target = db.resolve_target(args.dsn)
    ensure_demo(target.dsn)
    args.queue = args.preset = args.table = args.id_column = None
    args.status_column = args.stale_after = None
    _, conn, spec = open_queue(argparse.Namespace(**{**vars(args), "dsn": target.dsn or None}))
    conn.close()
    return _run_app(target, spec, args)
