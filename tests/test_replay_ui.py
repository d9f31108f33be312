"""The replay in the dashboard (Pilot): REPLAY and the frame's time in the header, keys that
step, jump, seek and play, plots' history rebuilt around the cursor, actions off; an SVG
snapshot at 120x40."""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest
from helpers.pilot import run_app, until
from ui_snapshots import T0, demo_spec, fixed_snapshot

from dashboard.audit.trail import AuditRecord
from dashboard.cli.replay_command import replay_app
from dashboard.recorder import RecordingWriter
from dashboard.ui.replay import driver as replay_driver
from dashboard.ui.replay.keys import LIVE_ONLY
from dashboard.ui.screens.audit import AuditScreen, AuditTable

FRAMES = 400  # one every 2 s: 13m18s of recording


def frame(i: int):
    return replace(fixed_snapshot(i % 40), taken_at=T0 + timedelta(seconds=2 * i))


@pytest.fixture
def recording(tmp_path):
    path = tmp_path / "r.qtr"
    writer = RecordingWriter(path, demo_spec(), 2.0)
    for i in range(FRAMES):
        writer.write(frame(i))
    writer.add_audit(
        [
            AuditRecord(
                at=T0 + timedelta(seconds=61),
                action="requeue",
                target="1003",
                outcome="changed",
                reason="worker \x1b[31mdied",
                db_user="ops",
                record_id="audit_id 1",
            )
        ]
    )
    writer.close()
    return path


def app_at(path, at: str | None = None):
    return replay_app(argparse.Namespace(file=str(path), at=at))


def header(app) -> str:
    return str(app.query_one("#status").render())


def run(app, body, size=(120, 40)):
    run_app(app, body, size, ready=lambda: app.snapshot is not None)


def local(i: int) -> str:
    return f"{(T0 + timedelta(seconds=2 * i)).astimezone():%Y-%m-%d %H:%M:%S}"


async def moved(pilot, app, key: str):
    before = app.replay.frames_posted
    await pilot.press(key)
    await until(
        pilot, lambda: app.replay.frames_posted > before and app.snapshot is app.replay._posted
    )


def test_the_header_says_replay_and_keys_step_jump_and_seek(recording):
    app = app_at(recording, "+60s")

    async def body(pilot):
        assert app.snapshot == frame(30)
        # opened paused: the header says which key plays
        assert f"REPLAY, {local(30)} · frame 31/{FRAMES} · paused, 1x (p plays)" in header(app)
        await moved(pilot, app, "full_stop")
        assert app.snapshot == frame(31)
        await moved(pilot, app, "comma")
        assert app.snapshot == frame(30)
        await moved(pilot, app, "greater_than_sign")  # a minute on: 30 frames of 2 s
        assert app.snapshot == frame(60)
        await moved(pilot, app, "less_than_sign")
        assert app.snapshot == frame(30)
        app.replay.goto_text("-10s")  # what the g dialog hands back
        await until(pilot, lambda: app.snapshot == frame(FRAMES - 6))
        clock = (T0 + timedelta(seconds=2 * 123)).astimezone().strftime("%H:%M:%S")
        app.replay.goto_text(clock)
        await until(pilot, lambda: app.snapshot == frame(123))
        app.replay.goto_text("half past nine")
        await pilot.pause()
        assert app.snapshot == frame(123)  # a bad time changes nothing (a warning says why)

    run(app, body)


def test_g_opens_a_dialog_that_goes_to_the_time_typed(recording):
    app = app_at(recording)

    async def body(pilot):
        assert app.snapshot == frame(0)
        await pilot.press("g")
        await pilot.pause()
        await pilot.press(*"+4m", "enter")
        await until(pilot, lambda: app.snapshot == frame(120))

    run(app, body)


def test_the_plots_history_is_the_recorded_one_up_to_the_cursor(recording):
    app = app_at(recording, "+400s")  # frame 200

    async def body(pilot):
        history = app.history
        first = max(0, 200 - history.maxlen + 1)
        every = app.replay.history_every  # 1 unless decoding a frame is slow here
        picked = [first, *range(first + 1, 200, every)]
        expected = [frame(i) for i in dict.fromkeys([*picked, 199, 200])]
        assert list(history.depth["ready"]) == [s.counts["ready"] for s in expected]
        assert list(history.waiting) == [len(s.waiting) for s in expected]
        assert history.times[-1] - history.times[0] == 2 * (200 - first)  # seconds covered
        await moved(pilot, app, "comma")  # back one: rebuilt, ending at frame 199
        assert list(history.depth["ready"])[-1] == frame(199).counts["ready"]
        assert history.times[-1] - history.times[0] == 2 * (199 - first)
        await moved(pilot, app, "full_stop")  # forward one: appended, as live
        assert list(history.depth["ready"])[-1] == frame(200).counts["ready"]

    run(app, body)


def test_play_at_60x_moves_through_the_frames_and_stops_at_the_end(recording):
    app = app_at(recording, "-60s")

    async def body(pilot):
        start = app.replay.frame_id
        await pilot.press("plus", "plus", "plus")  # 10x, 60x, and it stays at 60x
        await pilot.press("p")
        assert "playing 60x" in header(app)
        await until(pilot, lambda: app.replay.frame_id > start)
        await until(pilot, lambda: "end of the recording" in header(app), timeout=20)
        assert app.snapshot == frame(FRAMES - 1) and not app.replay.playing
        await pilot.press("minus")
        assert "paused, 10x" in header(app)

    run(app, body)


def test_actions_are_off_and_the_audit_shows_what_was_recorded_by_then(recording):
    app = app_at(recording, "+60s")

    async def body(pilot):
        for action in ("requeue_stale", "dead_letter_stale", "signal_session", "lookup_jobs"):
            assert app.check_action(action, ()) is False
        assert all(app.check_action(a, ()) is False for a in LIVE_ONLY)
        assert "read-only" in header(app)
        marked = app.stale_table.cursor_key()
        await pilot.press("4", "space", "R")  # nothing to confirm: no dialog opens
        await pilot.pause()
        assert not isinstance(app.screen, AuditScreen) and len(app.screen_stack) == 1
        assert marked is not None
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, AuditScreen) and app.screen.loads)
        assert not app.screen.query_one(AuditTable).items  # recorded at 09:31:01: not yet
        await pilot.press("escape")
        await moved(pilot, app, "full_stop")  # 09:31:02: now it has happened
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, AuditScreen) and app.screen.loads)
        [record] = app.screen.query_one(AuditTable).items.values()
        assert (record.target, record.reason) == ("1003", "worker \x1b[31mdied")

    run(app, body)


def test_a_live_dashboard_has_no_replay_keys():
    from dashboard.ui.app import QueuetopApp

    app = QueuetopApp(demo_spec(), None, poll=False, snapshots=[frame(0)])
    assert app.check_action("replay", ("step", 1)) is False
    assert app.check_action("toggle_pause", ()) is not False


@pytest.fixture
def utc(monkeypatch):
    """The header shows the frame's time in this machine's zone: UTC for the snapshot."""
    with monkeypatch.context() as patch:
        patch.setenv("TZ", "UTC")
        time.tzset()
        yield
    time.tzset()


async def settled(pilot) -> None:
    """The frame on screen and the tabs' underline still: the frame is read on a thread,
    and the labels it changes slide the underline (a snapshot taken mid-slide differs)."""
    app = pilot.app
    for _ in range(200):
        await pilot.pause()
        if app.snapshot is not None:
            break
    seen, still = None, 0
    for _ in range(200):  # the underline at rest: the same place three pauses running
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        line = app.query_one("#tables").query_one("Underline")
        now = (line.highlight_start, line.highlight_end)
        still = still + 1 if now == seen else 0
        seen = now
        if still >= 3:
            return


def test_replay_snapshot(snap_compare, recording, utc, monkeypatch):
    # every frame in the plots' history: the rebuild reads every n-th one when a frame
    # takes long to read (a loaded machine), which would make the picture depend on it
    monkeypatch.setattr(replay_driver, "REBUILD_BUDGET_S", 1e9)
    assert snap_compare(app_at(recording, "+2m"), terminal_size=(120, 40), run_before=settled)


def test_times_are_read_in_every_form():
    from dashboard.recorder.times import parse_when

    first = T0.timestamp()
    last = first + 3600
    assert parse_when("start", first, last) == first and parse_when("end", first, last) == last
    assert parse_when("+90s", first, last) == first + 90
    assert parse_when("-5m", first, last) == last - 300
    assert parse_when("2026-01-15T09:45:00Z", first, last) == first + 900
    at = datetime.fromtimestamp(first + 754, timezone.utc).astimezone()
    assert parse_when(f"{at:%H:%M:%S}", first, last) == first + 754


def test_the_help_lists_the_replay_keys_in_a_replay_and_the_polling_keys_live(recording):
    from dashboard.ui.app import QueuetopApp

    def tooltips(app) -> set[str]:
        [(_, dashboard)] = [s for s in app.binding_sections() if s[0] == "dashboard"]
        return {b.tooltip for b in dashboard}

    replaying = tooltips(app_at(recording))
    live = tooltips(QueuetopApp(demo_spec(), None, poll=False, snapshots=[frame(0)]))
    assert "Replay: play or pause" in replaying and "Pause or resume polling" not in replaying
    assert "Pause or resume polling" in live and "Replay: play or pause" not in live
