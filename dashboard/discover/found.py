"""What discovery finds: one queue table, how sure it is, and the command to watch it."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from dashboard.models import TableName, Understood

CONFIDENCE_ORDER = {"high": 0, "medium": 1, "low": 2}


@dataclass(frozen=True)
class FoundQueue:
    """A queue table in the catalog: a library's (adapter, version) or a hand-rolled one."""

    table: TableName
    confidence: str  # high, medium, low
    adapter: str | None = None  # the preset that maps it, None for a hand-rolled queue
    version: str | None = None  # the library release its schema marker stands for
    marker: str | None = None  # the marker as the library keeps it ("24", "19", "3")
    why: tuple[str, ...] = ()
    # the watch flags besides --dsn: ("--preset", "pg-boss") or ("--table", ..., ...)
    flags: tuple[str, ...] = ()
    # a table nobody described: how it was understood (its evidence, doubts and pins)
    understood: Understood | None = None

    def command(self, dsn_hint: str | tuple[str, ...] | None = None) -> str:
        """The exact `queuetop watch …` to run (the DSN without its password, or the
        flags naming a target: a tuple of words)."""
        words = ["queuetop", "watch", *self.flags]
        if isinstance(dsn_hint, tuple):
            words += dsn_hint
        elif dsn_hint:
            words += ["--dsn", dsn_hint]
        return " ".join(shlex.quote(w) for w in words)

    def as_json(self, dsn_hint: str | tuple[str, ...] | None = None) -> dict[str, object]:
        out: dict[str, object] = {
            "table": str(self.table),
            "adapter": self.adapter,
            "version": self.version,
            "confidence": self.confidence,
            "command": self.command(dsn_hint),
            "schema_marker": self.marker,
            "why": list(self.why),
        }
        u = self.understood
        if u is not None:
            out |= {
                "evidence": list(u.evidence),
                "doubts": list(u.doubts),
                "pin_flags": list(u.pin_flags),
                "pin_toml": u.pin_toml,
            }
        return out


def ordered(found: list[FoundQueue]) -> list[FoundQueue]:
    """Most certain first, then by table name."""
    return sorted(found, key=lambda f: (CONFIDENCE_ORDER[f.confidence], str(f.table)))
