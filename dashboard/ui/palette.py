"""The command palette (Ctrl+P): every key of the dashboard, the table keys too.

The app's own bindings run as they are. The stale-lease keys (mark, requeue,
dead-letter) act on the stale-lease table, shown first so the operator sees what
they act on; the job browser's keys on the browser, shown first too; cancel and
terminate act on the session under the cursor of the waiting or idle table,
whichever tab is open.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from textual.app import SystemCommand
from textual.binding import Binding
from textual.widgets import TabbedContent

from dashboard.ui.layout import PANELS
from dashboard.ui.screens.help import keys_text
from dashboard.ui.widgets.tables import StaleLeaseTable, session_bindings

SESSION_TABLES = ("waiting", "idle")


def _command(title: str, help_text: str, run: Callable[[], Any]) -> SystemCommand:
    return SystemCommand(title, help_text, run)


def app_commands(app: Any, bindings: Iterable[Binding]) -> Iterable[SystemCommand]:
    """One command per app binding the app allows now (quit is Textual's own)."""
    for b in bindings:
        if b.action == "quit" or not app.check_action(b.action, ()):
            continue
        yield _command(
            b.description,
            f"{b.tooltip} (key {keys_text(b.key)})",
            lambda action=b.action: app.call_later(app.run_action, action),
        )


def stale_lease_commands(app: Any) -> Iterable[SystemCommand]:
    """Mark, mark all, unmark all, requeue, dead-letter: on the stale-lease table."""
    for b in StaleLeaseTable.BINDINGS:
        action = b.action
        if action.startswith("app.") and not app.check_action(action[4:], ()):
            continue

        def run(action: str = action) -> None:
            app.call_later(app.action_show_panel, "stale")
            if action.startswith("app."):
                app.call_later(app.run_action, action[4:])
            else:
                app.call_later(app.stale_table.run_action, action)

        yield _command(
            f"{b.description} (stale leases)", f"{b.tooltip} (key {keys_text(b.key)} in tab 4)", run
        )


def browser_commands(app: Any) -> Iterable[SystemCommand]:
    """Role, order, filters, pages, marks and the actions of the job browser (tab b)."""
    from dashboard.ui.jobs_tab import JobBrowser

    if app.spec is None or app.browser_source is None:
        return
    for b in JobBrowser.BINDINGS:

        def run(action: str = b.action) -> None:
            app.call_later(app.action_show_browser)
            app.call_later(app.browser.run_action, action)

        yield _command(
            f"{b.description} (job browser)",
            f"{b.tooltip} (key {keys_text(b.key)} in the job browser, b)",
            run,
        )


def session_commands(app: Any) -> Iterable[SystemCommand]:
    """Cancel query and terminate: the session under the cursor of tab 2 or 3."""
    if not app.check_action("signal_session", ()):
        return
    for b in session_bindings("waiting"):
        what = "cancel" if "'cancel'" in b.action else "terminate"
        yield _command(
            f"{b.description} (session)",
            f"{b.tooltip} of the waiting or idle tab (key {keys_text(b.key)} in tabs 2 and 3)",
            lambda what=what: app.call_later(signal_open_session, app, what),
        )


def signal_open_session(app: Any, action: str) -> None:
    """Cancel or terminate from the palette: the session under the open tab's cursor."""
    active = app.query_one(TabbedContent).active
    table_id = next((t for p, t, _ in PANELS if p == active), None)
    if table_id not in SESSION_TABLES:
        app.notify(
            f"{action}: open tab 2 (waiting) or 3 (idle) and put the cursor on the session first",
            severity="warning",
            timeout=6,
        )
        return
    app.action_signal_session(action, table_id)
