"""The flight recorder: snapshots and audit records into one SQLite file, read back.

    writer = RecordingWriter(path, spec, interval, retain_s=…, max_bytes=…)
    Recorder(writer, AuditFollower(dsn, audit_file, started)).record(snap)
    rec = Recording(path); rec.snapshot(rec.frame_at(t))

Below the UI and the command line, above the monitor; it never imports textual, so a
recording is made headless (`queuetop record`) and read by replay and incident alike.
"""

from dashboard.recorder.reader import Bounds, Recording
from dashboard.recorder.recorder import BackgroundRecorder, Recorder
from dashboard.recorder.writer import RecordingWriter

__all__ = ["BackgroundRecorder", "Bounds", "Recorder", "Recording", "RecordingWriter"]
