"""`queuetop load`: run competing workers headless, print a live line and a summary."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time

from dashboard import actions, config, db
from dashboard.actions import AuditSink
from dashboard.cli.common import (
    checked,
    connection_options,
    queue_options,
    spec_from_args,
    text,
    warn_password_in_dsn,
)
from dashboard.errors import UserError
from dashboard.loadgen import STRATEGIES, LoadGenerator, LoadSettings, LoadSnapshot, summary
from dashboard.loadgen.rescuer import check_rescue
from dashboard.loadgen.settings import MAX_WORKERS
from dashboard.loadgen.stats import LATENCY_WINDOW_S
from dashboard.loadgen.table_counts import count_finished, table_change
from dashboard.models import QueueSpec, TableName
from dashboard.render.fit import fit_line
from dashboard.setup import schema
from dashboard.text import redact
from dashboard.text.untrusted import escape_controls, printable

DEMO_TABLE = TableName("jobs", "queuetop_demo")
DEFAULT_DURATION_S = 10.0
LIVE_EVERY_S = 0.5

AT_LEAST_ONE = checked(int, lambda n: n >= 1, "a whole number, 1 or more")
WORKER_COUNT = checked(int, lambda n: 1 <= n <= MAX_WORKERS, f"a whole number, 1 to {MAX_WORKERS}")
NOT_NEGATIVE_INT = checked(int, lambda n: n >= 0, "a whole number, 0 or more")
NOT_NEGATIVE = checked(float, lambda v: v >= 0, "a number, 0 or more")
POSITIVE_SECONDS = checked(float, lambda v: v > 0, "a number of seconds above 0")
PROBABILITY = checked(float, lambda v: 0 <= v <= 1, "a probability from 0 to 1")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "load",
        parents=[connection_options(), queue_options()],
        help="run competing workers against the demo queue (or a table you confirm)",
    )
    g = p.add_argument_group("load")
    g.add_argument("--workers", type=WORKER_COUNT, default=4, metavar="N", help="worker processes")
    g.add_argument("--strategy", choices=list(STRATEGIES), default="skip-locked")
    g.add_argument(
        "--duration",
        type=POSITIVE_SECONDS,
        metavar="S",
        help=f"stop after S seconds (default {DEFAULT_DURATION_S:g} without --jobs)",
    )
    g.add_argument(
        "--jobs",
        type=AT_LEAST_ONE,
        metavar="N",
        help="enqueue N jobs first and stop once N jobs are done or dead",
    )
    g.add_argument(
        "--rate",
        type=NOT_NEGATIVE,
        default=0.0,
        metavar="R",
        help="also enqueue R jobs per second while running",
    )
    g.add_argument(
        "--work-ms",
        type=NOT_NEGATIVE,
        default=20.0,
        metavar="MS",
        help="mean simulated work per job (lognormal)",
    )
    g.add_argument("--batch", type=AT_LEAST_ONE, default=1, metavar="K", help="jobs per claim")
    g.add_argument(
        "--hold-tx",
        action="store_true",
        help="work inside the claim transaction (the anti-pattern)",
    )
    g.add_argument(
        "--fail-rate",
        type=PROBABILITY,
        default=0.0,
        metavar="P",
        help="probability that a job fails (retried until max_attempts)",
    )
    g.add_argument(
        "--crash-rate",
        type=PROBABILITY,
        default=0.0,
        metavar="P",
        help="probability that a worker exits hard right after a claim",
    )
    g.add_argument("--lease", type=POSITIVE_SECONDS, default=30.0, metavar="S", help="lease length")
    g.add_argument("--payload-bytes", type=NOT_NEGATIVE_INT, default=64, metavar="B")
    g.add_argument(
        "--rescue",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="requeue expired leases, anyone's (each one guarded and audited like "
        "'queuetop requeue'); off by default: they stay for the recovery actions",
    )
    g.add_argument(
        "--audit-file",
        metavar="PATH",
        type=text("a file path"),
        help="with --rescue: append the audit trail to this JSON-lines file instead "
        "of the queuetop.audit_log table",
    )
    g.add_argument("--seed", type=int, help="random seed for work times and faults")
    g.add_argument(
        "--yes-write-to-my-table",
        dest="confirm_write",
        action="store_true",
        help="confirm that workers may claim, complete and fail rows of --table",
    )
    g.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(handler=run_load)


def settings_from_args(args: argparse.Namespace) -> LoadSettings:
    """The flags are range-checked by argparse; LoadSettings checks them once more."""
    return LoadSettings(
        workers=args.workers,
        strategy=args.strategy,
        batch=args.batch,
        work_ms=args.work_ms,
        hold_tx=args.hold_tx,
        fail_rate=args.fail_rate,
        crash_rate=args.crash_rate,
        lease_s=args.lease,
        prefill=args.jobs or 0,
        rate=args.rate,
        payload_bytes=args.payload_bytes,
        seed=args.seed,
    )


def open_writable_queue(args: argparse.Namespace) -> tuple[str, QueueSpec]:
    """The demo queue (created if absent), or a user table only with explicit confirmation."""
    spec = spec_from_args(args)
    target = db.resolve_target(args.dsn)
    if spec.table == DEMO_TABLE:
        schema.ensure_demo(target.dsn)  # no CREATE needed once it exists
    with db.connect_monitor(target.dsn) as conn:
        spec = config.validate(conn, spec)
    if spec.table != DEMO_TABLE and not args.confirm_write:
        raise UserError(
            f"queuetop load claims, completes and fails rows of {spec.table}; it writes only to "
            "the demo queue unless you pass --yes-write-to-my-table (never on production data)"
        )
    return target.dsn, spec


def rescue_audit(dsn: str, spec: QueueSpec, audit_file: str | None) -> AuditSink:
    """--rescue changes jobs the generator did not claim: refuse unless each change can be
    audited (the audit table, or --audit-file), as `queuetop requeue` does."""
    check_rescue(spec)
    with db.connect_action(dsn) as conn:
        try:
            return actions.choose_sink(conn, audit_file)
        except UserError as exc:
            raise UserError(
                f"--rescue audits each lease it requeues: {exc}; or run without --rescue"
            ) from None


def _rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def live_line(snap: LoadSnapshot, width: int | None = None) -> str:
    """The live line; with a terminal `width`, the least needed numbers leave first so it
    never wraps (a wrapped line redrawn with \\r leaves broken lines behind)."""
    t, lat = snap.totals, snap.recent_latency
    p95 = f"{lat.p95:.1f}ms" if lat.p95 is not None else "-"
    rescued = f"rescued {snap.rescued}" if snap.rescue else "rescue off"
    parts = [  # (text, rank): rank 0 always shows, the highest rank leaves first
        (f"{snap.elapsed_s:5.1f}s", 0),
        (f"workers {snap.live_workers}/{snap.target_workers}", 0),
        (f"done/s {_rate(snap.completions_per_s)}", 0),
        (f"claim p95 ({LATENCY_WINDOW_S:g}s) {p95}", 0),
        (f"double claims {snap.double_claims}", 0 if snap.double_claims else 2),
        (f"lock waits/s {_rate(snap.lock_waits_per_s)}", 1),
        (f"crashed {snap.crashed}", 1),
        (f"claims/s {_rate(snap.claims_per_s)}", 2),
        (f"done {t['completed']}", 3),
        (f"failed {t['failed']}", 3),
        (f"dead {t['dead']}", 3),
        (rescued, 3 if not snap.rescue else 2),
        (f"lock errors/s {_rate(snap.lock_errors_per_s)}", 2),
        (f"lock waits total {t['lock_waits']}", 3),
        (f"lock errors total {t['lock_errors']}", 3),
    ]
    if snap.reconnecting:  # who is down and why, before numbers that are stale meanwhile
        parts = parts[:2] + [(text, max(rank, 1)) for text, rank in parts[2:]]
        why = escape_controls(str(snap.connection_error))  # the server's words: escaped
        parts.insert(2, (f"RECONNECTING {len(snap.reconnecting)}: {why}", 0))
    line = fit_line(parts, None if width is None else width - 1)  # the last column wraps
    return line if width is None else line[: width - 1]


def terminal_width(stream) -> int | None:
    """The width of the terminal `stream` writes to, None when it is no terminal."""
    try:
        return os.get_terminal_size(stream.fileno()).columns if stream.isatty() else None
    except (OSError, ValueError, AttributeError):
        return None


def summary_text(doc: dict) -> str:
    lat = doc["claim_latency_ms"]

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.2f}"

    return "\n".join(
        [
            f"strategy {doc['strategy']}, {doc['workers']} workers, {doc['duration_s']:.1f}s",
            *([table_line(doc)] if "table_done" in doc else []),
            f"claimed {doc['claimed']}  completed {doc['completed']}  failed {doc['failed']}  "
            f"dead {doc['dead']}  crashed {doc['crashed']}  "
            + (
                f"rescued {doc['rescued']} (expired leases requeued, audited)"
                if doc["rescue"]
                else "rescue off"
            ),
            f"claims/s {doc['claims_per_s']}  completions/s {doc['completions_per_s']}",
            f"claim latency ms p50 {ms(lat['p50'])}  p95 {ms(lat['p95'])}  p99 {ms(lat['p99'])}",
            f"lock waits {doc['lock_waits']} in all ({doc['lock_waits_per_s']}/s)  "
            f"lock errors {doc['lock_errors']} in all ({doc['lock_errors_per_s']}/s: "
            + ", ".join(f"{kind} {n}" for kind, n in doc["lock_errors_by_kind"].items())
            + ")",
            f"empty claims {doc['empty_claims']}  double claims {doc['double_claims']}",
        ]
    )


def table_line(doc: dict) -> str:
    """What the table itself says the run finished: the workers' count is a lower bound."""
    if doc["table_done"] is None:
        return "table: not counted (the count timed out or was refused)"
    line = f"table: done +{doc['table_done']}  dead +{doc['table_dead']} during the run"
    if doc["table_done"] > doc["completed"]:
        line += (
            f" (the workers reported {doc['completed']} completed: a worker killed before "
            "it reported took its last ones with it)"
        )
    return line


def finished(snap: LoadSnapshot, jobs: int | None, duration: float | None) -> bool:
    if jobs is not None and snap.totals["completed"] + snap.totals["dead"] >= jobs:
        return True
    return duration is not None and snap.elapsed_s >= duration


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _stop_on_sigterm() -> None:
    """`kill` stops the run like Ctrl-C: workers release their jobs and a summary prints."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)


def run_load(args: argparse.Namespace) -> int:
    if args.audit_file and not args.rescue:
        raise UserError(
            "--audit-file is the audit trail of --rescue (the leases it requeues); "
            "add --rescue or drop --audit-file"
        )
    settings = settings_from_args(args)
    dsn, spec = open_writable_queue(args)
    warn_password_in_dsn(args)
    duration = args.duration if args.duration is not None or args.jobs else DEFAULT_DURATION_S
    tty = sys.stderr.isatty()
    audit = rescue_audit(dsn, spec, args.audit_file) if args.rescue else None
    if not args.jobs and not args.rate:  # a first run on the empty demo queue shows only 0s
        print(
            "queuetop load: note: no --jobs and no --rate, so the workers only claim jobs "
            "already in the queue",
            file=sys.stderr,
        )
    before = count_finished(dsn, spec)
    gen = LoadGenerator(dsn, spec, settings, rescue=audit)
    _stop_on_sigterm()
    gen.start()
    last_print = 0.0
    try:
        while gen.running:
            snap = gen.stats()
            if snap.errors and not snap.live_workers and not snap.reconnecting:
                break
            if finished(snap, args.jobs, duration):
                break
            if time.monotonic() - last_print >= (LIVE_EVERY_S if tty else 2.0):
                # on a terminal: one line redrawn in place, as wide as the terminal is now
                # (a resize too), the rest of the old line cleared
                line = live_line(snap, terminal_width(sys.stderr)) if tty else live_line(snap)
                print(
                    ("\r" + line + "\x1b[K") if tty else line,
                    end="" if tty else "\n",
                    file=sys.stderr,
                    flush=True,
                )
                last_print = time.monotonic()
            time.sleep(0.1)
    except KeyboardInterrupt:
        pass
    finally:
        gen.stop()
        gen.wait()
        if tty:
            print(file=sys.stderr)
    snap = gen.stats()
    if snap.errors and not snap.totals["claimed"]:
        raise UserError(escape_controls(snap.errors[0]))
    doc = {
        **summary(snap, settings.strategy, settings.workers),
        **table_change(before, count_finished(dsn, spec)),
    }
    print(json.dumps(doc) if args.json else printable(summary_text(doc)))
    for error in snap.errors:  # a worker's error may quote the server: escaped
        print(printable(f"queuetop: warning: {redact.scrub(error)}"), file=sys.stderr)
    return 1 if snap.double_claims else 0
