"""The app is driven by a snapshot source; the poller is one, a replay would be another.

A source posts SnapshotReady messages and says what the header shows about its link;
with `live = False` the recovery actions are hidden (nothing to act on). This source
replays fixed snapshots one per `poll_now`, as a recording's replay would post frames.
"""

from __future__ import annotations

import asyncio

from ui_snapshots import demo_spec, fixed_history

from dashboard.ui.app import QueuetopApp
from dashboard.ui.messages import SnapshotReady
from dashboard.ui.widgets.status import LinkState


class FramesSource:
    """Posts the next frame on start and on each `r`; remembers what the app told it."""

    live = False
    polls_started = 0
    failures = 0

    def __init__(self, frames, app, on_link) -> None:
        self.frames = list(frames)
        self.on_link = on_link
        self.app = app
        self.landed_at: list = []
        self.paused: list[bool] = []
        self.intervals: list[float] = []

    def start(self) -> None:
        self.poll_now()

    def stop(self) -> None:
        pass

    def poll_now(self) -> None:
        if self.frames:
            self.polls_started += 1
            self.app.post_message(SnapshotReady(self.frames.pop(0)))

    def poll_soon(self) -> None:
        self.poll_now()

    def request_exact(self) -> bool:
        return False

    def pause(self, paused: bool) -> None:
        self.paused.append(paused)

    def set_interval(self, seconds: float) -> None:
        self.intervals.append(seconds)

    def landed(self, snap) -> None:
        self.landed_at.append(snap.taken_at)
        self.on_link(LinkState("replay", f"frame {len(self.landed_at)}"))

    def failed(self, message) -> None:
        raise AssertionError(f"a replay does not fail: {message.reason}")

    def crashed(self, error) -> None:
        raise AssertionError(f"a replay does not crash: {error}")


def test_another_source_drives_the_same_app_with_actions_off():
    async def go():
        frames = fixed_history(3)
        made: list[FramesSource] = []

        def replay(app, on_link):
            made.append(FramesSource(frames, app, on_link))
            return made[-1]

        app = QueuetopApp(demo_spec(), "postgresql://replay.invalid/none", source=replay)
        [source] = made
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            assert app.snapshots_applied == 1 and app.snapshot is frames[0]
            header = str(app.query_one("#status").render())
            assert "replay, frame 1" in header
            await pilot.press("r")
            await pilot.pause()
            assert app.snapshot is frames[1] and source.landed_at == [
                f.taken_at for f in frames[:2]
            ]
            assert "replay, frame 2" in str(app.query_one("#status").render())
            await pilot.press("p", "minus")
            assert source.paused == [True] and source.intervals == [5.0]
            assert app.check_action("requeue_stale", ()) is False  # nothing to act on
            assert app.check_action("lookup_jobs", ()) is False

    asyncio.run(go())
