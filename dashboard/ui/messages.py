"""Messages the app's thread workers post to it; the app has one handler for each.

SnapshotReady and PollFailed come from a snapshot source (the Poller, or anything
that replays frames); the others from the recovery controller's workers.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.message import Message

from dashboard.actions import ActionResult, ObservedJob, Skipped
from dashboard.models import QueueSpec, Snapshot


class SnapshotReady(Message):
    """A poll (or a replayed frame) brought a snapshot."""

    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__()
        self.snapshot = snapshot


class PollFailed(Message):
    """A poll failed: `kind` is what the header says (disconnected, timed out, error)."""

    def __init__(self, reason: str, kind: str = "disconnected") -> None:
        super().__init__()
        self.reason = reason
        self.kind = kind


class CapabilitiesReady(Message):
    """Which actions this role may take: action -> None, or why not; `spec` the queue's
    spec with the state values its actions write named (None: as it was)."""

    def __init__(
        self, reasons: dict[str, str | None], failed: bool = False, spec: QueueSpec | None = None
    ) -> None:
        super().__init__()
        self.reasons = reasons
        self.failed = failed
        self.spec = spec


class RecoveryDone(Message):
    def __init__(self, result: ActionResult) -> None:
        super().__init__()
        self.result = result


class RecoveryFailed(Message):
    """`what` failed (an action's name, or 'look-up'), for `reason`."""

    def __init__(self, what: str, reason: str) -> None:
        super().__init__()
        self.what = what
        self.reason = reason


class LookupRefused(Message):
    """The server refused an id the look-up dialog could not check: ask again."""

    def __init__(self, value: str, reason: str) -> None:
        super().__init__()
        self.value = value
        self.reason = reason


class JobsObserved(Message):
    """Jobs looked up by id: found in the queue, not found, found in the dead-letter table."""

    def __init__(
        self,
        jobs: Sequence[ObservedJob],
        missing: Sequence[Skipped],
        dead: Sequence[ObservedJob] = (),
    ) -> None:
        super().__init__()
        self.jobs = list(jobs)
        self.missing = list(missing)
        self.dead = list(dead)  # offered a retry
