"""`queuetop export`: the queue's numbers as a Prometheus / OpenMetrics endpoint."""

from __future__ import annotations

import argparse
import re
import signal
import sys
import threading

from dashboard import db
from dashboard.cli.common import (
    connection_options,
    latency_options,
    queue_options,
    spec_from_args,
    warn_password_in_dsn,
)
from dashboard.cli.target_args import apply_target, target_options
from dashboard.errors import UserError
from dashboard.text.untrusted import escape_controls

DEFAULT_LISTEN = "127.0.0.1:9187"
MAX_GROUPS_LIMIT = 10_000
DEFAULT_EXPORT_INTERVAL_S = 15.0  # a common scrape interval; the exporter is left running

_LISTEN = re.compile(r"^(?:\[(?P<v6>[0-9a-fA-F:.]+)\]|(?P<host>[^:\[\]]*)):(?P<port>\d{1,5})$")


def listen_address(text: str) -> tuple[str, int]:
    """'HOST:PORT', '[::1]:PORT', or ':PORT' (every interface) -> (host, port); port 0 picks
    a free one. An argparse `type`: a bad value is one usage line naming the flag."""
    match = _LISTEN.match(text.strip())
    port = int(match.group("port")) if match else -1
    if not match or port > 65535:
        raise argparse.ArgumentTypeError(
            f"expected HOST:PORT such as 127.0.0.1:9187 (port 0 to 65535), got {text!r}"
        )
    host = match.group("v6") or match.group("host") or "0.0.0.0"
    return host, port


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        parents=[connection_options(), target_options(), queue_options(), latency_options()],
        help="serve the queue's numbers as Prometheus metrics (/metrics)",
        description="Poll the queue every --interval seconds (default "
        f"{DEFAULT_EXPORT_INTERVAL_S:g} here) and serve the last "
        "snapshot as Prometheus / OpenMetrics metrics. With --targets FILE and no "
        "--target: every target of the file, each polled when Prometheus asks for "
        "/probe?target=NAME (--interval is then the scrape interval), and the exporter's "
        "own health at /metrics (docs/targets.md).",
    )
    p.add_argument(
        "--listen",
        type=listen_address,
        default=DEFAULT_LISTEN,
        metavar="HOST:PORT",
        help=f"where to serve /metrics (default {DEFAULT_LISTEN}; port 0: any "
        "free port, printed at start)",
    )
    p.add_argument(
        "--max-groups",
        type=group_limit,
        metavar="N",
        help="series for at most N groups per metric, the busiest; the rest summed into "
        "group '(other)' (default 50)",
    )
    p.set_defaults(handler=run_export, interval=DEFAULT_EXPORT_INTERVAL_S)


def group_limit(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if not 1 <= number <= MAX_GROUPS_LIMIT:
        raise argparse.ArgumentTypeError(
            f"expected a number of groups from 1 to {MAX_GROUPS_LIMIT}"
        )
    return number


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def run_export(args: argparse.Namespace) -> int:
    from dashboard.metrics.exporter import Exporter, is_connection_error, one_line, serve_metrics

    if getattr(args, "targets", None) and args.target is None:  # one exporter, many targets
        from dashboard.cli.export_targets import run_fleet

        return run_fleet(args)
    apply_target(args)
    spec = spec_from_args(args)  # bad TOML or preset fails before any connection
    target = db.resolve_target(args.dsn)
    limits = {} if args.max_groups is None else {"max_groups": args.max_groups}
    exporter = Exporter(target.dsn, spec, args.interval, **limits)
    failure = exporter.poll_once(log=False)
    if failure is not None and not is_connection_error(failure):
        exporter.close()  # a bad spec or a missing table: say so now, not on every poll
        raise failure if isinstance(failure, UserError) else UserError(one_line(failure))
    if failure is not None:  # a service may start before its database: serve up 0, retry
        exporter.log(
            f"poll failed (disconnected): {one_line(failure)}; serving queuetop_up 0 and retrying"
        )
    warn_password_in_dsn(args)  # it runs for days: its command line with it
    host, port = args.listen
    try:
        httpd = serve_metrics(exporter, host, port)
    except OSError as exc:
        exporter.close()
        raise UserError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; choose another --listen"
        ) from exc
    bound = httpd.server_address[1]
    shown = f"[{host}]" if ":" in host else host
    print(
        escape_controls(
            f"queuetop export: serving http://{shown}:{bound}/metrics for "
            f"{exporter.spec.table}, polling every {args.interval:g}s"
        ),
        flush=True,
    )
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)  # a service manager's stop: a clean exit
    stop = threading.Event()
    try:
        exporter.run(stop)
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        httpd.shutdown()
        httpd.server_close()
        exporter.close()
    print("queuetop export: stopped", file=sys.stderr)
    return 0
