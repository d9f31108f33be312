"""ReplaySource: the app's snapshot source during `queuetop replay` (see poller.SnapshotSource).

No database is behind it (`live` is False: the recovery actions are off, the job browser
has nothing to read). The driver posts the recorded frames and says what the header shows;
the replay's own keys (p + - , . < > g A) move it, so the live polling calls do nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dashboard.ui.replay.driver import ReplayDriver
from dashboard.ui.static_source import StaticSource
from dashboard.ui.widgets.status import LinkState


class ReplaySource(StaticSource):
    """No polling: the driver posts the frames (StaticSource's calls do nothing)."""

    def __init__(self, driver: ReplayDriver, app: Any, on_link: Callable[[LinkState], None]):
        self.driver = driver
        self._app = app
        driver.on_link = on_link
        on_link(driver.link)

    def start(self) -> None:
        self.driver.attach(self._app)
