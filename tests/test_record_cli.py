"""`queuetop record` as a real process: SIGKILLed mid-write its file opens and replays up to
its last frame; --retain keeps only the newest frames; bad input is one line, exit 2."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sqlite3
import subprocess
import sys

import pytest
from demo_queue import setup_demo
from helpers import wait_until
from helpers.pilot import until

from dashboard.cli.replay_command import replay_app
from dashboard.recorder import Recording

pytestmark = pytest.mark.cli  # tier: see tests/conftest.py


def record(dsn: str, out, *flags: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "dashboard", "record", "--dsn", dsn, "--out", str(out), *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def frames_in(path) -> int:
    if not path.exists():
        return 0
    try:
        recording = Recording(path)
    except Exception:  # not created yet, or its tables not yet committed
        return 0
    try:
        bounds = recording.bounds()
        return bounds.frames if bounds else 0
    finally:
        recording.close()


def test_a_recording_killed_mid_write_opens_and_replays_up_to_its_last_frame(
    dsn, connect, tmp_path
):
    setup_demo(dsn, jobs=5)
    holder = connect(application_name="holder")
    holder.execute("SELECT id FROM queuetop_demo.jobs WHERE id <= 2 FOR UPDATE")
    path = tmp_path / "killed.qtr"
    proc = record(dsn, path, "--interval", "0.2")
    try:
        seen = wait_until(lambda: (n := frames_in(path)) >= 12 and n, timeout=60)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    assert proc.returncode == -signal.SIGKILL
    assert os.path.exists(f"{path}-wal")  # killed: the log was never checkpointed away
    recording = Recording(path)
    bounds = recording.bounds()
    assert bounds.frames >= seen  # every frame committed before the kill is there
    every = list(recording.snapshots(bounds.first_id, bounds.last_id))
    assert len(every) == bounds.frames
    last = every[-1]
    assert last.taken_at.timestamp() == bounds.last_at
    assert {h.pid for h in last.row_lock_holders} == {holder.info.backend_pid}

    app = replay_app(argparse.Namespace(file=str(path), at="end"))

    async def go():
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.snapshot is not None)
            assert app.snapshot == last
            await pilot.press("full_stop")  # past the last frame: it stays there
            await pilot.pause()
            assert app.replay.frame_id == bounds.last_id
            header = str(app.query_one("#status").render())
            assert f"frame {bounds.frames}/{bounds.frames}" in header

    asyncio.run(go())


def test_retention_keeps_only_the_newest_frames_of_a_real_recording(dsn, tmp_path):
    setup_demo(dsn, jobs=2)
    path = tmp_path / "kept.qtr"
    proc = record(dsn, path, "--interval", "0.2", "--frames", "25", "--retain", "2s")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "25 frames" in err and "dropped by retention" in err
    assert not os.path.exists(f"{path}-wal")  # a clean stop checkpoints: one file to copy
    conn = sqlite3.connect(path)
    ats = [r[0] for r in conn.execute("SELECT at FROM frames ORDER BY id")]
    first_kind = conn.execute("SELECT kind FROM frames ORDER BY id LIMIT 1").fetchone()[0]
    conn.close()
    assert ats[-1] - ats[0] <= 2.0 and len(ats) < 25  # the oldest went first
    assert first_kind == 0  # the first frame kept reads on its own


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["record"], "the following arguments are required: --out"),
        (["record", "--out", "x.qtr", "--max-size", "1k"], "expected at least 64KiB"),
        (["record", "--out", "x.qtr", "--max-size", "lots"], "expected a size such as 200MB"),
        (["record", "--out", "x.qtr", "--retain", "soon"], "bad --retain 'soon'"),
        (["record", "--out", "", "--frames", "1"], "expected a file path, got an empty value"),
        (["replay", "missing.qtr"], "no recording missing.qtr"),
        (["incident", "missing.qtr"], "no recording missing.qtr"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, says, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "dashboard", *argv],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 2
    assert says in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_a_directory_or_a_missing_one_for_out_is_one_line(dsn, tmp_path):
    setup_demo(dsn)
    for out, says in ((tmp_path, "is a directory"), (tmp_path / "no" / "r.qtr", "no directory")):
        done = subprocess.run(
            [sys.executable, "-m", "dashboard", "record", "--dsn", dsn, "--out", str(out)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2 and says in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
