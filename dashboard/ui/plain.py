"""Untrusted text on screen: always plain, its control characters escaped.

A status value, a job id, a worker name, a query or a reason comes from the database (or
a spec, the audit trail, a worker) and may hold Textual/Rich markup (`[@click=…]` runs an
action when clicked) or terminal controls (ESC ] 52 sets the clipboard). Whatever shows
it goes through here: `plain()` makes a `Text`, which no widget parses as markup, from
the escaped value; `PlainApp`, the base of queuetop's apps, makes every notification
plain the same way, so that no caller of `notify` can forget.
"""

from __future__ import annotations

from typing import Any, TypeVar

from rich.style import Style
from rich.text import Text
from textual.app import App
from textual.driver import Driver
from textual.notifications import SeverityLevel
from textual.screen import Screen

from dashboard.text.untrusted import escape_controls, shown


def plain(value: object, style: str | Style = "", **options: Any) -> Text:
    """`value` as a Text: never markup, control characters escaped, None as '-'."""
    return Text(shown(value), style=style, **options)


def plain_lines(value: object, style: str | Style = "", **options: Any) -> Text:
    """As `plain`, newlines kept (a multi-line value shown whole)."""
    return Text(shown(value, keep_newlines=True), style=style, **options)


ReturnType = TypeVar("ReturnType")


class PlainApp(App[ReturnType]):
    """An App whose every notification is plain text, message and title escaped, never
    markup. Widgets' and screens' `notify` call the app's, so this is the one place for all
    of them (a status value in a warning, a job id in a result, an error from the server).
    """

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,  # noqa: ARG002 (ignored: untrusted text is never markup)
    ) -> None:
        super().notify(
            escape_controls(str(message), keep_newlines=True),
            title=escape_controls(str(title)),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    def get_default_screen(self) -> Screen:
        """Textual's default screen; with the `compositor` piece on (forks/compositor.py),
        drawn by a compositor that renders only the lines a partial update changes."""
        from dashboard.ui.forks.compositor import screen_class

        return screen_class()(id="_default")

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver; with the `driver` piece on (forks/driver.py), on a Linux/macOS
        terminal one whose input thread sleeps between keys. A driver chosen by
        TEXTUAL_DRIVER (serve, tests) is kept."""
        from dashboard.ui import forks
        from dashboard.ui.forks.driver import driver_class

        forks.stock()  # each piece decided (and under --debug, said) before the terminal
        # is taken
        return driver_class(super().get_driver_class())
