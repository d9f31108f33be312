"""`queuetop watch` with a DSN but no queue: the queue discovery found, or an overview of
all of them; `queuetop watch --all` (or several target names): the overview across the
targets of the targets file. Enter opens the usual dashboard on one queue, Escape comes
back."""

from __future__ import annotations

import argparse
from dataclasses import replace

from dashboard import config, db
from dashboard.cli import record_command, rewind_option
from dashboard.cli.common import COLUMN_FLAGS, checked, text, warn_password_in_dsn
from dashboard.cli.discover_command import spec_of
from dashboard.cli.target_args import add_targets_file, apply_target
from dashboard.config import targets
from dashboard.discover.fleet import DEFAULT_CONNECTIONS, Fleet
from dashboard.discover.found import FoundQueue
from dashboard.discover.overview import Overview
from dashboard.errors import UserError
from dashboard.models import ROLES, QueueSpec

MAX_CONNECTIONS = 256


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
        rewind=rewind_option.rewind_buffer(args),
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


# --- named targets ------------------------------------------------------------------------


def add_target_flags(parser: argparse.ArgumentParser) -> None:
    """`watch prod`, `--target prod` (again for each), `--all`: named targets
    (docs/targets.md); several open the overview across them."""
    parser.add_argument(
        "names",
        nargs="*",
        metavar="TARGET",
        type=text("a target name"),
        help="targets of the targets file: one opens its queue (or the overview of its "
        "queues), several the overview across them",
    )
    group = parser.add_argument_group("named targets (docs/targets.md)")
    add_targets_file(group)
    group.add_argument(
        "--target",
        metavar="NAME",
        dest="target_names",
        action="append",
        type=text("a target name"),
        help="a target of the targets file (again for each: the overview across them)",
    )
    group.add_argument(
        "--all",
        action="store_true",
        help="the overview across every target of the targets file",
    )
    group.add_argument(
        "--connections",
        metavar="N",
        type=checked(int, lambda v: 1 <= v <= MAX_CONNECTIONS, f"1 to {MAX_CONNECTIONS}"),
        default=DEFAULT_CONNECTIONS,
        help="the overview across targets polls them in parallel on at most N connections "
        f"(default {DEFAULT_CONNECTIONS}); with no more targets than N each keeps its own",
    )


def _looks_like_dsn(name: str) -> bool:
    return "://" in name or "=" in name


def _shaping_flags(args: argparse.Namespace) -> list[str]:
    """The queue flags given: the overview across targets takes each target's queue from
    the targets file (or discovery), never one set of flags for all."""
    given = [f"--{flag}" for flag in ("queue", "preset", "table") if getattr(args, flag, None)]
    if getattr(args, "id_column", None):
        given.append("--id-column")
    if getattr(args, "status_column", None):
        given.append("--status-column")
    given += [
        f"--{key.replace('_', '-')}-column"
        for key in COLUMN_FLAGS
        if getattr(args, f"column_{key}", None)
    ]
    given += [f"--{v}-value" for v in ("ready", "dead") if getattr(args, f"{v}_value", None)]
    given += [
        f"--{role}-{kind}"
        for kind in ("values", "when")
        for role in ROLES
        if getattr(args, f"{kind}_{role}", None)
    ]
    return given


def chosen_targets(args: argparse.Namespace) -> list[targets.NamedTarget] | None:
    """The targets `watch` was asked for. One (`watch prod`, `--target prod`): args are
    aimed at it (its DSN, its queue where it names one) and None comes back, so that
    `watch` goes on as with --dsn. Several (or --all): those targets. None named: None."""
    names = list(dict.fromkeys([*getattr(args, "names", []), *(args.target_names or [])]))
    if not names and not args.all:
        if args.targets:
            raise UserError(
                "--targets names the targets file; pick from it: queuetop watch NAME, "
                "--target NAME or --all"
            )
        return None
    if any(_looks_like_dsn(n) for n in names):
        raise UserError(
            "a target name is a word from the targets file; a DSN goes in --dsn "
            "(queuetop watch --dsn DSN)"
        )
    if args.all and names:
        raise UserError("give --all or target names, not both")
    if args.dsn:
        raise UserError("give a target or --dsn, not both: the target names its database")
    if len(names) == 1:
        args.target = names[0]
        apply_target(args)  # refuses queue flags a target naming its queue would contradict
        return None
    file = targets.load(args.targets)
    chosen = [targets.pick(file, n) for n in names] if names else list(file.values())
    shaping = _shaping_flags(args)
    if shaping:
        raise UserError(
            f"the overview across targets takes each target's queue from the targets file "
            f"(or discovery); drop {shaping[0]}"
        )
    if getattr(args, "record", None):
        raise UserError(
            "--record records one queue: name one target (queuetop watch NAME --record FILE)"
        )
    return chosen


def spec_shape(args: argparse.Namespace):
    """What the command's flags change in every target's spec: --latency-window."""
    window = getattr(args, "latency_window", None)
    if window is None:
        return None
    return lambda spec: replace(spec, policy=replace(spec.policy, latency_window_s=window))


def validated_spec(dsn: str, raw: QueueSpec, interval: float) -> QueueSpec:
    with db.connect_monitor(dsn, timeout_ms=db.monitor_timeout_ms(interval)) as conn:
        return config.validate(conn, raw)


def run_targets(args: argparse.Namespace, chosen: list[targets.NamedTarget], run_app) -> int:
    """The overview across `chosen`, then the dashboard of the queue picked, back to the
    overview on Escape, out on q (or a signal's exit code)."""
    from dashboard.ui.overview import BACK, FleetOverviewApp

    stale_after = getattr(args, "stale_after", None)
    fleet = Fleet.of(chosen, args.interval, args.connections, stale_after, spec_shape(args))
    notice = None
    while True:
        picker = FleetOverviewApp(fleet, interval=args.interval, notice=notice)
        code = run_app(picker)
        if picker.return_value is None:
            return code
        name, index = picker.return_value
        watch = fleet.watches[name]
        try:
            spec = validated_spec(watch.target.dsn, watch.raw_spec(index), args.interval)
        except UserError as exc:  # gone or unreachable since the overview read it: back, said
            notice = f"{name} {watch.queues[index].label} cannot be opened: {exc}"
            continue
        notice = None
        app = dashboard_app(args, watch.target.dsn, spec, back=True)
        code = run_app(app)
        if app.return_value != BACK:
            return code
