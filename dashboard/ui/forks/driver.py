"""The `driver` piece's switch: the terminal driver of queuetop's apps on Linux/macOS."""

from __future__ import annotations

from textual.driver import Driver

from dashboard.ui.forks import use


def probe() -> type[Driver]:
    """QuietLinuxDriver, if the LinuxDriver it forks still has what it overrides."""
    from textual.drivers.linux_driver import LinuxDriver

    from dashboard.ui.forks.quiet_driver import QuietLinuxDriver

    LinuxDriver.run_input_thread  # noqa: B018 (AttributeError: gone)
    return QuietLinuxDriver


def driver_class(chosen: type[Driver]) -> type[Driver]:
    """QuietLinuxDriver (forks/quiet_driver.py) in place of Textual's LinuxDriver when the
    piece is on; any other driver (TEXTUAL_DRIVER: serve, tests), or the piece off, is
    kept."""
    if chosen.__name__ != "LinuxDriver":  # not imported elsewhere: it needs termios
        return chosen
    quiet = use("driver", probe)
    if quiet is not None and issubclass(quiet, chosen):
        return quiet
    return chosen
