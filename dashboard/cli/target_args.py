"""`--targets FILE` and `--target NAME`: a command aimed at a target the targets file names.

    parents=[connection_options(), target_options(), queue_options()]
    ...
    apply_target(args)   # before spec_from_args / open_queue: fills dsn, preset, table...

A target gives the connection and, where it names one, the queue; the command's own flags
may not say it again (`--target prod --dsn ...` is refused: which one was meant?).
"""

from __future__ import annotations

import argparse
from typing import Any

from dashboard.cli.common import text
from dashboard.config import targets
from dashboard.errors import UserError

QUEUE_FLAGS = ("queue", "preset", "table")


def add_targets_file(group: Any) -> None:
    """`--targets FILE` on `group` (a parser or its argument group), the targets file: one
    definition for every command that reads it (`watch` adds its own `--target`, which
    may repeat)."""
    group.add_argument(
        "--targets",
        metavar="FILE",
        type=text("a TOML file"),
        help="the targets file (default: ~/.config/queuetop/targets.toml)",
    )


def target_options() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("named targets (docs/targets.md)")
    add_targets_file(group)
    group.add_argument(
        "--target",
        metavar="NAME",
        type=text("a target name"),
        help="the target of the targets file to connect to (its queue too, where it names one)",
    )
    return parent


def apply_target(args: argparse.Namespace) -> targets.NamedTarget | None:
    """Fill args from the target `--target` names (None where none is named).

    Everything is refused before any connection: a missing or unreadable file, an unknown
    name, a password in a file others can read, `--target` with `--dsn`, and `--targets`
    without `--target` (which target was meant? the command would else connect elsewhere).
    """
    name = getattr(args, "target", None)
    if name is None:
        if getattr(args, "targets", None):
            found = targets.load(args.targets)
            raise UserError(
                f"--targets names the file, not a target: add --target NAME (it has: "
                f"{', '.join(found)})"
            )
        return None
    if getattr(args, "dsn", None):
        raise UserError("give --target or --dsn, not both: the target names its database")
    target = targets.pick(targets.load(getattr(args, "targets", None)), name)
    fill(args, target)
    return target


def fill(args: argparse.Namespace, target: targets.NamedTarget) -> None:
    """args as the command line would give them for `target`: its DSN, its queue (where it
    names one, and then no queue flag of the command's own), its stale_after (unless
    --stale-after was given)."""
    args.dsn = target.dsn
    if target.has_queue:
        given = [f"--{flag}" for flag in QUEUE_FLAGS if getattr(args, flag, None)]
        if given:
            raise UserError(
                f"target {target.name!r} names its queue; drop {given[0]} (or name a "
                "target without a queue)"
            )
        args.queue = str(target.queue) if target.queue else None
        args.preset = target.preset
        args.table = target.table
    if target.stale_after and not getattr(args, "stale_after", None):
        args.stale_after = target.stale_after


def target_words(args: argparse.Namespace) -> tuple[str, ...]:
    """The flags that name the target again (for a command printed to run next), or ()."""
    name = getattr(args, "target", None)
    if name is None:
        return ()
    where = ("--targets", args.targets) if getattr(args, "targets", None) else ()
    return (*where, "--target", name)
