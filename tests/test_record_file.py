"""The recording file itself, read with sqlite3 as ground truth: one row per frame, full
frames at the fixed period, WAL, retention dropping the oldest frames, a reader opening the
file while it grows, a newer format refused in one line."""

from __future__ import annotations

import sqlite3
import zlib
from dataclasses import replace
from datetime import timedelta

import pytest
from ui_snapshots import T0, demo_spec, fixed_snapshot

from dashboard.errors import UserError
from dashboard.recorder import Recording, RecordingWriter, codec, delta, store
from dashboard.recorder import frames as frames_module


def frames(n: int, rows: int = 6, every_s: float = 1.0):
    return [
        replace(fixed_snapshot(i, rows=rows), taken_at=T0 + timedelta(seconds=every_s * i))
        for i in range(n)
    ]


def rows(path) -> list[tuple[int, float, int, int]]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT id, at, kind, length(data) FROM frames ORDER BY id").fetchall()


def test_one_row_per_frame_full_frames_at_the_period_and_every_frame_read_back(tmp_path):
    path = tmp_path / "r.qtr"
    snaps = frames(130)
    writer = RecordingWriter(path, demo_spec(), 1.0, keyframe_every=60)
    for snap in snaps:
        writer.write(snap)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        meta = dict(conn.execute("SELECT key, value FROM meta"))
    writer.close()
    found = rows(path)
    assert [r[1] for r in found] == [s.taken_at.timestamp() for s in snaps]
    full = [i for i, r in enumerate(found) if r[2] == store.FULL]
    assert full[:3] == [0, 60, 120]  # and a delta between them wherever it is much smaller
    deltas = [r[3] for r in found if r[2] == store.DELTA]
    assert len(deltas) == 127 and max(deltas) < min(r[3] for r in found if r[2] == store.FULL)
    assert meta["format"] == str(store.FORMAT) and meta["queue"] == "queuetop_demo.jobs"
    recording = Recording(path)
    assert recording.spec() == demo_spec()
    b = recording.bounds()
    assert list(recording.snapshots(b.first_id, b.last_id)) == snaps
    assert recording.snapshot(found[75][0]) == snaps[75]  # a seek: from the full frame at 60
    assert recording.snapshot(recording.frame_at(snaps[42].taken_at.timestamp() + 0.5)) == snaps[42]


def test_retention_by_age_drops_the_oldest_frames_and_the_first_kept_reads_whole(tmp_path):
    path = tmp_path / "r.qtr"
    snaps = frames(200)
    writer = RecordingWriter(path, demo_spec(), 1.0, retain_s=50.0, keyframe_every=60)
    for snap in snaps:
        writer.write(snap)
    writer.close()
    found = rows(path)
    newest = snaps[-1].taken_at.timestamp()
    assert all(at >= newest - 50.0 for _, at, _, _ in found)
    assert len(found) == 51 and found[0][2] == store.FULL  # rebuilt as a full frame
    recording = Recording(path)
    b = recording.bounds()
    assert list(recording.snapshots(b.first_id, b.last_id)) == snaps[-51:]


def test_retention_by_size_keeps_the_file_under_its_limit_newest_frames_kept(tmp_path):
    path = tmp_path / "r.qtr"
    limit = 256 * 1024
    snaps = frames(400, rows=40)
    writer = RecordingWriter(path, demo_spec(), 1.0, max_bytes=limit)
    for snap in snaps:
        writer.write(snap)
        assert writer.used_bytes() <= limit
    assert writer.stats.dropped > 0
    writer.close()
    found = rows(path)
    assert path.stat().st_size <= limit  # freed pages went back to the file system
    kept = len(found)
    assert 0 < kept < 400 and [r[1] for r in found] == [
        s.taken_at.timestamp() for s in snaps[-kept:]
    ]
    recording = Recording(path)
    b = recording.bounds()
    assert list(recording.snapshots(b.first_id, b.last_id)) == snaps[-kept:]


def test_a_reader_opens_the_file_while_it_grows(tmp_path):
    path = tmp_path / "r.qtr"
    snaps = frames(30)
    writer = RecordingWriter(path, demo_spec(), 1.0)
    for snap in snaps[:10]:
        writer.write(snap)
    recording = Recording(path)  # read-only, beside the writer
    assert recording.bounds().frames == 10
    for snap in snaps[10:]:
        writer.write(snap)
    b = recording.bounds()
    assert b.frames == 30 and recording.snapshot(b.last_id) == snaps[-1]
    writer.close()


def test_an_existing_recording_is_extended_and_another_queue_refused(tmp_path):
    path = tmp_path / "r.qtr"
    snaps = frames(10)
    for part in (snaps[:4], snaps[4:]):
        writer = RecordingWriter(path, demo_spec(), 1.0)
        for snap in part:
            writer.write(snap)
        writer.close()
    found = rows(path)
    assert [r[2] for r in found].count(store.FULL) == 2  # each run starts with a full frame
    b = Recording(path).bounds()
    assert list(Recording(path).snapshots(b.first_id, b.last_id)) == snaps
    other = replace(demo_spec(), table=replace(demo_spec().table, name="other"))
    with pytest.raises(UserError, match="records queue queuetop_demo.jobs, not"):
        RecordingWriter(path, other, 1.0)


def test_a_newer_format_and_a_file_that_is_no_recording_are_refused_in_one_line(tmp_path):
    path = tmp_path / "r.qtr"
    writer = RecordingWriter(path, demo_spec(), 1.0)
    writer.write(frames(1)[0])
    writer.close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'format'")
    with pytest.raises(UserError, match="recording format 99, newer than this queuetop"):
        Recording(path)
    text = tmp_path / "notes.txt"
    text.write_text("not sqlite at all\n" * 100)
    with pytest.raises(UserError, match="is not a queuetop recording"):
        Recording(text)
    with pytest.raises(UserError, match="no recording"):
        Recording(tmp_path / "missing.qtr")


def test_a_damaged_frame_is_one_line_not_a_traceback(tmp_path, capsys):
    from dashboard.cli import main

    path = tmp_path / "r.qtr"
    writer = RecordingWriter(path, demo_spec(), 1.0)
    for snap in frames(5):
        writer.write(snap)
    writer.close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE frames SET data = x'00ff' WHERE id = 3")
    conn.commit()
    conn.close()
    recording = Recording(path)
    assert recording.snapshot(2) == frames(5)[1]
    with pytest.raises(UserError, match="frame 3 cannot be read"):
        recording.snapshot(3)
    assert main(["incident", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a frame cannot be read" in err[0]


def write_format_1(path, snaps) -> None:
    """A recording as format 1 wrote it: each row an object, every frame compressed, deltas
    found by delta.diff on the trees."""
    conn = sqlite3.connect(path)
    for statement in store.SCHEMA:
        conn.execute(statement)
    spec = codec.dumps(codec.to_tree(demo_spec())).decode()
    meta = {"format": "1", "queue": "queuetop_demo.jobs", "spec": spec, "interval": "1.0"}
    conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
    before = None
    for snap in snaps:
        tree = codec.to_tree(snap)
        kind, body = (
            (store.FULL, tree) if before is None else (store.DELTA, delta.diff(before, tree))
        )
        data = zlib.compress(codec.dumps(body), 6)
        conn.execute(
            "INSERT INTO frames (at, kind, data) VALUES (?, ?, ?)",
            (snap.taken_at.timestamp(), kind, data),
        )
        before = tree
    conn.commit()
    conn.close()


def extend_and_read_back(path, snaps, written: int) -> None:
    """The frames after the first `written` appended by this release's writer; the file then
    reads back whole and says it is in this release's format."""
    writer = RecordingWriter(path, demo_spec(), 1.0)
    for snap in snaps[written:]:
        writer.write(snap)
    writer.close()
    recording = Recording(path)
    b = recording.bounds()
    assert list(recording.snapshots(b.first_id, b.last_id)) == snaps
    assert recording.meta["format"] == str(store.FORMAT)
    recording.close()


def test_a_format_1_recording_is_read_and_extended(tmp_path):
    path = tmp_path / "old.qtr"
    snaps = frames(30)
    write_format_1(path, snaps[:20])
    recording = Recording(path)
    b = recording.bounds()
    assert list(recording.snapshots(b.first_id, b.last_id)) == snaps[:20]
    assert recording.snapshot(b.first_id + 13) == snaps[13]
    recording.close()
    extend_and_read_back(path, snaps, 20)  # the new frames in this release's format
    with sqlite3.connect(path) as conn:
        first_new = conn.execute("SELECT data FROM frames WHERE id = 21").fetchone()[0]
    assert "$cols" in store.unpack(first_new)  # rows of values from here on


def columns_written(path) -> int:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT data FROM frames").fetchall()
    return sum(codec.dumps(store.unpack(data)).count(b'"$c"') for (data,) in rows)


def test_a_format_2_recording_is_read_and_extended(tmp_path, monkeypatch):
    """Format 2 wrote no column patches: this release reads its frames and extends it."""
    path = tmp_path / "two.qtr"
    snaps = frames(30)
    with monkeypatch.context() as m:  # this release's writer, as format 2 wrote
        m.setattr(frames_module, "_columns", lambda old, keys: (None, None))
        writer = RecordingWriter(path, demo_spec(), 1.0)
        for snap in snaps[:20]:
            writer.write(snap)
        writer.close()
    assert columns_written(path) == 0
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '2' WHERE key = 'format'")
    recording = Recording(path)
    b = recording.bounds()
    assert recording.meta["format"] == "2"
    assert list(recording.snapshots(b.first_id, b.last_id)) == snaps[:20]
    recording.close()
    extend_and_read_back(path, snaps, 20)
    assert columns_written(path) > 0  # the new frames in this release's format


def test_a_frame_that_fails_to_be_written_leaves_the_next_one_whole(tmp_path):
    path = tmp_path / "r.qtr"
    snaps = frames(5)
    writer = RecordingWriter(path, demo_spec(), 1.0)
    with sqlite3.connect(path) as conn:  # the disk refuses the third frame
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON frames WHEN NEW.at = "
            f"{snaps[2].taken_at.timestamp()!r} BEGIN SELECT RAISE(ABORT, 'disk full'); END"
        )
    for snap in snaps[:2]:
        writer.write(snap)
    with pytest.raises(sqlite3.IntegrityError, match="disk full"):
        writer.write(snaps[2])
    kinds = [writer.write(snap)[0] for snap in snaps[3:]]
    writer.close()
    assert kinds == [store.FULL, store.DELTA]  # not a delta against the frame never written
    with sqlite3.connect(path) as conn:  # the disk is fine again (a reader refuses triggers)
        conn.execute("DROP TRIGGER refuse")
    b = Recording(path).bounds()
    assert list(Recording(path).snapshots(b.first_id, b.last_id)) == [*snaps[:2], *snaps[3:]]


@pytest.mark.parametrize(
    "bad",
    [
        b'{"$o":{"locks":{"$l":[[-1,99,{"$p":[[0,1]]}]]}}}',  # no row 99 before it
        b'{"$o":{"sections":{"$p":[[0,1]]}}}',  # a list of rows patched as one row
        b'{"$o":{"sections":{"$l":[[-1,0,{"$p":[[99,1]]}]]}}}',  # no value 99 in that row
        b'{"$o":{"taken_at":{"$o":{"x":{"$r":1}}},"locks":{"$l":[[1]]}}}',
        b'{"$o":{"sections":{"$c":[[1,[0.5]]]}}}',  # a column shorter than the list
        b'{"$o":{"sections":{"$c":[[99,[0.5,0.5,0.5]]]}}}',  # no value 99 in its rows
        b'{"$o":{"counts":{"$c":[[0,[1]]]}}}',  # a column of an object, not of rows
    ],
)
def test_a_patch_that_does_not_fit_the_frame_before_is_one_line(tmp_path, bad):
    path = tmp_path / "r.qtr"
    writer = RecordingWriter(path, demo_spec(), 1.0)
    for snap in frames(3):
        writer.write(snap)
    writer.close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE frames SET kind = ?, data = ? WHERE id = 2", (store.DELTA, bad))
    recording = Recording(path)
    assert recording.snapshot(1) == frames(3)[0]
    with pytest.raises(UserError, match="frame 2 cannot be read"):
        recording.snapshot(2)
