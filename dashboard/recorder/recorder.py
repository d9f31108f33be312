"""A recorder: snapshots and the audit trail into one recording.

`Recorder.record(snap)` is for a loop that polls (queuetop record): it writes the frame,
then reads the audit trail if it is due. `BackgroundRecorder` is for the dashboard (watch
--record): `add(snap)` only queues the snapshot, and a thread of its own writes it and
follows the audit trail, so the screen never waits for the disk.
"""

from __future__ import annotations

import queue
import threading

from dashboard.errors import UserError
from dashboard.models import Snapshot
from dashboard.recorder.audit_follow import FOLLOW_EVERY_S, AuditFollower
from dashboard.recorder.writer import RecordingWriter

QUEUE_LIMIT = 16  # snapshots waiting for the disk; beyond it the newest is dropped (counted)


class Recorder:
    def __init__(self, writer: RecordingWriter, follower: AuditFollower | None = None):
        self.writer = writer
        self.follower = follower

    def record(self, snap: Snapshot) -> None:
        self.writer.write(snap)
        self.follow()

    def follow(self) -> None:
        """Read the audit trail if its turn has come (never part of a poll)."""
        if self.follower is not None and self.follower.due():
            self.writer.add_audit(self.follower.read())

    def close(self) -> None:
        try:
            if self.follower is not None:  # the actions of the last seconds too
                self.writer.add_audit(self.follower.read())
                self.follower.close()
        finally:
            self.writer.close()


class BackgroundRecorder:
    """A Recorder on a thread of its own, fed by add() from any thread."""

    def __init__(self, recorder: Recorder):
        self.recorder = recorder
        self.dropped = 0
        self.error: BaseException | None = None
        self._queue: queue.Queue[Snapshot | None] = queue.Queue(QUEUE_LIMIT)
        self._thread = threading.Thread(target=self._run, name="queuetop-recorder", daemon=True)
        self._thread.start()

    def add(self, snap: Snapshot) -> None:
        try:
            self._queue.put_nowait(snap)
        except queue.Full:  # the disk is slower than the polls: keep the screen going
            self.dropped += 1

    def _run(self) -> None:
        follower = self.recorder.follower
        every = follower.every_s if follower is not None else FOLLOW_EVERY_S
        while True:
            try:
                snap = self._queue.get(timeout=every)
            except queue.Empty:
                snap = False  # no frame: the audit trail's turn still comes
            if snap is None:
                return
            try:
                if snap is not False:
                    self.recorder.writer.write(snap)
                self.recorder.follow()
            except Exception as exc:  # a full disk: recording stops, the dashboard goes on
                self.error = exc
                return

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued, then close the file; a recording that stopped on an error
        says so now, in one line."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join(timeout)
        self.recorder.close()
        if self.error is not None:
            raise UserError(
                f"recording to {self.recorder.writer.path} stopped after "
                f"{self.recorder.writer.stats.frames} frames: {self.error}"
            )
