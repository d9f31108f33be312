"""`queuetop export --targets FILE`: one exporter for every target of a targets file, on
Prometheus's multi-target convention (postgres_exporter's and blackbox_exporter's /probe).

Prometheus scrapes `/probe?target=NAME` for each target (relabelling puts the name in the
URL, docs/targets.md); each scrape polls that target on its own monitor connection, or
serves its last poll when that began less than half of --interval (the scrape interval)
ago, so that two Prometheus replicas do not double a target's load. `/metrics` is the
exporter's own health. Nothing connects at start: a target that is down is `up 0` on its
probe, never a reason for the others not to be served.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable

import psycopg

from dashboard import config, discover
from dashboard.cli.common import spec_from_args
from dashboard.cli.discover_command import shapes_spec
from dashboard.cli.target_args import fill
from dashboard.config import targets
from dashboard.errors import UserError
from dashboard.models import QueueSpec
from dashboard.text.untrusted import escape_controls

MIN_IDLE_CLOSE_S = 60.0  # a target nobody scraped for this long (or 5 intervals) is let go


def run_fleet(args: argparse.Namespace) -> int:
    from dashboard.metrics.exporter import Exporter
    from dashboard.metrics.fleet import Fleet, TargetProbe
    from dashboard.metrics.probe_server import serve_fleet

    if args.dsn:
        raise UserError(
            "give --targets FILE or --dsn, not both: the targets file names the databases "
            "(add --target NAME to export one of them alone)"
        )
    if shapes_spec(args):
        raise UserError(
            "with --targets FILE each target's queue comes from the file (preset, table or "
            "queue; discovered where it names none): drop the queue flags"
        )
    if args.stale_after:  # said now, not at the first probe of a discovered target
        config.parse_duration(args.stale_after, "--stale-after")
    named = targets.load(args.targets)  # a bad file is one line, before anything is served
    ttl = args.interval / 2
    probes = {}
    for name, target in named.items():
        spec, spec_of = _spec_source(args, target)  # a bad preset or TOML: one line, now
        exporter = Exporter(
            target.dsn,
            spec,
            args.interval,
            log=_logger(name),
            spec_of=spec_of,
            **({} if args.max_groups is None else {"max_groups": args.max_groups}),
        )
        probes[name] = TargetProbe(name, exporter, ttl, wait_s=args.interval)
    fleet = Fleet(probes, idle_close_s=max(5 * args.interval, MIN_IDLE_CLOSE_S))
    host, port = args.listen
    try:
        httpd = serve_fleet(fleet, host, port)
    except OSError as exc:
        raise UserError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; choose another --listen"
        ) from exc
    bound = httpd.server_address[1]
    shown = f"[{host}]" if ":" in host else host
    print(
        escape_controls(
            f"queuetop export: serving http://{shown}:{bound}/probe?target=NAME for "
            f"{len(named)} targets ({', '.join(named)}) and /metrics for the exporter; "
            f"a target is polled when scraped, at most every {ttl:g}s"
        ),
        flush=True,
    )
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)  # a service manager's stop: a clean exit
    stop = threading.Event()
    try:
        while not stop.wait(fleet.idle_close_s / 4):
            fleet.close_idle()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.shutdown()
        httpd.server_close()
        fleet.close()
    print("queuetop export: stopped", file=sys.stderr)
    return 0


def _spec_source(
    args: argparse.Namespace, target: targets.NamedTarget
) -> tuple[QueueSpec | None, Callable[[psycopg.Connection], QueueSpec] | None]:
    """The target's spec, built now where the file names its queue; else how to discover
    it on the target's first connection."""
    if target.has_queue:
        given = argparse.Namespace(**vars(args))
        fill(given, target)
        return spec_from_args(given), None
    return None, _discover_one(target.name, args.stale_after or target.stale_after)


def _discover_one(name: str, stale_after: str | None) -> Callable[[psycopg.Connection], QueueSpec]:
    def spec_of(conn: psycopg.Connection) -> QueueSpec:
        found = discover.watchable(discover.find_queues(conn))
        if len(found) == 1:
            return discover.spec_for(found[0], stale_after=stale_after)
        tables = ", ".join(str(f.table) for f in found[:5]) + (", ..." if len(found) > 5 else "")
        held = f"{len(found)} queues ({tables})" if found else "no queue discovery recognises"
        raise UserError(
            f"target {name!r} names no queue and its database holds {held}: "
            "give it a preset, table or queue in the targets file"
        )

    return spec_of


def _logger(name: str) -> Callable[[str], None]:
    def log(line: str) -> None:
        print(
            escape_controls(f"queuetop export: target {name}: {line}"), file=sys.stderr, flush=True
        )

    return log


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
