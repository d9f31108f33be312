"""`queuetop db start|stop|status|url`, `init-demo` and `init-audit`."""

from __future__ import annotations

import argparse

from dashboard import db
from dashboard.cli.common import connection_options
from dashboard.setup import schema

DB_ACTIONS = """actions:
  start   start the embedded server (its data directory is made on first use), print its DSN
  stop    stop it (fast shutdown: open sessions are ended)
  status  print its DSN if it is running, else 'stopped'; exit 0 if running, 3 if not
  url     print the DSN only (starting the server if needed), e.g. psql "$(queuetop db url)"
"""


def register(sub: argparse._SubParsersAction) -> None:
    conn_opts = connection_options()
    p = sub.add_parser(
        "db",
        help="manage the embedded PostgreSQL server",
        description="Manage queuetop's own PostgreSQL server (data in "
        f"{db.data_dir()}, or $QUEUETOP_HOME/pgdata).",
        epilog=DB_ACTIONS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "action", choices=["start", "stop", "status", "url"], help="what to do (see below)"
    )
    p.set_defaults(handler=run_db)

    p = sub.add_parser(
        "init-demo",
        parents=[conn_opts],
        help="create the demo queue, its dead-letter table and the audit table",
    )
    p.add_argument("--reset", action="store_true", help="drop and recreate the demo schema")
    p.set_defaults(handler=run_init_demo)

    p = sub.add_parser(
        "init-audit", parents=[conn_opts], help="create the audit table queuetop.audit_log"
    )
    p.set_defaults(handler=run_init_audit)


def run_db(args: argparse.Namespace) -> int:
    where = db.data_dir()
    if args.action == "start":
        dsn = db.start_embedded()
        print(f"embedded PostgreSQL running in {where}: {dsn}")
    elif args.action == "stop":
        stopped = db.stop_embedded()
        print(
            f"embedded PostgreSQL stopped ({where})"
            if stopped
            else f"embedded PostgreSQL was not running ({where})"
        )
    elif args.action == "status":
        dsn = db.embedded_status()
        print(f"running: {dsn}" if dsn else f"stopped ({where})")
        return 0 if dsn else 3
    else:
        print(db.start_embedded())
    return 0


def run_init_demo(args: argparse.Namespace) -> int:
    target = db.resolve_target(args.dsn)
    with db.connect_admin(target.dsn) as conn:
        jobs = schema.init_demo(conn, reset=args.reset)
    print(
        f"demo queue ready: queuetop_demo.jobs ({jobs} jobs), dead letters in "
        "queuetop_demo.jobs_dead, audit in queuetop.audit_log"
    )
    return 0


def run_init_audit(args: argparse.Namespace) -> int:
    target = db.resolve_target(args.dsn)
    with db.connect_admin(target.dsn) as conn:
        schema.init_audit(conn)
    print("audit table ready: queuetop.audit_log")
    return 0
