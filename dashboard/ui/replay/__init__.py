"""Replay: the dashboard driven by a recording instead of polls (see driver.ReplayDriver)."""

from dashboard.ui.replay.driver import ReplayDriver

__all__ = ["ReplayDriver"]
