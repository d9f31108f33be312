"""Rewind: the live dashboard's last minutes (recorder.rewind.RewindBuffer), opened in the
replay view at "now" by `h`; Escape comes back to the live dashboard, which kept polling.

The app keeps feeding the buffer every snapshot it applies (keep()). `h` copies what the
buffer holds into a private temporary recording (a directory of its own, mode 0700, removed
on Escape) and points a ReplayDriver at it: the app then shows its frames as `queuetop
replay` does, with the replay's keys (, . < > g p + -). Meanwhile the live polls go on:
each lands with the poller as usual, goes to the buffer and the recorder (watch --record),
and to a copy of the plots' history, but is not drawn. Escape stops the driver, gives the
plots their live history back and draws the last live snapshot. The recovery actions and
the load generator's knobs are off while a rewind shows (A lists the live audit trail); `s`
saves the rewind as a recording, asking where (never over a file without asking, and only
over a recording queuetop wrote for this user: own_file's rules).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from dashboard.errors import UserError
from dashboard.models import Snapshot
from dashboard.recorder import Recording, own_file, store
from dashboard.recorder.rewind import Frame, RewindBuffer, save
from dashboard.ui.jobs_tab.screens import FilterInputScreen
from dashboard.ui.loadgen_controls import LOADGEN_KNOBS
from dashboard.ui.replay.driver import ReplayDriver, local
from dashboard.ui.replay.replace_screen import ReplaceFileScreen
from dashboard.ui.widgets.status import LinkState

# what acts on the database or the load while the screen shows the past: off meanwhile
OFF_WHILE_OPEN = frozenset(
    ("requeue_stale", "dead_letter_stale", "signal_session", "lookup_jobs", "open_lab")
) | frozenset(LOADGEN_KNOBS)
OFF = "rewind is off (--rewind 0): start the dashboard with --rewind 15m to keep its last minutes"


def span_text(seconds: float) -> str:
    """90 -> '1m30s'."""
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def default_name(directory: Path) -> str:
    """A file name in `directory` that is not taken: queuetop-rewind-20260115-093000.qtr."""
    stem = f"queuetop-rewind-{datetime.now():%Y%m%d-%H%M%S}"
    name, n = f"{stem}.qtr", 1
    while os.path.lexists(directory / name):
        n += 1
        name = f"{stem}-{n}.qtr"
    return name


class Rewind:
    """The app's rewind; `buffer` None when --rewind 0 (the key then says so)."""

    def __init__(self, app: Any, buffer: RewindBuffer | None) -> None:
        self._app = app
        self.buffer = buffer
        self.driver: ReplayDriver | None = None  # while open
        self.opening = False
        self.live_link: LinkState | None = None  # the poller's, kept while the rewind shows
        self._live_history: Any = None
        self._live_snap: Snapshot | None = None
        self._frames: list[Frame] = []  # what the rewind shows (and `s` saves)
        self._dir: str | None = None  # its temporary recording's directory
        self._stale: Any = None  # a frame posted before Escape, dropped when it lands

    @property
    def open(self) -> bool:
        return self.driver is not None

    # --- what the app asks ------------------------------------------------------------------

    def keep(self, snap: Snapshot) -> None:
        """A live snapshot, into the buffer (encoded on its own thread)."""
        if self.buffer is not None:
            self.buffer.add(snap)

    def act(self, verb: str) -> None:
        """A rewind key (bound on the app as rewind('verb'))."""
        {"open": self.start, "back": self.back, "save": self.ask_save}[verb]()

    def allows(self, action: str, parameters: tuple) -> bool | None:
        """For the app's check_action: the rewind's keys, and what is off while it shows;
        None where the rewind has no say."""
        if action == "rewind":
            return self._shows_key(parameters[0] if parameters else "open")
        if not self.open:
            return None
        if action in OFF_WHILE_OPEN:
            return False
        if action == "replay" and parameters[:1] == ("audit",):
            return False  # A: the live audit trail, which covers the rewind's minutes too
        return None

    def _shows_key(self, verb: str) -> bool:
        if verb == "open":  # not in `queuetop replay`, nor while it opens or shows
            return self._app.replay is None and not self.opening
        return self.open  # Escape and s: while it shows

    def listed(self, action: str) -> bool:
        """For the help screen: the rewind's keys in a live dashboard (its Escape and s
        said to be the rewind's), all of them but h while it shows, none in a replay."""
        if action == "replay('audit')":
            return not self.open  # A: the live audit trail while the rewind shows
        if not action.startswith("rewind("):
            return True
        if action == "rewind('open')":
            return self._shows_key("open")
        return self.open or self._app.replay is None

    def takes(self, snap: Snapshot) -> bool:
        """While the rewind is open, every SnapshotReady is its to handle: a frame it posted
        is drawn, a live poll is kept (buffer, recorder, history) and not drawn."""
        if snap is self._stale and snap is not None:
            self._stale = None
            return True
        if self.driver is None:
            return False
        if snap is self.driver._posted:
            self._app.draw_snapshot(snap)
            return True
        self._app.source.landed(snap)
        self._app.keep_snapshot(snap)
        self._live_history.add(snap)
        self._live_snap = snap
        return True

    def link(self, link: LinkState) -> bool:
        """The poller's link while the rewind shows: kept for Escape; True if taken."""
        if not self.open:
            return False
        self.live_link = link
        return True

    # --- h: open ----------------------------------------------------------------------------

    def start(self) -> None:
        app = self._app
        if self.buffer is None:
            app.notify(OFF, title="rewind", severity="warning", timeout=6)
            return
        if app.spec is None:
            app.notify("no queue spec: nothing to rewind", title="rewind", severity="warning")
            return
        self.opening = True
        app.refresh_bindings()
        spec, interval = app.spec, app.interval
        app.run_worker(
            partial(self._copy, spec, interval), group="rewind", thread=True, exit_on_error=False
        )

    def _copy(self, spec: Any, interval: float) -> None:
        """On a thread: what the buffer holds, into a temporary recording, opened."""
        home = tempfile.mkdtemp(prefix="queuetop-rewind-")  # 0700: the file holds query text
        try:
            frames = self.buffer.frames()
            if not frames:
                raise UserError("nothing kept yet: the rewind holds the polls from now on")
            path = save(Path(home) / "rewind.qtr", spec, interval, frames)
            recording = Recording(path)
        except (UserError, OSError, sqlite3.Error, *store.UNREADABLE) as exc:
            shutil.rmtree(home, ignore_errors=True)
            self._tell(self._failed, str(exc))
            return
        if not self._tell(self._opened, recording, home, frames):  # the app ended meanwhile
            recording.close()
            shutil.rmtree(home, ignore_errors=True)

    def _tell(self, callback: Any, *args: Any) -> bool:
        """Run `callback` on the app's thread; False when the app has ended."""
        try:
            self._app.call_from_thread(callback, *args)
        except RuntimeError:
            return False
        return True

    def _failed(self, why: str) -> None:
        self.opening = False
        self._app.refresh_bindings()
        self._app.notify(why, title="rewind", severity="warning", timeout=6, markup=False)

    def _opened(self, recording: Recording, home: str, frames: list[Frame]) -> None:
        self.opening = False
        app = self._app
        bounds = recording.bounds()
        if not app.is_running or bounds is None:
            recording.close()
            shutil.rmtree(home, ignore_errors=True)
            return
        self._frames, self._dir = frames, home
        self._live_history = app.history.copy()
        self._live_snap = app.snapshot
        self.live_link = app.link
        driver = ReplayDriver(recording, start_at=bounds.last_at)
        driver.on_link = self._show_link
        self.driver = driver
        app.replay = driver  # the replay's keys, and the live-only ones off
        driver.attach(app)
        app.view.fit(app.size.width, app.size.height)  # a narrow footer: the replay's keys
        app.refresh_bindings()
        span = span_text(bounds.seconds)
        capped = ""
        if bounds.seconds + 2 * app.interval < self.buffer.span_s:
            capped = f" (of {span_text(self.buffer.span_s)} asked: all it holds)"
        stats = self.buffer.stats
        if stats.dropped or stats.too_big or stats.error:  # gaps in it: said, never hidden
            missed = stats.dropped + stats.too_big
            capped += f" ({missed} polls not kept{': ' + stats.error if stats.error else ''})"
        app.notify(
            f"{len(frames)} frames, {span} back to {local(bounds.first_at)}{capped}; "
            ", steps back, < a minute, p plays, s saves, Escape: live",
            title="rewind",
            timeout=8,
            markup=False,  # the buffer's error may quote anything
        )

    def _show_link(self, link: LinkState) -> None:
        if self.open:
            self._app.link = LinkState("REWIND", f"{link.detail} · Esc: live", link.reason)

    # --- Escape: back to live ---------------------------------------------------------------

    def back(self) -> None:
        driver = self.driver
        if driver is None:
            return
        app = self._app
        driver.detach()
        # posted and not drawn yet: dropped when it lands (the driver posts one at a time)
        self._stale = driver._posted if app.snapshot is not driver._posted else None
        self.driver = None
        app.replay = None
        app.history.restore(self._live_history)
        self._live_history = None
        if self.live_link is not None:
            app.link = self.live_link
        self.live_link = None
        if self._live_snap is not None:
            app.draw_snapshot(self._live_snap, history=False)  # already in the live history
        self._live_snap = None
        app.view.fit(app.size.width, app.size.height)
        app.refresh_bindings()
        self._close(driver)

    def _close(self, driver: ReplayDriver) -> None:
        driver.close()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)  # a read under way keeps its handle
            self._dir = None
        self._frames = []

    def stop(self) -> None:
        """The app is going: the rewind closed, the buffer's thread stopped."""
        if self.driver is not None:
            self.driver.detach()
            self._close(self.driver)
            self.driver = None
        if self.buffer is not None:
            self.buffer.close()

    # --- s: save ----------------------------------------------------------------------------

    def ask_save(self) -> None:
        if not self._frames:
            return
        where = Path.cwd()
        first, last = self._frames[0].at, self._frames[-1].at
        hint = (
            f"{len(self._frames)} frames, {local(first)} to {local(last)}; a file name "
            f"(in {where}) or a path. Enter saves, Escape cancels; an existing file is "
            "replaced only if you say so"
        )
        screen = FilterInputScreen("Save the rewind as a recording", default_name(where), hint)
        self._app.push_screen(screen, self.save_to)

    def save_to(self, text: str | None) -> None:
        """The save dialog's answer (also for tests): a new file is written at once; a
        recording of yours there is replaced once you say yes; anything else is refused."""
        if not text or not self._frames:
            return
        path = Path(text).expanduser()
        frames = list(self._frames)
        if not os.path.lexists(path):
            self._write(path, frames, replace=False)
            return
        try:
            own_file.check_replaceable(path)
        except UserError as exc:
            self._app.notify(str(exc), title="save", severity="error", timeout=10, markup=False)
            return
        answer = partial(self._replace_answer, path, frames)
        self._app.push_screen(ReplaceFileScreen(str(path), len(frames)), answer)

    def _replace_answer(self, path: Path, frames: list[Frame], yes: bool | None) -> None:
        if yes:
            self._write(path, frames, replace=True)
        else:
            self._app.notify(
                f"{path} kept as it was; nothing saved", title="save", timeout=5, markup=False
            )

    def _write(self, path: Path, frames: list[Frame], replace: bool) -> None:
        app = self._app
        spec, interval = app.spec, app.interval
        version = self.buffer.version() if self.buffer is not None else ""
        work = partial(self._saving, path, spec, interval, frames, replace, version)
        app.run_worker(work, group="rewind-save", thread=True, exit_on_error=False)

    def _saving(self, path, spec, interval, frames, replace, version) -> None:
        try:
            save(path, spec, interval, frames, replace=replace, version=version)
        except (UserError, OSError, sqlite3.Error) as exc:
            why = str(exc) if isinstance(exc, UserError) else f"cannot save {path}: {exc}"
            self._tell(partial(self._app.notify, why, title="save", severity="error", timeout=10))
            return
        saved = f"{len(frames)} frames saved to {path}: queuetop replay {path} opens it"
        self._tell(partial(self._app.notify, saved, title="save", timeout=10))
