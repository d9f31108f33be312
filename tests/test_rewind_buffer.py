"""The rewind's buffer (recorder/rewind.py): the last span of snapshots within a byte cap, read
back through a saved recording (the reader `queuetop replay` uses) as the very snapshots
given; saving never writes over a file unasked, nor over anything but a recording of ours."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import timedelta

import pytest
from ui_snapshots import T0, demo_spec, fixed_snapshot

from dashboard.errors import UserError
from dashboard.recorder import Recording, RecordingWriter, store
from dashboard.recorder.rewind import FRAME_OVERHEAD, RewindBuffer, save


def snapshot(i: int, rows: int = 3):
    return replace(fixed_snapshot(i % 40, rows=rows), taken_at=T0 + timedelta(seconds=i))


def read_back(tmp_path, buffer: RewindBuffer, name: str = "r.qtr") -> list:
    """What the buffer holds, saved and read by the recording reader."""
    return read(save(tmp_path / name, demo_spec(), 1.0, buffer.frames()))


def read(path) -> list:
    """Every snapshot of a recording, as `queuetop replay` reads them."""
    recording = Recording(path)
    try:
        bounds = recording.bounds()
        return list(recording.snapshots(bounds.first_id, bounds.last_id))
    finally:
        recording.close()


def file_bytes(path) -> tuple[int, int]:
    """(frames, bytes of frame data) as the file holds them."""
    with sqlite3.connect(path) as conn:
        return conn.execute(
            "SELECT count(*), coalesce(sum(length(data)), 0) FROM frames"
        ).fetchone()


def test_frames_older_than_the_span_are_dropped(tmp_path):
    span = 60
    buffer = RewindBuffer(span)
    snaps = [snapshot(i) for i in range(300)]  # one a second: five minutes
    for n, snap in enumerate(snaps):
        buffer.keep(snap)
        shown = buffer.frames()
        assert shown[0].at == snaps[max(0, n - span)].taken_at.timestamp()
        assert shown[0].kind == store.FULL  # readable on its own
        # besides the span, at most one run of a whole frame and its deltas is held
        assert buffer.held_frames <= span + 1 + buffer.keyframe_every - 1
    assert read_back(tmp_path, buffer) == snaps[-span - 1 :]


def test_the_byte_cap_holds_and_keeps_the_newest_frames(tmp_path):
    cap = 40_000
    buffer = RewindBuffer(3600, max_bytes=cap)
    snaps = [snapshot(i) for i in range(400)]
    for snap in snaps:
        buffer.keep(snap)
        frames = buffer.frames()
        assert sum(len(f.data) + FRAME_OVERHEAD for f in frames) <= cap
        assert buffer.held_bytes <= cap
    kept = read_back(tmp_path, buffer)
    assert 10 < len(kept) < 400 and kept == snaps[-len(kept) :]  # the newest, in order
    count, data = file_bytes(tmp_path / "r.qtr")
    assert count == len(kept) and data + count * FRAME_OVERHEAD <= cap


def test_a_frame_larger_than_the_cap_alone_is_not_held(tmp_path):
    small = snapshot(0)
    big = replace(fixed_snapshot(1, rows=3000), taken_at=T0 + timedelta(seconds=1))
    probe = RewindBuffer(3600)
    probe.keep(small)
    probe.keep(big)
    big_size = len(probe.frames()[-1].data)
    buffer = RewindBuffer(3600, max_bytes=big_size // 2)
    buffer.keep(small)
    buffer.keep(big)  # over the cap alone: nothing held, said
    assert buffer.frames() == [] and buffer.held_bytes == 0
    assert buffer.stats.too_big == 1
    after = [snapshot(i) for i in range(2, 6)]
    for snap in after:
        buffer.keep(snap)
    assert read_back(tmp_path, buffer) == after  # whole again from the next frame


def test_the_buffers_thread_encodes_what_add_queued(tmp_path):
    buffer = RewindBuffer(900)
    snaps = [snapshot(i) for i in range(12)]  # fewer than its queue holds
    for snap in snaps:
        buffer.add(snap)
    buffer.close()
    assert buffer.stats.frames == 12 and buffer.stats.dropped == 0
    assert read_back(tmp_path, buffer) == snaps


def test_saving_never_writes_over_a_file_unasked(tmp_path):
    buffer = RewindBuffer(900)
    for i in range(5):
        buffer.keep(snapshot(i))
    frames = buffer.frames()
    taken = tmp_path / "taken.qtr"
    taken.write_text("someone's notes")
    with pytest.raises(UserError, match="exists"):
        save(taken, demo_spec(), 1.0, frames)
    with pytest.raises(UserError, match="not a queuetop recording"):
        save(taken, demo_spec(), 1.0, frames, replace=True)  # not a recording: never replaced
    assert taken.read_text() == "someone's notes"
    link = tmp_path / "link.qtr"
    link.symlink_to(tmp_path / "elsewhere.qtr")
    with pytest.raises(UserError, match="symbolic link"):
        save(link, demo_spec(), 1.0, frames, replace=True)
    assert not (tmp_path / "elsewhere.qtr").exists()
    with pytest.raises(UserError, match="directory"):
        save(tmp_path, demo_spec(), 1.0, frames)
    ours = tmp_path / "ours.qtr"
    writer = RecordingWriter(ours, demo_spec(), 1.0)
    writer.write(snapshot(100))
    writer.close()
    save(ours, demo_spec(), 1.0, frames, replace=True)  # a recording of ours, once asked
    assert read(ours) == [snapshot(i) for i in range(5)]
    assert read_back(tmp_path, buffer, "copy.qtr") == [snapshot(i) for i in range(5)]
    # no temporary file left (a reader leaves its -wal, empty, and -shm: SQLite's)
    leftovers = {p.name for p in tmp_path.iterdir() if not p.name.endswith(("-wal", "-shm"))}
    assert leftovers == {"taken.qtr", "link.qtr", "ours.qtr", "copy.qtr"}
    save(ours, demo_spec(), 1.0, frames[:2], replace=True)  # again, once it was replayed
    assert read(ours) == [snapshot(0), snapshot(1)]
    writer = RecordingWriter(ours, demo_spec(), 1.0)  # a recorder writing to it now
    writer.write(snapshot(200))
    with pytest.raises(UserError, match="-wal log"):
        save(ours, demo_spec(), 1.0, frames, replace=True)
    writer.close()
