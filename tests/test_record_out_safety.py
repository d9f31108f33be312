"""`record --out` writes a private file, and never through what someone else left at the
path: a symbolic link (dangling, or to a file), a planted empty file, a file of another
user or one others may write, a recording whose schema holds a trigger. Each is refused
in one line and the target is left as it was."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import subprocess
import sys
import zlib
from dataclasses import replace
from datetime import timedelta

import pytest
from demo_queue import setup_demo
from ui_snapshots import T0, demo_spec, fixed_snapshot

from dashboard.errors import UserError
from dashboard.recorder import Recording, RecordingWriter


def snaps(n: int):
    return [replace(fixed_snapshot(i), taken_at=T0 + timedelta(seconds=i)) for i in range(n)]


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def record(path, n: int = 3) -> None:
    writer = RecordingWriter(path, demo_spec(), 1.0)
    for snap in snaps(n):
        writer.write(snap)
    side = [p for p in (f"{path}-wal", f"{path}-shm") if os.path.exists(p)]
    assert side, "WAL mode: the side files exist while the writer is open"
    assert {p: mode(p) for p in side} == dict.fromkeys(side, 0o600)
    writer.close()


def test_a_new_recording_is_private_and_ours_is_extended(tmp_path):
    path = tmp_path / "r.qtr"
    old = os.umask(0o022)  # the usual umask: 0644 unless queuetop says otherwise
    try:
        record(path)
        assert mode(path) == 0o600
        record(path)  # our own recording of this queue: extended
    finally:
        os.umask(old)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM frames").fetchone()[0] == 6


def test_a_dangling_symlink_is_refused_and_its_target_not_created(tmp_path):
    path, target = tmp_path / "r.qtr", tmp_path / "elsewhere.qtr"
    path.symlink_to(target)
    with pytest.raises(UserError, match="is a symbolic link"):
        RecordingWriter(path, demo_spec(), 1.0)
    assert not target.exists()


def test_a_symlink_to_a_file_and_a_planted_empty_file_are_left_alone(tmp_path):
    target = tmp_path / "victim"
    target.write_bytes(b"")
    link = tmp_path / "r.qtr"
    link.symlink_to(target)
    with pytest.raises(UserError, match="is a symbolic link"):
        RecordingWriter(link, demo_spec(), 1.0)
    assert target.read_bytes() == b""
    with pytest.raises(UserError, match="exists and is empty"):
        RecordingWriter(target, demo_spec(), 1.0)
    assert target.read_bytes() == b""


def test_a_recording_with_a_trigger_is_refused_and_unchanged(tmp_path):
    path = tmp_path / "r.qtr"
    record(path)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE stolen (data BLOB)")
        conn.execute(
            "CREATE TRIGGER steal AFTER INSERT ON frames BEGIN "
            "INSERT INTO stolen SELECT data FROM frames; DELETE FROM frames; END"
        )
    before = digest(path)
    with pytest.raises(UserError, match="it holds what no recording does: table stolen"):
        RecordingWriter(path, demo_spec(), 1.0)
    assert digest(path) == before
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM stolen").fetchone()[0] == 0


def test_a_file_others_may_write_or_own_is_refused(tmp_path):
    path = tmp_path / "r.qtr"
    record(path)
    os.chmod(path, 0o666)
    with pytest.raises(UserError, match="may be written by other users"):
        RecordingWriter(path, demo_spec(), 1.0)
    os.chmod(path, 0o600)
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root: the owner check is not run")
    os.chown(path, 65534, 65534)
    before = digest(path)
    with pytest.raises(UserError, match="belongs to another user"):
        RecordingWriter(path, demo_spec(), 1.0)
    assert digest(path) == before


def test_the_command_says_it_in_one_line(dsn, tmp_path):
    setup_demo(dsn)
    out = tmp_path / "r.qtr"
    out.symlink_to(tmp_path / "nowhere")
    done = subprocess.run(
        [sys.executable, "-m", "dashboard", "record", "--dsn", dsn, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "is a symbolic link" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "nowhere").exists()


SECRET = "S3cret_ALTER_pw"


def recorded_queries(path) -> list[str]:
    recording = Recording(path)
    b = recording.bounds()
    queries = [
        item.query
        for snap in recording.snapshots(b.first_id, b.last_id)
        for item in (*snap.idle_in_transaction, *snap.locks, *snap.blockers, *snap.waiting)
    ]
    recording.close()
    return queries


@pytest.mark.parametrize("redact", [False, True], ids=["as-is", "redacted"])
def test_redact_queries_keeps_a_password_out_of_the_recording(redact, dsn, connect, tmp_path):
    setup_demo(dsn)
    admin = connect(autocommit=True)
    admin.execute("DROP ROLE IF EXISTS qt_victim")
    admin.execute("CREATE ROLE qt_victim")
    session = connect()  # a transaction left open right after the statement
    session.execute(f"ALTER ROLE qt_victim PASSWORD '{SECRET}'")
    out = tmp_path / "r.qtr"
    argv = ["record", "--dsn", dsn, "--out", str(out), "--frames", "2"]
    done = subprocess.run(
        [sys.executable, "-m", "dashboard", *argv, *(["--redact-queries"] if redact else [])],
        capture_output=True,
        text=True,
        timeout=120,
    )
    session.rollback()
    assert done.returncode == 0, done.stderr
    queries = recorded_queries(out)
    alter = [q for q in queries if "ALTER ROLE qt_victim PASSWORD" in q]
    assert alter, queries  # the session was recorded, idle in its transaction
    if redact:
        assert all(q == "ALTER ROLE qt_victim PASSWORD ?" for q in alter)
        with sqlite3.connect(out) as conn:  # nowhere in the file, compressed or not
            for (data,) in conn.execute("SELECT data FROM frames"):
                raw = data if data[:1] == b"{" else zlib.decompress(data)
                assert SECRET.encode() not in raw
    else:
        assert all(SECRET in q for q in alter)  # what the flag is for
