"""`demo --record`: each frame keeps what the load generator was doing (strategy, hold-tx,
rates, which stale leases its crashes made), so a replayed pile-up shows what caused it and
the `(! crash)` marks the live stale table showed (a replay dropped both)."""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import replace

from helpers.pilot import until
from ui_snapshots import FixedLoadGen, demo_spec, fixed_load_snapshot, fixed_snapshot

from dashboard.cli import build_parser
from dashboard.cli.replay_command import replay_app
from dashboard.loadgen.stats import CrashReport
from dashboard.recorder import BackgroundRecorder, Recorder, RecordingWriter
from dashboard.ui.app import QueuetopApp


def test_demo_parses_record():
    args = build_parser().parse_args(["demo", "--record", "/tmp/x.qtr"])
    assert str(args.record).endswith("x.qtr")


def test_a_replayed_demo_shows_its_generator_and_its_crash_marks(tmp_path):
    path = tmp_path / "demo.qtr"
    crash = CrashReport(1, 3, "queuetop-worker-3", (1001,), by_knob=True, committed=True)
    load = replace(fixed_load_snapshot(), strategy="for-update", hold_tx=True, crashes=(crash,))
    live_marks: dict[str, str] = {}

    async def record():
        recorder = BackgroundRecorder(Recorder(RecordingWriter(path, demo_spec(), 2.0)))
        app = QueuetopApp(demo_spec(), None, poll=False, loadgen=FixedLoadGen(load))
        app.recorder = recorder
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            for step in range(3):
                app.apply_snapshot(fixed_snapshot(step))
                await pilot.pause()
            live_marks.update(app.stale_table.crash_causes)
        recorder.close()

    asyncio.run(record())
    assert live_marks == {"1001": "! crash"}  # what the live table marked

    async def replay():
        app = replay_app(argparse.Namespace(file=str(path), at=None))
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.snapshot is not None)
            await pilot.pause()
            strip = str(app.query_one("#recorded-load").render())
            assert "for-update" in strip and "hold-tx on" in strip, strip
            assert app.query_one("#recorded-load").display
            assert app.stale_table.crash_causes == live_marks
            assert "(! crash)" in app.stale_table.cell_text("1001", "worker")

    asyncio.run(replay())
