"""Where the dashboard's snapshots come from: a source that posts them to the app.

The app does not poll; a `SnapshotSource` does, and posts `SnapshotReady` (or
`PollFailed`) to it. The app applies the snapshot, then tells the source it
landed, and the source decides when the next one comes and what the header
says about the link (through `on_link`). The `Poller` is the source that reads a
database: one long-lived thread (ui/poll_thread.py) polls on its own monitor
connection, the next poll due once the app is done with the last one (polls never
pile up behind a slow database), a backoff after failures with a countdown in the
header.

A recording's replay is another source: `QueuetopApp(spec, source=factory)` makes
it with `factory(app, on_link=…)`; it posts the same SnapshotReady messages from
its frames on a timer of its own (app.set_interval), says `live = False` (so the
app turns the actions off and shows no job browser on a database), reports a link
such as LinkState("replay", "12:03:04") through on_link, and takes pause and
interval (the replay speed) as the poller does. `StaticSource` is the smallest
source: fixed snapshots, nothing polled. tests/test_ui_source.py drives the app
with one that replays frames.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from functools import partial
from typing import Any, Protocol

import psycopg
from psycopg import errors
from textual.timer import Timer

from dashboard import db
from dashboard.config.versions import SchemaChanged
from dashboard.errors import UserError
from dashboard.models import QueueSpec, Snapshot
from dashboard.monitor import Monitor
from dashboard.text import redact
from dashboard.ui.messages import PollFailed, SnapshotReady
from dashboard.ui.poll_thread import PollThread
from dashboard.ui.replay.source import ReplaySource
from dashboard.ui.static_source import StaticSource
from dashboard.ui.widgets.status import SCHEMA_CHANGED, LinkState

MAX_BACKOFF_S = 5.0  # a restarted server is seen within this
STOP_WAIT_S = 1.0  # how long the app's exit waits for an idle poll thread to close its link


def one_line_error(exc: BaseException) -> str:
    """An exception as one line for the header or a notification, passwords scrubbed."""
    if isinstance(exc, db.ConnectionFailed):
        return exc.reason  # the driver's reason, without the command-line advice
    if isinstance(exc, UserError) and isinstance(exc.__cause__, psycopg.Error):
        exc = exc.__cause__
    text = str(exc).strip()
    return redact.scrub(text.splitlines()[0]) if text else type(exc).__name__


def link_of(snap: Snapshot, interval: float) -> LinkState:
    """The header's state after a poll: live, slow, or which section is behind and why.

    A table locked by someone else degrades only the sections that read it: the poll
    still lands (locks, waits, idle sessions are fresh) and the header names the blocker.
    """
    behind = [s for s in snap.sections if s.error]
    if behind:
        worst = next((s for s in behind if "locked by" in s.error), behind[0])
        kind = "blocked" if "locked by" in worst.error else "timed out"
        age = "never read" if worst.age_s is None else f"{math.ceil(worst.age_s)}s old"
        return LinkState(kind, f"{worst.name} {age}", worst.error)
    if snap.elapsed_ms > interval * 1000:
        return LinkState("slow", f"poll took {snap.elapsed_ms:.0f} ms")
    return LinkState("live")


class SnapshotSource(Protocol):
    """What the app needs from whatever brings it snapshots."""

    live: bool  # a database is behind it: the recovery actions may run
    polls_started: int
    failures: int  # in a row, since the last snapshot

    def start(self) -> None: ...  # the app is mounted: bring the first snapshot
    def stop(self) -> None: ...  # the app is going: no more snapshots
    def poll_now(self) -> None: ...  # `r`
    def poll_soon(self) -> None: ...  # after an action: now, or once the one under way lands
    def request_exact(self) -> bool: ...  # `e`: count exactly next time; False if it cannot
    def pause(self, paused: bool) -> None: ...
    def set_interval(self, seconds: float) -> None: ...
    def landed(self, snap: Snapshot) -> None: ...  # the app applied a SnapshotReady
    def failed(self, message: PollFailed) -> None: ...  # the app received a PollFailed


# How the app makes its source: factory(app, on_link=…), `app` for posting messages and
# timers, `on_link` for what the header says about the link.
SourceFactory = Callable[..., SnapshotSource]


def source_factory(
    spec: QueueSpec | None,
    dsn: str | None,
    interval: float,
    poll: bool,
    source: SourceFactory | None,
    replay: Any,
) -> SourceFactory:
    """Where the app's snapshots come from: a replay's frames, the given `source`, the
    database (a Poller, when polling with a spec and a DSN), else fixed ones."""
    if replay is not None:
        return partial(ReplaySource, replay)
    if source is None and poll and spec is not None and dsn is not None:
        return partial(Poller, monitor=Monitor(spec, interval), dsn=dsn, interval=interval)
    return source or StaticSource


class Poller:
    """Polls a monitor.Monitor on its own connection for `app`; see the module docstring.

    `app` is used for its timers and message queue only.
    """

    live = True

    def __init__(
        self,
        app: Any,
        monitor: Monitor,
        dsn: str,
        interval: float,
        on_link: Callable[[LinkState], None],
    ) -> None:
        self._app = app
        self._on_link = on_link
        self.monitor = monitor
        self.dsn = dsn
        self.interval = interval
        self.conn: psycopg.Connection | None = None  # the monitor connection, in the thread
        self._runs = PollThread(self._poll, on_exit=self._drop_connection, name="queuetop-poll")
        self.paused = False
        self.polls_started = 0
        self.failures = 0
        self.link = LinkState("connecting")
        self._landed_once = False
        self._again = False  # poll again as soon as the one under way lands
        self._new_timeouts = False  # reconnect: statement timeouts follow the interval
        self._countdown: Timer | None = None
        self._retry_at: float | None = None  # when a failed poll is retried
        on_link(self.link)

    @property
    def in_flight(self) -> bool:
        """A poll started and its result not handled yet."""
        return self._runs.busy

    @property
    def retrying(self) -> bool:
        """A failed poll's retry is counting down in the header."""
        return self._countdown is not None

    # --- what the app calls ---------------------------------------------------------------

    def start(self) -> None:
        self._start()

    def stop(self) -> None:
        """No more polls; the thread closes the connection as it ends (at once when idle; an
        in-flight poll ends within its statement timeout first)."""
        self._stop_countdown()
        self._runs.stop(wait_s=0.0 if self.in_flight else STOP_WAIT_S)

    def poll_now(self) -> None:
        self._start()

    def poll_soon(self) -> None:
        """Poll now; if a poll is under way (it may predate a change), once it lands."""
        if self.in_flight:
            self._again = True
        else:
            self._start()

    def request_exact(self) -> bool:
        self.monitor.request_exact()
        self._start()
        return True

    def pause(self, paused: bool) -> None:
        self.paused = paused
        if paused:
            self._cancel_timer()
            self._stop_countdown()
            self._set_link(LinkState("paused"))
        else:
            self._set_link(LinkState("live" if self._landed_once else "connecting"))
            self._start()

    def set_interval(self, seconds: float) -> None:
        self.interval = seconds
        self._new_timeouts = True  # the next poll reconnects with timeouts under it
        if not self.in_flight:
            self._arm(min(seconds, 0.2))

    def landed(self, snap: Snapshot) -> None:
        self._runs.done()
        self._landed_once = True
        self.failures = 0
        self._stop_countdown()
        self._set_link(LinkState("paused") if self.paused else link_of(snap, self.interval))
        if self._again and not self.paused:
            self._again = False
            self._start()
        else:
            self._arm(self.interval)

    def failed(self, message: PollFailed) -> None:
        self._runs.done()
        self.failures += 1
        delay = min(self.interval * 2 ** (self.failures - 1), MAX_BACKOFF_S)
        self._set_link(LinkState(message.kind, f"retrying in {math.ceil(delay)}s", message.reason))
        self._arm(delay)
        if self.paused:
            return
        self._retry_at = time.monotonic() + delay
        if self._countdown is None:
            self._countdown = self._app.set_interval(1.0, self._count_down)

    # --- the poll, on the poll thread -----------------------------------------------------------

    def _poll(self) -> None:
        """One poll on the monitor connection, opened (again) if needed; its result posted
        to the app as a message."""
        post = self._app.post_message
        self.polls_started += 1
        if self._retry_at is not None:  # the header says so while the retry runs
            self._app.call_later(self._retrying_now)
        try:
            if self._new_timeouts:
                self._new_timeouts = False
                self._drop_connection()
            snap = self._collect_reconnecting()
        except errors.QueryCanceled as exc:  # statement timeout: slow, still connected
            post(PollFailed(one_line_error(exc), "timed out"))
            return
        except errors.LockNotAvailable as exc:  # lock timeout: e.g. a LOCK TABLE on the queue
            post(PollFailed(one_line_error(exc), "blocked"))
            return
        except SchemaChanged as exc:  # the connection is fine: the spec no longer maps it
            post(PollFailed(one_line_error(exc), SCHEMA_CHANGED))
            return
        except (psycopg.OperationalError, UserError, OSError) as exc:
            self._drop_connection()
            post(PollFailed(one_line_error(exc), "disconnected"))
            return
        except psycopg.Error as exc:  # e.g. the queue table was dropped or renamed
            self._drop_connection()
            post(PollFailed(one_line_error(exc), "error"))
            return
        except Exception as exc:  # a bug, not the database: the header says so, polling goes on
            post(PollFailed(one_line_error(exc), "internal error"))
            return
        post(SnapshotReady(snap))

    def _collect(self) -> Snapshot:
        if self.conn is None or self.conn.closed:
            timeout_ms = db.monitor_timeout_ms(self.interval)
            self.conn = db.connect_monitor(self.dsn, timeout_ms=timeout_ms)
        self.monitor.interval = self.interval
        return self.monitor.poll(self.conn)

    def _collect_reconnecting(self) -> Snapshot:
        """A connection that was fine and is lost now (a terminated backend, a restart, a
        network blip) is opened again at once, not after a backoff: the server is most
        likely there. Only if that fails too does the poll fail (and back off)."""
        had = self.conn is not None and not self.conn.closed
        try:
            return self._collect()
        except (psycopg.OperationalError, OSError):
            lost = self.conn is not None and (self.conn.broken or self.conn.closed)
            if not (had and lost):  # a timeout on a live connection, or no server at all
                raise
        self._drop_connection()
        return self._collect()

    def _drop_connection(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                conn.close()
            except psycopg.Error:  # already broken; closing is best effort
                pass

    # --- timers -------------------------------------------------------------------------------

    def _start(self) -> None:
        """A poll now, unless one is under way."""
        self._runs.run_in(0.0)

    def _arm(self, delay: float) -> None:
        """The next poll starts `delay` after the last one ended, never on top of it."""
        self._runs.run_in(None if self.paused else delay)

    def _cancel_timer(self) -> None:
        self._runs.run_in(None)

    def _retrying_now(self) -> None:
        if self._retry_at is not None:
            self._retry_at = None
            self._set_link(LinkState(self.link.kind, "retrying now", self.link.reason))

    def _count_down(self) -> None:
        """The header's 'retrying in Ns' counts down, not frozen at the backoff it began at."""
        if self._retry_at is None:
            return
        left = math.ceil(self._retry_at - time.monotonic())
        if left >= 1:
            self._set_link(LinkState(self.link.kind, f"retrying in {left}s", self.link.reason))

    def _stop_countdown(self) -> None:
        self._retry_at = None
        if self._countdown is not None:
            self._countdown.stop()
            self._countdown = None

    def _set_link(self, link: LinkState) -> None:
        self.link = link
        self._on_link(link)
