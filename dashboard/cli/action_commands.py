"""`queuetop requeue|dead-letter ID...` (or a selection, batch by batch), `queuetop retry-dead
ID...` and `queuetop cancel|terminate PID`: guarded, audited.

The CLI's observed state is what it reads just before acting (for a runbook,
that is what the operator "saw"); the action then changes only what still
matches. Exit 0 when everything asked for changed, 1 when something was
skipped, 2 on error.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import replace
from datetime import datetime

from dashboard import actions, config, db
from dashboard.actions import ActionResult, Skipped, dead_letters, runbook, writes
from dashboard.cli.bulk_options import (
    batch_line,
    check_ids_or_selection,
    selection,
    selection_options,
)
from dashboard.cli.common import (
    checked,
    connection_options,
    queue_options,
    recovery_options,
    spec_from_args,
    text,
)
from dashboard.cli.target_args import apply_target, target_options
from dashboard.errors import UserError
from dashboard.text.untrusted import printable

EXIT_SKIPPED = 1


def _action_options(reason_required: bool = False) -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("action")
    group.add_argument(
        "--reason",
        required=reason_required,
        metavar="TEXT",
        type=text("a reason"),
        help="why: kept in the audit trail" + (" (required)" if reason_required else ""),
    )
    group.add_argument(
        "--dry-run", action="store_true", help="show what would change, change nothing"
    )
    group.add_argument(
        "--json",
        action="store_true",
        help='print {"action", "changed": [...], "skipped": [{"id", "reason"}]}',
    )
    return parent


def register(sub: argparse._SubParsersAction) -> None:
    conn_opts, queue_opts, recovery = connection_options(), queue_options(), recovery_options()
    targets = target_options()
    bulk = selection_options()
    p = sub.add_parser(
        "requeue",
        parents=[conn_opts, targets, queue_opts, _action_options(), bulk, recovery],
        help="put stuck jobs back to ready (guarded, audited)",
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="job ids (or select with --all-stale)")
    p.add_argument(
        "--force",
        action="store_true",
        help="requeue even if the lease has not expired (nothing else is lifted)",
    )
    p.set_defaults(handler=run_requeue)

    p = sub.add_parser(
        "dead-letter",
        parents=[conn_opts, targets, queue_opts, _action_options(True), bulk, recovery],
        help="move jobs to the dead-letter state or table (guarded, audited)",
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="job ids (or select with --state)")
    p.add_argument(
        "--force",
        action="store_true",
        help="dead-letter a running job even if its lease has not expired",
    )
    p.set_defaults(handler=run_dead_letter)

    p = sub.add_parser(
        "retry-dead",
        parents=[conn_opts, targets, queue_opts, _action_options(), recovery],
        help="move jobs back from the dead-letter table into the queue as ready (guarded, audited)",
    )
    p.add_argument("ids", nargs="+", metavar="ID", help="job ids in the dead-letter table")
    p.set_defaults(handler=run_retry_dead)

    for name, what in (
        ("cancel", "cancel a backend's current query"),
        ("terminate", "end a backend; its open transaction rolls back"),
    ):
        p = sub.add_parser(
            name,
            parents=[conn_opts, targets, _action_options(), recovery],
            help=f"{what} (guarded against pid reuse, audited)",
        )
        p.add_argument(
            "pid",
            type=checked(int, lambda n: n >= 1, "a backend pid (1 or more)"),
            metavar="PID",
            help="backend pid",
        )
        p.add_argument(
            "--backend-start",
            metavar="TIMESTAMP",
            type=text("a timestamp"),
            help="the backend start you observed (pg_stat_activity.backend_start); "
            "the signal is sent only if it still matches",
        )
        p.set_defaults(handler=run_signal, action=name)


def _refuse_read_only(args: argparse.Namespace, action: str) -> None:
    if args.read_only:
        raise UserError(
            f"read-only mode: {action} is disabled; run without --read-only to change anything"
        )


def _report(result: ActionResult, args: argparse.Namespace) -> int:
    # ids and skip reasons come from the table: escaped (the JSON keeps the exact text)
    print(result.to_json() if args.json else printable(result.summary()))
    return 0 if result.ok else EXIT_SKIPPED


def run_requeue(args: argparse.Namespace) -> int:
    return _run_jobs(args, "requeue")


def run_dead_letter(args: argparse.Namespace) -> int:
    return _run_jobs(args, "dead-letter")


def _run_jobs(args: argparse.Namespace, action: str) -> int:
    apply_target(args)
    _refuse_read_only(args, action)
    check_ids_or_selection(args)
    spec = spec_from_args(args)
    target = db.resolve_target(args.dsn)
    with db.connect_action(target.dsn) as conn:
        spec = config.validate(conn, spec)
        # the exact state value it writes, before anything changes: a guess is refused
        spec = writes.resolve(conn, spec, action)
        conn.commit()
        chosen = selection(args, spec, action)
        actions.require_grants(conn, spec, action, args.audit_file)  # all at once
        sink = actions.choose_sink(conn, args.audit_file)

        def act(observed) -> ActionResult:
            if action == "requeue":
                return actions.requeue(
                    conn,
                    spec,
                    observed,
                    audit=sink,
                    force=args.force,
                    reason=args.reason,
                    dry_run=args.dry_run,
                )
            return actions.dead_letter(
                conn,
                spec,
                observed,
                audit=sink,
                force=args.force,
                reason=args.reason,
                dry_run=args.dry_run,
            )

        if chosen is not None:
            result = runbook.run_batches(
                conn, spec, chosen, act, batch_line, action, dry_run=args.dry_run
            )
            if not result.changed and not result.skipped:
                print(printable(f"no job matches: {chosen.describe()}"), file=sys.stderr)
            return _report(result, args)
        observed, missing = actions.observe_jobs(conn, spec, args.ids)
        result = act(observed)
    return _report(result.with_skipped(missing), args)


def run_retry_dead(args: argparse.Namespace) -> int:
    apply_target(args)
    _refuse_read_only(args, "retry-dead")
    spec = spec_from_args(args)
    target = db.resolve_target(args.dsn)
    with db.connect_action(target.dsn) as conn:
        spec = writes.resolve(conn, config.validate(conn, spec), "retry-dead")
        conn.commit()
        actions.require_grants(conn, spec, "retry-dead", args.audit_file)  # all at once
        sink = actions.choose_sink(conn, args.audit_file)
        observed, missing = dead_letters.observe_dead(conn, spec, args.ids)
        result = dead_letters.retry_dead(
            conn, spec, observed, audit=sink, reason=args.reason, dry_run=args.dry_run
        )
    return _report(result.with_skipped(missing), args)


def parse_timestamp(text: str) -> datetime:
    """An ISO timestamp with a time zone, as psql prints it ('2026-01-02 03:04:05.6+00')."""
    fixed = re.sub(r"([+-]\d\d)$", r"\1:00", text.strip().replace("Z", "+00:00"))
    try:
        value = datetime.fromisoformat(fixed)
    except ValueError:
        value = None
    if value is None or value.tzinfo is None:
        raise UserError(
            f"bad --backend-start {text!r}: give it as pg_stat_activity shows it, "
            "with its time zone, e.g. '2026-01-02 03:04:05.123456+00'"
        )
    return value


def run_signal(args: argparse.Namespace) -> int:
    apply_target(args)
    _refuse_read_only(args, args.action)
    pinned = parse_timestamp(args.backend_start) if args.backend_start else None
    target = db.resolve_target(args.dsn)
    with db.connect_action(target.dsn) as conn:
        actions.require_grants(conn, None, args.action, args.audit_file, pid=args.pid)
        sink = actions.choose_sink(conn, args.audit_file)
        seen = actions.observe_session(conn, args.pid)
        if seen is None:
            result = ActionResult(
                args.action, skipped=(Skipped(str(args.pid), "session gone"),), dry_run=args.dry_run
            )
        else:
            seen = replace(seen, backend_start=pinned) if pinned else seen
            signal = actions.cancel if args.action == "cancel" else actions.terminate
            result = signal(conn, seen, audit=sink, reason=args.reason, dry_run=args.dry_run)
    return _report(result, args)
