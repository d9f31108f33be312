"""What an action returns: what changed, and what was skipped with its reason."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from dashboard.observed.records import typed_id

SESSION_ACTIONS = ("cancel", "terminate")


@dataclass(frozen=True)
class Skipped:
    id: str
    reason: str


@dataclass(frozen=True)
class ActionResult:
    """changed: ids (or pids) that changed; skipped: the others, each with its reason."""

    action: str
    changed: tuple[str, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    dry_run: bool = False
    detail: dict[str, Any] = field(default_factory=dict)
    # SQL type of the job id column: the type the ids take in JSON (pids are integers)
    id_type: str = "text"

    @property
    def ok(self) -> bool:
        """True when everything asked for changed (or would, in a dry run)."""
        return not self.skipped

    def with_skipped(self, extra: list[Skipped]) -> ActionResult:
        return replace(self, skipped=tuple(extra) + self.skipped)

    def as_dict(self) -> dict[str, Any]:
        kind = "integer" if self.action in SESSION_ACTIONS else self.id_type
        return {
            "action": self.action,
            "dry_run": self.dry_run,
            "changed": [typed_id(i, kind) for i in self.changed],
            "skipped": [{"id": typed_id(s.id, kind), "reason": s.reason} for s in self.skipped],
        }

    def to_json(self) -> str:
        return json.dumps(self.as_dict())

    def summary(self) -> str:
        """One or two lines for a terminal or a notification."""
        verb = {
            "requeue": "requeued",
            "dead-letter": "dead-lettered",
            "retry-dead": "retried from the dead-letter table",
            "cancel": "cancelled",
            "terminate": "terminated",
        }.get(self.action, self.action)
        what = "session(s)" if self.action in ("cancel", "terminate") else "job(s)"
        head = f"would be {verb}" if self.dry_run else verb
        lines = [
            f"{head}: {len(self.changed)} {what}"
            + (f" ({', '.join(self.changed)})" if self.changed else "")
        ]
        if self.skipped:
            lines.append(
                f"skipped: {len(self.skipped)} ("
                + ", ".join(f"{s.id}: {s.reason}" for s in self.skipped)
                + ")"
            )
        return "\n".join(lines)
