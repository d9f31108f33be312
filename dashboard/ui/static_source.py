"""StaticSource: fixed snapshots (tests, screenshots), and the base of a source whose
snapshots are not polled (the replay's): every polling call does nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dashboard.models import Snapshot
from dashboard.ui.messages import PollFailed
from dashboard.ui.widgets.status import LinkState


class StaticSource:
    """Fixed snapshots (tests, screenshots): nothing is polled, the header says static."""

    live = False
    polls_started = 0
    failures = 0

    def __init__(self, app: Any, on_link: Callable[[LinkState], None]) -> None:
        on_link(LinkState("static"))

    def start(self) -> None:
        pass

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
