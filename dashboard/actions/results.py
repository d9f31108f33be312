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
    # what a job action writes: the state column, the states the changed jobs had, and
    # the exact value they get ('table:NAME' for a move to a dead-letter table)
    state_column: str = ""
    from_states: tuple[str, ...] = ()
    to_state: str = ""

    @property
    def writes(self) -> str:
        """'status: running -> queued' (what a confirmation and a dry run name), or
        'moved to app.jobs_dead'; '' for a session action."""
        if not self.to_state:
            return ""
        if self.to_state.startswith("table:"):
            return f"moved to {self.to_state.removeprefix('table:')}"
        froms = ", ".join(self.from_states)
        return f"{self.state_column}: {froms or '(none)'} -> {self.to_state}"

    def merged(self, other: ActionResult) -> ActionResult:
        """This result and the next batch's, as one."""
        froms = tuple(dict.fromkeys(self.from_states + other.from_states))
        return replace(
            self,
            action=other.action,
            dry_run=other.dry_run,
            changed=self.changed + other.changed,
            skipped=self.skipped + other.skipped,
            state_column=other.state_column or self.state_column,
            from_states=froms,
            to_state=other.to_state or self.to_state,
        )

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
        """A few lines for a terminal or a notification: what changed (or would), the value
        written, what was skipped and why."""
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
        if self.writes and self.changed:  # what was written, never for zero jobs
            lines.append(f"  {self.writes}")
        if self.skipped:
            lines.append(
                f"skipped: {len(self.skipped)} ("
                + ", ".join(f"{s.id}: {s.reason}" for s in self.skipped)
                + ")"
            )
        return "\n".join(lines)
