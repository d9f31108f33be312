"""ReplayDriver: the dashboard driven by a recording, read-only.

The driver owns the cursor (the frame on screen) and hands the app each frame as a poll
would, in a SnapshotReady message, so every table, tab and plot shows it as live. The
app asks it for the header's state (`link`) and runs its keys (`act`). It posts a frame
only once the one before is on screen, so the plots' history, rebuilt when the cursor
jumps, never gets a frame out of order.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from typing import Any

from dashboard.audit.trail import AuditPage
from dashboard.errors import UserError
from dashboard.recorder import Recording
from dashboard.recorder.times import FORMS, parse_when
from dashboard.text.untrusted import escape_controls
from dashboard.ui.jobs_tab.screens import FilterInputScreen
from dashboard.ui.messages import SnapshotReady
from dashboard.ui.screens.audit import LIMIT as AUDIT_LIMIT
from dashboard.ui.screens.audit import AuditScreen
from dashboard.ui.widgets.status import LinkState

SPEEDS = (1, 10, 60)
TICK_S = 0.1
NOTIFY_AUDIT = 3
REBUILD_BUDGET_S = 0.3  # audit records passed while moving forward: the first few are notified


@dataclass(frozen=True)
class Read:
    """What the reading thread hands back: a frame and its place, or why not."""

    snap: Any = None
    at: float = 0.0
    history: list[Any] | None = None  # the plots' frames up to it, when rebuilt
    place: tuple[int, int] = (0, 0)  # (its place, frames in all)
    gone: bool = False  # no such frame any more (retention)
    error: str | None = None


def local(at: float) -> str:
    return f"{datetime.fromtimestamp(at, timezone.utc).astimezone():%Y-%m-%d %H:%M:%S}"


class ReplayDriver:
    def __init__(self, recording: Recording, start_at: float | None = None):
        self.recording = recording
        self.start_at = start_at
        self.frame_id: int | None = None  # on screen, or posted to be
        self.at: float | None = None  # its time
        self.playing = False
        self.speed = SPEEDS[0]
        self.frames_posted = 0
        self.history_every = 1  # the plots' history after a jump: every n-th frame
        self._app: Any = None
        self._posted: Any = None  # the snapshot of the last SnapshotReady posted
        self._wanted: tuple[int, bool] | None = None  # (frame, rebuild) not posted yet
        self._clock: tuple[float, float] | None = None  # (monotonic, recording time) of play
        self._position = (0, 0)  # (this frame's place, frames in all) for the header
        self._note = ""
        self._reading = False  # a frame is being read on its thread
        self._reader: threading.Thread | None = None
        self._timer: Any = None  # the play clock's tick
        self.detached = False  # the rewind closed: nothing more is posted
        self.on_link: Any = None  # the header's callback, set by ReplaySource

    # --- wiring (the app) -------------------------------------------------------------------

    def attach(self, app: Any) -> None:
        """Called by the app once mounted: the first frame, and the play clock."""
        self._app = app
        bounds = self.recording.bounds()
        if bounds is None:
            self._note = "no frame recorded yet"
            return
        at = bounds.first_at if self.start_at is None else self.start_at
        self.go(self.recording.frame_at(at), rebuild=True)
        self._timer = app.set_interval(TICK_S, self._tick)

    def detach(self) -> None:
        """The app goes back to live (the rewind closed): the clock stops, and a frame still
        being read is not shown."""
        self.detached = True
        self.playing = False
        if self._timer is not None:
            self._timer.stop()

    @property
    def link(self) -> LinkState:
        """The header: REPLAY, the frame's time, where in the file, playing or not."""
        if self.at is None:
            return LinkState("REPLAY", self._note or "reading")
        place, total = self._position
        # paused says which key plays: a replay opens paused on its first frame
        state = f"playing {self.speed}x" if self.playing else f"paused, {self.speed}x (p plays)"
        detail = f"{local(self.at)} · frame {place}/{total} · {state}"
        return LinkState("REPLAY", detail + (f" · {self._note}" if self._note else ""))

    def close(self) -> None:
        """Close the recording, unless a frame is still being read from it on its thread
        (after `q` mid-read): closing a file under a read is not safe, and the process,
        ending, closes it."""
        if self._reader is not None and self._reader.is_alive():
            return
        self.recording.close()

    def act(self, verb: str, *args: Any) -> None:
        """A replay key (bound on the app as replay('verb', …))."""
        getattr(self, f"_act_{verb}")(*args)

    # --- moving the cursor ------------------------------------------------------------------

    def go(self, frame_id: int | None, rebuild: bool = False) -> None:
        """Show frame `frame_id`: read on a thread of its own now if nothing is being read
        and the last frame posted is on screen, else next tick. `rebuild`: the plots'
        history is read again, up to this frame. A recording is a file anyone may have
        made: however long a frame takes to read, the keys (q among them) and SIGTERM are
        answered meanwhile."""
        if frame_id is None:
            return
        busy = self._reading or (
            self._posted is not None and self._app.snapshot is not self._posted
        )
        if busy:
            keep = self._wanted[1] if self._wanted else False
            self._wanted = (frame_id, rebuild or keep)
            return
        self._wanted = None
        if frame_id == self.frame_id and not rebuild:
            return
        self._reading = True
        self._reader = reader = threading.Thread(
            target=self._read,
            args=(frame_id, rebuild, self.at),
            name="queuetop-replay-read",
            daemon=True,  # never holds the exit: the file is closed under it, it ends
        )
        reader.start()

    def _read(self, frame_id: int, rebuild: bool, before: float | None) -> None:
        """On the reading thread: the frame, its place, and (rebuild) the history's frames."""
        try:
            history = self._history_frames(frame_id) if rebuild else None
            snap = self.recording.snapshot(frame_id)
            read = Read(snap, self.recording.at_of(frame_id), history, self._place(frame_id))
        except KeyError:  # dropped by the recorder's retention meanwhile
            read = Read(gone=True)
        except UserError as exc:  # a frame that cannot be read: say so, stay where it is
            read = Read(error=str(exc))
        except Exception as exc:  # the file changed or closed under the read
            read = Read(error=f"{self.recording.path}: {type(exc).__name__}: {exc}")
        if not self._app.is_running:
            return  # the app has ended meanwhile
        try:
            self._app.call_from_thread(self._show, frame_id, before, read)
        except RuntimeError:  # it ended just now
            pass

    def _place(self, frame_id: int) -> tuple[int, int]:
        bounds = self.recording.bounds()
        return self.recording.position(frame_id), bounds.frames if bounds else 0

    def _show(self, frame_id: int, before: float | None, read: Read) -> None:
        """On the app's thread: the frame read, posted as a poll's would be."""
        self._reading = False
        if self.detached:
            return
        if read.gone:
            bounds = self.recording.bounds()
            if bounds is not None and bounds.first_id > frame_id:
                self.go(bounds.first_id, rebuild=True)
            return
        if read.error is not None:
            self._app.notify(read.error, title="replay", severity="error", markup=False)
            return
        if read.history is not None:
            self._app.history.reset()
            for snap in read.history:
                self._app.history.add(snap)
        self.frame_id, self.at = frame_id, read.at
        self._position = read.place
        if before is not None and self.at > before:
            self._notify_audit(before, self.at)
        self._posted = read.snap
        self.frames_posted += 1
        self._app.post_message(SnapshotReady(read.snap))
        self._show_header()

    def _history_frames(self, frame_id: int) -> list[Any]:
        """The plots' history: the frames before this one, as many as it holds. Where frames
        are large (a thousand locks each), every n-th is read, so that a step back stays
        within REBUILD_BUDGET_S; the plots then have fewer points over the same minutes."""
        maxlen = self._app.history.maxlen
        first = self.recording.step(frame_id, -(maxlen - 1))
        if first == frame_id:
            return []
        last = self.recording.step(frame_id, -1)
        frames = [self.recording.snapshot(first)]  # the chain is read up to here
        if last == first:
            return frames
        second = self.recording.step(first, 1)
        started = time.perf_counter()
        self.recording.snapshot(second)  # what one more frame costs
        took = time.perf_counter() - started
        count = self.recording.position(last) - self.recording.position(first)
        self.history_every = max(1, math.ceil(count * took / REBUILD_BUDGET_S))
        frames.extend(self.recording.snapshots(second, last, self.history_every))
        return frames

    def _tick(self) -> None:
        if self._wanted is not None:
            self.go(*self._wanted)
            return
        if not self.playing or self._clock is None or self.frame_id is None:
            return
        started, from_at = self._clock
        target_at = from_at + self.speed * (time.monotonic() - started)
        target = self.recording.frame_at(target_at)
        if target is not None and target > self.frame_id:
            self.go(target)  # frames passed between ticks are skipped, not queued
            return
        last = self.recording.step(self.frame_id, 1) == self.frame_id
        if last and target_at > (self.at or 0.0) + 3 * self.recording.interval:
            # no frame came while the clock moved on: the end (one still recorded goes on)
            self.playing = False
            self._clock = None
            self._note = "end of the recording"
            self._show_header()

    def _show_header(self) -> None:
        if self.on_link is not None:
            self.on_link(self.link)

    # --- the keys ---------------------------------------------------------------------------

    def _act_step(self, frames: int) -> None:
        if self.frame_id is None:
            return
        self._stop_playing()
        target = self.recording.step(self.frame_id, int(frames))
        self.go(target, rebuild=target < self.frame_id)

    def _act_jump(self, seconds: float) -> None:
        if self.at is None:
            return
        self._stop_playing()
        target = self.recording.frame_at(self.at + float(seconds))
        if seconds > 0 and target == self.frame_id:  # no frame within: the next one
            target = self.recording.step(self.frame_id, 1)
        self.go(target, rebuild=True)

    def _act_play(self) -> None:
        if self.frame_id is None:
            return
        self.playing = not self.playing
        self._note = ""
        self._clock = (time.monotonic(), self.at or 0.0) if self.playing else None
        self._show_header()

    def _act_speed(self, step: int) -> None:
        here = SPEEDS.index(self.speed)
        self.speed = SPEEDS[max(0, min(len(SPEEDS) - 1, here + int(step)))]
        if self.playing:
            self._clock = (time.monotonic(), self.at or 0.0)
        self._show_header()

    def _act_goto(self) -> None:
        screen = FilterInputScreen("Go to a time", "", f"{FORMS}; Enter goes, Escape stays")
        self._app.push_screen(screen, self.goto_text)

    def goto_text(self, text: str | None) -> None:
        """The go-to dialog's answer (also for tests)."""
        bounds = self.recording.bounds()
        if not text or bounds is None:
            return
        try:
            at = parse_when(text, bounds.first_at, bounds.last_at, "time")
        except UserError as exc:
            self._app.notify(str(exc), title="go to", severity="warning", markup=False)
            return
        self._stop_playing()
        self.go(self.recording.frame_at(at), rebuild=True)

    def _act_audit(self) -> None:
        until = self.at
        source = f"{self.recording.path} (recorded{', up to ' + local(until) if until else ''})"
        self._app.push_screen(AuditScreen(partial(self._audit_page, until, source), source))

    def _audit_page(self, until: float | None, source: str) -> AuditPage:
        return AuditPage(source, tuple(self.recording.audit(until=until, limit=AUDIT_LIMIT)))

    def _stop_playing(self) -> None:
        if self.playing:
            self.playing = False
            self._clock = None
        self._note = ""

    def _notify_audit(self, after: float, until: float) -> None:
        """The actions taken between the last frame and this one, as they happened."""
        records = [
            r
            for r in self.recording.audit(until=until, since=after, limit=50)
            if r.at.timestamp() > after
        ]
        for r in reversed(records[:NOTIFY_AUDIT]):  # newest first: the oldest shown first
            text = escape_controls(f"{r.action} {r.target}: {r.what_happened} by {r.who}")
            self._app.notify(text, title="audit (recorded)", timeout=6, markup=False)
        if len(records) > NOTIFY_AUDIT:
            self._app.notify(
                f"and {len(records) - NOTIFY_AUDIT} more: A lists them",
                title="audit (recorded)",
                timeout=6,
            )
