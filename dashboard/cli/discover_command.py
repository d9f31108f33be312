"""`queuetop discover [--json]`: the queues a database holds, each with its command."""

from __future__ import annotations

import argparse
import json
import os
import shlex

from dashboard import config, db, discover
from dashboard.cli.common import COLUMN_FLAGS, connection_options
from dashboard.cli.target_args import apply_target, target_options, target_words
from dashboard.discover.found import FoundQueue
from dashboard.models import ROLES
from dashboard.text.untrusted import escape_controls


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "discover",
        parents=[connection_options(), target_options()],
        help="list the queues in a database (library schemas and hand-rolled tables)",
    )
    p.add_argument("--json", action="store_true", help='print {"queues": [...]}')
    p.set_defaults(handler=run_discover)


def dsn_hint(args: argparse.Namespace) -> str | tuple[str, ...] | None:
    """Where the commands printed should connect: `--target NAME` for a target that names
    no queue (one that does refuses a queue flag), else the --dsn given without its
    password."""
    words = target_words(args)
    if words and not any(getattr(args, flag, None) for flag in ("queue", "preset", "table")):
        return words
    return db.safe_dsn(args.dsn) if getattr(args, "dsn", None) else None


def found_queues(args: argparse.Namespace) -> tuple[db.Target, list[FoundQueue]]:
    target = db.resolve_target(args.dsn)
    with db.connect_monitor(target.dsn) as conn:
        return target, discover.find_queues(conn)


def run_discover(args: argparse.Namespace) -> int:
    apply_target(args)
    _, found = found_queues(args)
    hint = dsn_hint(args)
    if args.json:
        print(json.dumps({"queues": [f.as_json(hint) for f in found]}, indent=2))
        return 0
    if not found:
        print("no queue found: no library schema queuetop knows, no table that looks like one")
        return 0
    for f in found:  # names and values come from the catalog: control characters escaped
        what = f.adapter or "understood"
        version = f" {f.version}" if f.version else ""
        print(escape_controls(f"{f.confidence:<6}  {f.table}  ({what}{version})"))
        print(f"        {escape_controls(f.command(hint))}")
        for reason in f.why:
            print(f"        - {escape_controls(reason)}")
        if f.understood is not None:
            for doubt in f.understood.doubts:
                print(f"        ? {escape_controls(doubt)}")
            if f.understood.pin_flags:
                pin = " ".join(shlex.quote(w) for w in f.understood.pin_flags)
                print(f"        pin: {escape_controls(pin)}")
    if not args.json and any(f.understood for f in found):
        print(
            "(the evidence for each mapping, and the same as a TOML: --json, or `queuetop "
            "snapshot --table T`)"
        )
    return 0


def given_dsn(args: argparse.Namespace) -> bool:
    """A DSN from --dsn, DATABASE_URL or the PG* variables (else: the embedded server)."""
    return bool(
        args.dsn or os.environ.get("DATABASE_URL") or any(os.environ.get(v) for v in db.PG_ENV_VARS)
    )


def shapes_spec(args: argparse.Namespace) -> bool:
    """A spec given (--queue, --preset, --table), or flags that shape the default one."""
    shaping = [args.queue, args.preset, args.table, args.id_column, args.status_column]
    shaping += [getattr(args, f"column_{key}", None) for key in COLUMN_FLAGS]
    shaping += [getattr(args, "ready_value", None), getattr(args, "dead_value", None)]
    shaping += [
        getattr(args, f"{kind}_{role}", None) for kind in ("values", "when") for role in ROLES
    ]
    return any(shaping)


def discovered(args: argparse.Namespace) -> list[FoundQueue] | None:
    """`watch` or `snapshot` with a DSN but no queue: the queues discovery would have them
    take (high or medium confidence), or None to keep the default (the demo preset)."""
    if shapes_spec(args):  # as before
        return None
    if getattr(args, "stale_after", None):  # bad input fails before anything connects
        config.parse_duration(args.stale_after, "--stale-after")
    if not given_dsn(args):  # the embedded server's demo queue, as before (not started here)
        return None
    target = db.resolve_target(args.dsn)
    with db.connect_monitor(target.dsn) as conn:
        found = discover.watchable(discover.find_queues(conn))
    return found or None


def spec_of(args: argparse.Namespace):
    """The spec of a discovered queue, with the user's --stale-after and column flags."""

    def build(found: FoundQueue):
        return discover.spec_for(found, stale_after=getattr(args, "stale_after", None))

    return build
