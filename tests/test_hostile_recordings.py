"""Recordings anyone may have made, opened as a person would: `incident --json` in its own
process and `replay` under a Pilot. Each case of tests/hostile_recordings.py (a zlib bomb,
deltas doubling a list, a view for a table, nesting 900 and 1,000,000 deep, a 50 MB query, a
time that is text or 1e300, NaN, 10^400, an unknown role, fields of the wrong types, damaged
audit rows and pages, a trigger, a terminal escape in a row-lock holder's role) and random
mutations of a real recording (Hypothesis): one line or a usable result every time, RSS
under 300 MB, no ESC byte from the file on the screen. The subprocess timeout is a guard
against a hang, not a measurement."""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.pilot import until
from hostile_recordings import CASES, hostile, real_recording
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_hostile_screens import rendered

from dashboard.cli import main
from dashboard.cli.replay_command import replay_app
from dashboard.errors import UserError

pytestmark = pytest.mark.ui  # tier: see tests/conftest.py

MAX_RSS_KB = 300 * 1024
# runs the command, then prints the most memory it held (KB) on stderr's last line
MEASURED = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:])\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(done.returncode)\n"
)


@pytest.mark.parametrize("case", sorted(CASES))
def test_incident_answers_in_one_line_or_a_report(case, tmp_path):
    path = hostile(tmp_path, case)
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, sys.executable, "-m", "dashboard", "incident",
         "--json", str(path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    *err, rss = done.stderr.strip().splitlines()
    assert int(rss) < MAX_RSS_KB, (case, rss)
    assert "Traceback" not in done.stderr
    assert "\x1b" not in done.stdout + "".join(err)
    if done.returncode == 0:
        json.loads(done.stdout)
    else:
        assert done.returncode == 2 and len(err) == 1, (case, done.stderr)


@pytest.mark.parametrize("case", sorted(CASES))
def test_replay_opens_usable_or_says_why(case, tmp_path):
    path = hostile(tmp_path, case)
    try:
        app = replay_app(argparse.Namespace(file=str(path), at=None))
    except UserError as exc:  # refused before the screen: one line
        assert "\n" not in str(exc) and "\x1b" not in str(exc)
        return
    asyncio.run(_replayed(app, case))


async def _replayed(app, case: str) -> None:
    try:
        async with app.run_test(size=(120, 40), notifications=True) as pilot:
            await until(pilot, lambda: app.snapshot is not None or app._notifications)
            for key in (".", ".", ",", "4", "1"):  # step on and back through the file
                await pilot.press(key)
                await pilot.pause()
            lines, _ = rendered(app)
            screen = "\n".join(lines)
            assert "\x1b" not in screen and "\x07" not in screen, case
            if case == "role_escape":
                assert "\\x1b]52" in screen  # shown, as text
    finally:
        app.replay.close()


def _mutations():
    flip = st.tuples(st.just("flip"), st.integers(0, 10**6), st.integers(1, 255))
    cut = st.tuples(st.just("cut"), st.integers(0, 10**6), st.just(0))
    field = st.tuples(
        st.just("field"),
        st.sampled_from(["queue", "taken_at", "counts", "roles", "locks", "groups", "sections"]),
        st.sampled_from([None, 1, -1, 1e308, "x", [], {}, [[[[]]]], {"$dt": "x"}, {"$map": 5}]),
    )
    return st.lists(st.one_of(flip, cut, field), min_size=1, max_size=4)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(mutations=_mutations())
def test_random_mutations_of_a_real_recording(mutations, tmp_path_factory, capsys):
    path = real_recording(Path(tmp_path_factory.mktemp("m")) / "r.qtr")
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT id, data FROM frames ORDER BY id").fetchall()
    for i, (kind, a, b) in enumerate(mutations):
        fid, data = rows[i % len(rows)]
        data = bytearray(data)
        if kind == "flip" and data:
            data[a % len(data)] ^= b
        elif kind == "cut":
            data = data[: a % (len(data) + 1)]
        elif kind == "field":
            from dashboard.recorder import store

            try:
                tree = store.unpack(bytes(data))
            except Exception:
                continue
            if isinstance(tree, dict):
                tree[a] = b
                data = bytearray(json.dumps(tree).encode())
        conn.execute("UPDATE frames SET data = ? WHERE id = ?", (bytes(data), fid))
    conn.commit()
    conn.close()
    code = main(["incident", "--json", str(path)])
    out = capsys.readouterr()
    assert code in (0, 2), out.err
    if code == 0:
        json.loads(out.out)
    else:
        assert len(out.err.strip().splitlines()) == 1, out.err


def test_keys_and_quit_are_answered_while_a_frame_is_being_read(tmp_path):
    """A frame whose read never ends (the file's read held on an event, as a slow disk or a
    pathological frame would hold it): the dashboard still answers keys, and q ends it."""
    import threading

    path = real_recording(tmp_path / "r.qtr")
    app = replay_app(argparse.Namespace(file=str(path), at=None))
    release = threading.Event()
    reading = threading.Event()
    read = app.replay.recording.snapshot

    def held(frame_id):
        if frame_id != app.replay.frame_id:
            reading.set()
            release.wait(60)
        return read(frame_id)

    async def go():
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.snapshot is not None)
            app.replay.recording.snapshot = held
            await pilot.press(".")
            await until(pilot, reading.is_set)
            tabs = app.screen.query_one("#tables")
            before = tabs.active
            await pilot.press("2")  # a tab switch, answered while the read is held
            await until(pilot, lambda: tabs.active != before)
            await pilot.press("q")
            await pilot.pause()
        return app.return_code

    try:
        asyncio.run(asyncio.wait_for(go(), timeout=30))
        assert not release.is_set()  # it ended with the read still held
    finally:
        release.set()
        app.replay._reader.join(30)  # the held read ends, then the file may be closed
        app.replay.close()


@pytest.mark.parametrize("stop", ["q", "SIGTERM", "SIGHUP"])
def test_a_replay_reading_a_pathological_frame_ends_on(stop, tmp_path):
    import signal

    from pty_run import PtyRun

    path = hostile(tmp_path, "doubling_deltas")
    run = PtyRun(["replay", str(path)], str(tmp_path / "home"))
    try:
        run.read_until(b"REPLAY", timeout=60)
        run.send(b"." * 8)  # into the frames whose lists doubled: seconds of reading each
        run.read(0.5)
        if stop == "q":
            run.send(b"q")
            assert run.finish(timeout=30) == 0
        else:
            sig = getattr(signal, stop)
            run.proc.send_signal(sig)
            assert run.finish(timeout=30) == 128 + sig
    finally:
        run.close()
