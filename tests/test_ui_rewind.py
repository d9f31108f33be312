"""The rewind in the dashboard (Pilot): a real pile-up, gone by the time the rewind opens,
found again by stepping back, its blocker the pid PostgreSQL named; Escape back to a live
dashboard that kept polling; `s` saving a recording `queuetop replay` opens with the same
frames, never over a file unasked; `--rewind 0` keeping nothing."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import threading
from dataclasses import replace
from datetime import timedelta

import pytest
from demo_queue import setup_demo
from helpers import is_waiting_on_lock, wait_until
from helpers.pilot import until
from textual.widgets import Input
from ui_snapshots import T0, FixedLoadGen, demo_spec, fixed_snapshot

from dashboard.cli import build_parser
from dashboard.cli.replay_command import replay_app
from dashboard.cli.watch_commands import watch_app
from dashboard.loadgen.strategies import build
from dashboard.recorder import Recording
from dashboard.recorder.rewind import RewindBuffer
from dashboard.ui.app import QueuetopApp
from dashboard.ui.jobs_tab.screens import FilterInputScreen
from dashboard.ui.replay.replace_screen import ReplaceFileScreen
from dashboard.ui.replay.rewind import OFF
from dashboard.ui.widgets.message_bar import MessageBar

INTERVAL = 0.2
WORKERS = 4


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def header(app) -> str:
    return str(app.query_one("#status").render())


async def polls(pilot, app, n: int) -> None:
    """n more snapshots applied (drawn or, while the rewind shows, kept)."""
    start = app.source.polls_started
    await until(pilot, lambda: app.source.polls_started >= start + n and not app.source.in_flight)


async def step_back(pilot, app) -> None:
    before = app.replay.frames_posted
    await pilot.press("comma")
    await until(
        pilot, lambda: app.replay.frames_posted > before and app.snapshot is app.replay._posted
    )


def test_the_rewind_finds_the_blocker_of_a_pile_up_that_is_gone(dsn, connect, background):
    asyncio.run(_rewind_finds_the_blocker(dsn, connect, background))


async def _rewind_finds_the_blocker(dsn, connect, background):
    spec = setup_demo(dsn, jobs=6)
    claims = build(spec)
    claim = claims.claims["for-update"]

    def params(k: int) -> dict:
        return claims.params(worker=f"queuetop-worker-{k}", lease_s=30.0, batch=1)

    app = QueuetopApp(spec, dsn, interval=INTERVAL, rewind=RewindBuffer(15 * 60))
    async with app.run_test(size=(120, 40)) as pilot:
        await polls(pilot, app, 2)
        # the pile-up: worker-1 claims with the for-update claim and holds its transaction;
        # workers 2, 3 and 4 run the same claim and queue behind it
        sessions = [connect(application_name=f"queuetop-worker-{k}") for k in range(1, 5)]
        holder, *queued = sessions
        assert holder.execute(claim, params(1)).fetchall()
        observer = connect(autocommit=True)
        waits = []
        for k, session in enumerate(queued, start=2):
            waits.append(background(lambda s=session, k=k: s.execute(claim, params(k)).fetchall()))
            wait_until(lambda s=session: is_waiting_on_lock(observer, s.info.backend_pid))
        # the truth, while it is live: who blocks whom, as PostgreSQL says
        waiting = {s.info.backend_pid for s in queued}
        blocking = {
            pid: set(observer.execute("SELECT pg_blocking_pids(%s)", (pid,)).fetchone()[0])
            for pid in waiting
        }
        roots = set().union(*blocking.values()) - waiting
        blocker = holder.info.backend_pid
        assert roots == {blocker}, blocking  # the one blocking without waiting itself
        await polls(pilot, app, 3)  # the dashboard polled it: the rewind holds those frames

        holder.commit()  # the blocker commits: the queue moves on, the pile-up is gone
        for session, wait in zip(queued, waits, strict=True):
            wait.join()
            session.commit()
        gone = observer.execute("SELECT count(*) FROM pg_locks WHERE NOT granted").fetchone()[0]
        assert gone == 0
        await polls(pilot, app, 3)
        await pilot.press("2")  # the waiting sessions' tab
        assert f"s{blocker}" not in app.table("waiting").items  # live: nobody waits now

        opened_at = app.snapshot.taken_at
        await pilot.press("h")
        await until(pilot, lambda: app.rewind.open and app.snapshot is app.replay._posted)
        assert "REWIND" in header(app) and "Esc: live" in header(app)
        assert app.snapshot.taken_at >= opened_at  # it opens at now
        live_polls = app.source.polls_started
        for _ in range(100):  # back, a frame at a time, to the pile-up
            if f"s{blocker}" in app.table("waiting").items:
                break
            await step_back(pilot, app)
        waiting_rows = app.table("waiting").items
        assert f"s{blocker}" in waiting_rows, list(waiting_rows)
        assert {f"s{pid}" for pid in waiting} <= set(waiting_rows)
        await pilot.pause()
        assert str(blocker) in screen_text(app)  # on the screen, in the waiting tab
        assert app.snapshot.taken_at < opened_at  # a frame from before the commit

        await polls(pilot, app, 2)  # the live dashboard polls on meanwhile
        assert app.source.polls_started >= live_polls + 2
        assert f"s{blocker}" in app.table("waiting").items  # and the rewind stays put
        await pilot.press("escape")
        assert not app.rewind.open and app.replay is None
        assert "REWIND" not in header(app)
        assert app.snapshot.taken_at > opened_at  # the newest live snapshot, drawn
        await polls(pilot, app, 1)
        assert f"s{blocker}" not in app.table("waiting").items


# --- s: saving ------------------------------------------------------------------------------

FRAMES = 50


def frames() -> list:
    return [replace(fixed_snapshot(i % 40), taken_at=T0 + timedelta(seconds=i)) for i in range(50)]


async def fed(pilot, app, snaps) -> None:
    """Each snapshot as a poll's, once the rewind's thread has the one before."""
    buffer = app.rewind.buffer
    for n, snap in enumerate(snaps, 1):
        app.apply_snapshot(snap)
        await until(pilot, lambda n=n: buffer.stats.frames >= n)


async def saved_as(pilot, app, name: str) -> None:
    await pilot.press("s")
    await until(pilot, lambda: isinstance(app.screen, FilterInputScreen))
    if name:
        app.screen.query_one(Input).value = name
    await pilot.press("enter")


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_s_saves_a_recording_replay_opens_with_the_same_frames(tmp_path, monkeypatch):
    """In the demo, where s is also the strategy's key: while the rewind shows, it saves."""
    monkeypatch.chdir(tmp_path)  # the default file goes to the current directory
    loadgen = FixedLoadGen()
    app = QueuetopApp(demo_spec(), None, poll=False, loadgen=loadgen, rewind=RewindBuffer(15 * 60))
    notes = []

    async def go():
        async with app.run_test(size=(120, 40)) as pilot:
            app.query_one(MessageBar).show = lambda note: notes.append(note.message)
            await fed(pilot, app, frames())
            await pilot.press("h")
            await until(pilot, lambda: app.rewind.open and app.snapshot is app.replay._posted)
            await saved_as(pilot, app, "")  # the name offered
            await until(pilot, lambda: any("saved to" in n for n in notes))
            [path] = tmp_path.glob("queuetop-rewind-*.qtr")
            assert path.stat().st_mode & 0o777 == 0o600
            before = digest(path)

            await saved_as(pilot, app, str(path))  # the same file: asked first
            await until(pilot, lambda: isinstance(app.screen, ReplaceFileScreen))
            await pilot.press("escape")  # no: kept
            await until(pilot, lambda: any("kept as it was" in n for n in notes))
            assert digest(path) == before

            other = tmp_path / "notes.txt"
            other.write_text("not a recording")
            await saved_as(pilot, app, str(other))  # refused in one line, never asked
            await until(pilot, lambda: any("not a queuetop recording" in n for n in notes))
            assert not isinstance(app.screen, ReplaceFileScreen)
            assert other.read_text() == "not a recording"

            await saved_as(pilot, app, str(path))
            await until(pilot, lambda: isinstance(app.screen, ReplaceFileScreen))
            await pilot.press("y")  # yes: replaced, whole
            await until(pilot, lambda: sum("saved to" in n for n in notes) == 2)
            return path, app.load.state()

    path, state = asyncio.run(go())
    assert not [c for c in loadgen.calls if c[0] not in ("start", "stop")]  # s: no knob turned
    # the frames polled, each with the generator's state as the demo keeps it
    snaps = [replace(s, load=state) for s in frames()]
    recording = Recording(path)
    bounds = recording.bounds()
    assert list(recording.snapshots(bounds.first_id, bounds.last_id)) == snaps
    recording.close()
    files = {p.name for p in tmp_path.iterdir() if not p.name.endswith(("-wal", "-shm"))}
    assert files == {path.name, "notes.txt"}  # nothing half-written left beside them

    replaying = replay_app(argparse.Namespace(file=str(path), at=None))  # queuetop replay FILE

    async def replay():
        async with replaying.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: replaying.snapshot is not None)
            assert replaying.snapshot == snaps[0]
            assert f"frame 1/{FRAMES}" in header(replaying)
            replaying.replay.goto_text("end")
            await until(pilot, lambda: replaying.snapshot == snaps[-1])

    asyncio.run(replay())
    replaying.replay.close()


# --- --rewind 0 -----------------------------------------------------------------------------


def watch_args(dsn: str, *flags: str) -> argparse.Namespace:
    return build_parser().parse_args(["watch", "--dsn", dsn, "--preset", "demo", *flags])


def test_rewind_0_keeps_nothing_and_h_says_so(dsn):
    setup_demo(dsn, jobs=3)
    assert watch_args(dsn).rewind == 15 * 60  # the default
    assert watch_args(dsn, "--rewind", "60m").rewind == 3600
    app = watch_app(watch_args(dsn, "--rewind", "0", "--interval", str(INTERVAL)))
    assert app.rewind.buffer is None

    async def go():
        async with app.run_test(size=(120, 40)) as pilot:
            await polls(pilot, app, 3)
            await pilot.press("h")
            await pilot.pause()
            bar = app.query_one(MessageBar)
            assert bar.shown is not None and bar.shown.message == OFF
            assert "\n" not in OFF
            assert not app.rewind.open and app.replay is None
            assert not [t for t in threading.enumerate() if t.name == "queuetop-rewind"]

    asyncio.run(go())


@pytest.mark.parametrize("value", ["0", "15m"])
def test_the_help_lists_the_rewind_key_live_and_not_in_a_replay(tmp_path, value):
    from dashboard.recorder import RecordingWriter

    def tooltips(app) -> set[str]:
        [(_, keys)] = [s for s in app.binding_sections() if s[0] == "dashboard"]
        return {b.tooltip for b in keys}

    buffer = RewindBuffer(900) if value != "0" else None
    live = tooltips(QueuetopApp(demo_spec(), None, poll=False, rewind=buffer))
    assert any(t.startswith("Rewind: the last minutes") for t in live)
    assert any(t.startswith("Rewind: save it") for t in live)
    writer = RecordingWriter(tmp_path / "r.qtr", demo_spec(), 1.0)
    writer.write(fixed_snapshot(0))
    writer.close()
    replaying = replay_app(argparse.Namespace(file=str(tmp_path / "r.qtr"), at=None))
    assert not any(t.startswith("Rewind") for t in tooltips(replaying))
    replaying.replay.close()
