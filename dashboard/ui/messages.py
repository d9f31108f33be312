"""Messages posted by the poll worker to the app."""

from __future__ import annotations

from textual.message import Message

from dashboard.models import Snapshot


class SnapshotReady(Message):
    """A poll finished with a snapshot."""

    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__()
        self.snapshot = snapshot


class PollFailed(Message):
    """A poll failed: `kind` is what the header says (disconnected, timed out, error)."""

    def __init__(self, reason: str, kind: str = "disconnected") -> None:
        super().__init__()
        self.reason = reason
        self.kind = kind
