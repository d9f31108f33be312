"""Selecting jobs for `requeue` and `dead-letter` without listing ids: the runbook options.

queuetop requeue --all-stale --older-than 10m --worker w-3 --limit 500 --dry-run
queuetop dead-letter --state failed --older-than 7d --reason "gave up after the outage"
"""

from __future__ import annotations

import argparse
import sys

from dashboard import config
from dashboard.actions import runbook
from dashboard.actions.results import ActionResult
from dashboard.cli.common import checked, text
from dashboard.errors import UserError
from dashboard.models import QueueSpec

POSITIVE = checked(int, lambda n: n >= 1, "a whole number, 1 or more")
BATCH = checked(
    int, lambda n: 1 <= n <= runbook.MAX_BATCH, f"a whole number from 1 to {runbook.MAX_BATCH:,}"
)


def selection_options() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group(
        "select jobs instead of listing ids (acted on batch by batch, each its own transaction)"
    )
    group.add_argument(
        "--all-stale", action="store_true", help="every stale lease: running jobs past their lease"
    )
    group.add_argument(
        "--state",
        type=text("a role or state value"),
        metavar="ROLE",
        help="every job of a role (e.g. failed) or of one raw state value; "
        "running jobs only once stale unless --force",
    )
    group.add_argument(
        "--older-than",
        type=text("a duration"),
        metavar="DURATION",
        help="only jobs older than this (e.g. 30m, 7d): stale leases by their "
        "lease expiry, others by their last claim, due or enqueue time",
    )
    group.add_argument(
        "--worker", type=text("a worker name"), metavar="NAME", help="only the jobs of this worker"
    )
    group.add_argument(
        "--group",
        type=text("a group name"),
        metavar="NAME",
        help="only the jobs of this group (queue)",
    )
    group.add_argument("--limit", type=POSITIVE, metavar="N", help="at most N jobs in all")
    group.add_argument(
        "--batch-size",
        type=BATCH,
        default=runbook.DEFAULT_BATCH,
        metavar="N",
        help=f"jobs per transaction (default {runbook.DEFAULT_BATCH})",
    )
    return parent


def _selects(args: argparse.Namespace) -> bool:
    return bool(args.all_stale or args.state)


def check_ids_or_selection(args: argparse.Namespace) -> None:
    """Ids, or --all-stale / --state; the filters only with a selection. One line if not."""
    filters = [
        f
        for f, v in (
            ("--older-than", args.older_than),
            ("--worker", args.worker),
            ("--group", args.group),
            ("--limit", args.limit),
        )
        if v
    ]
    if args.ids and _selects(args):
        raise UserError("give job ids or a selection (--all-stale, --state), not both")
    if args.all_stale and args.state:
        raise UserError("--all-stale is --state running past its lease: give one of them")
    if filters and not _selects(args):
        verb = "filters" if len(filters) == 1 else "filter"
        raise UserError(f"{', '.join(filters)} {verb} a selection: add --all-stale or --state")
    if not args.ids and not _selects(args):
        raise UserError(
            "give job ids, or select jobs with --all-stale or --state ROLE (see --help)"
        )


def selection(args: argparse.Namespace, spec: QueueSpec, action: str) -> runbook.Selection | None:
    """The runbook selection the flags describe, or None when ids were given."""
    if not _selects(args):
        return None
    values = runbook.selection_values(spec, "running" if args.all_stale else args.state, action)
    running = set(spec.values("running"))
    stale_only = bool(args.all_stale or (set(values) <= running and not args.force))
    older = config.parse_duration(args.older_than, "--older-than") if args.older_than else None
    return runbook.Selection(
        values=values,
        stale_only=stale_only,
        older_than_s=older,
        worker=args.worker,
        group=args.group,
        limit=args.limit,
        batch_size=args.batch_size,
    )


def batch_line(n: int, result: ActionResult) -> None:
    """Progress on stderr (stdout keeps the summary or the JSON)."""
    verb = "would change" if result.dry_run else "changed"
    print(
        f"batch {n}: {verb} {len(result.changed)}, skipped {len(result.skipped)}", file=sys.stderr
    )
