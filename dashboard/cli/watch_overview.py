"""`queuetop watch` with a DSN but no queue: the queue discovery found, or an overview of
all of them, Enter opening the usual dashboard on one and Escape coming back."""

from __future__ import annotations

import argparse

from dashboard import config, db
from dashboard.cli import record_command
from dashboard.cli.common import warn_password_in_dsn
from dashboard.cli.discover_command import spec_of
from dashboard.discover.found import FoundQueue
from dashboard.discover.overview import Overview
from dashboard.errors import UserError


def dashboard_app(args: argparse.Namespace, dsn: str, spec, *, back: bool, recorder=None):
    """The dashboard on one queue; with `back`, Escape returns to the overview."""
    from dashboard.ui.app import QueuetopApp
    from dashboard.ui.overview import DrillDownApp

    cls = DrillDownApp if back else QueuetopApp
    return cls(
        spec,
        dsn,
        interval=args.interval,
        read_only=args.read_only,
        audit_file=args.audit_file,
        recorder=recorder,
    )


def validated(args: argparse.Namespace, dsn: str, found: FoundQueue):
    with db.connect_monitor(dsn, timeout_ms=db.monitor_timeout_ms(args.interval)) as conn:
        return config.validate(conn, spec_of(args)(found))


def overview_app(
    args: argparse.Namespace, dsn: str, found: list[FoundQueue], notice: str | None = None
):
    from dashboard.ui.overview import OverviewApp

    with db.connect_monitor(dsn, timeout_ms=db.monitor_timeout_ms(args.interval)) as conn:
        overview = Overview.open(conn, found, args.interval, spec_of(args))
    return OverviewApp(overview, dsn, interval=args.interval, notice=notice)


def run_discovered(args: argparse.Namespace, found: list[FoundQueue], run_app) -> int:
    """One queue: its dashboard. Several: the overview, then the dashboard of the queue
    picked, back to the overview on Escape, out on q (or a signal's exit code)."""
    dsn = db.resolve_target(args.dsn).dsn
    warn_password_in_dsn(args)
    if len(found) == 1:
        spec = validated(args, dsn, found[0])
        recorder = record_command.watch_recorder(args, db.resolve_target(args.dsn), spec)
        return run_app(dashboard_app(args, dsn, spec, back=False, recorder=recorder))
    if getattr(args, "record", None):  # a recording holds one queue: which is for the user
        names = ", ".join(str(q.table) for q in found)
        raise UserError(
            f"--record records one queue and this database holds {len(found)} ({names}): "
            "name it with --queue, --preset or --table"
        )
    notice = None
    while True:
        picker = overview_app(args, dsn, found, notice)
        code = run_app(picker)
        if picker.return_value is None:
            return code
        picked = found[picker.return_value]
        try:
            spec = validated(args, dsn, picked)
        except UserError as exc:  # broken since the overview opened: back to it, said
            notice = f"{picked.table} cannot be opened: {exc}"
            continue
        notice = None
        app = dashboard_app(args, dsn, spec, back=True)
        code = run_app(app)
        if app.return_value != "back":
            return code
