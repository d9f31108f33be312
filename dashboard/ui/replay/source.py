"""ReplaySource: the app's snapshot source during `queuetop replay` (see poller.SnapshotSource).

No database is behind it (`live` is False: the recovery actions are off, the job browser
has nothing to read). The driver posts the recorded frames and says what the header shows;
the replay's own keys (p + - , . < > g A) move it, so the live polling calls do nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dashboard.models import Snapshot
from dashboard.ui.messages import PollFailed
from dashboard.ui.replay.driver import ReplayDriver
from dashboard.ui.widgets.status import LinkState


class ReplaySource:
    live = False
    polls_started = 0
    failures = 0

    def __init__(self, driver: ReplayDriver, app: Any, on_link: Callable[[LinkState], None]):
        self.driver = driver
        self._app = app
        driver.on_link = on_link
        on_link(driver.link)

    def start(self) -> None:
        self.driver.attach(self._app)

    def stop(self) -> None:
        pass

    def poll_now(self) -> None:
        pass

    def poll_soon(self) -> None:
        pass

    def request_exact(self) -> bool:
        return False

    def pause(self, paused: bool) -> None:
        pass

    def set_interval(self, seconds: float) -> None:
        pass

    def landed(self, snap: Snapshot) -> None:
        pass

    def failed(self, message: PollFailed) -> None:
        pass

    def crashed(self, error: BaseException | None) -> None:
        pass
