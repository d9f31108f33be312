"""`queuetop presets [--preset NAME] [--json]`: the adapters and presets, with what each maps
and supports (one of them with --preset)."""

from __future__ import annotations

import argparse
import json

from dashboard import config
from dashboard.config import versions
from dashboard.errors import UserError
from dashboard.models import QueueSpec
from dashboard.text.untrusted import printable

# What each preset's [about] table says, in this order.
ABOUT_KEYS = ("library", "tested", "state", "liveness", "recovery")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("presets", help="list the library adapters and presets (--preset NAME)")
    p.add_argument("--preset", metavar="NAME", help="only this preset")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.set_defaults(handler=run_presets)


def describe(name: str) -> dict[str, object]:
    spec: QueueSpec = config.load_preset(name)
    about = config.preset_about(name)
    return {
        "preset": name,
        "table": str(spec.table),
        **{key: about.get(key, "") for key in ABOUT_KEYS},
        "roles": {role: list(spec.values(role)) for role in spec.roles if spec.values(role)},
        "group": str(spec.columns.group) if spec.columns.group else None,
        # the liveness limit in force and where it comes from (--stale-after changes it)
        "threshold": {
            "signal": spec.threshold.signal,
            "seconds": spec.threshold.seconds,
            "source": spec.threshold.source,
            "text": spec.threshold.describe(),
        },
        "versions": versions.supported_text(spec, about),
    }


def run_presets(args: argparse.Namespace) -> int:
    names = config.preset_names()
    if args.preset is not None:
        if args.preset not in names:
            raise UserError(
                f"presets: no preset named {args.preset!r}; the presets are {', '.join(names)}"
            )
        names = [args.preset]
    rows = [describe(name) for name in names]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    lines = []
    for row in rows:
        library = row["library"] or "(a table of its own)"
        tested = f" {row['tested']}" if row["tested"] else ""
        lines.append(f"{row['preset']}: {library}{tested}, table {row['table']}")
        for key in ("state", "liveness", "recovery"):
            if row[key]:
                lines.append(f"    {key:<9} {row[key]}")
        lines.append(f"    {'threshold':<9} {row['threshold']['text']}")
        if row["versions"]:
            lines.append(f"    {'versions':<9} {row['versions']}")
    print(printable("\n".join(lines)))  # the specs' words, shown as every spec text is
    return 0
