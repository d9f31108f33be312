"""The main screen's widgets as the app drives them: each snapshot drawn into every panel
once, the layout fitted to the terminal, the tab labels, and which tab is in front.

The app owns one MainView and calls it; the view keeps no state of the dashboard's own
but the widest count each tab label has shown (see tab_labels.counted_label).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.app import ScreenStackError
from textual.css.query import NoMatches
from textual.widgets import Tab, TabbedContent

from dashboard.models import LoadState, QueueSpec, Snapshot
from dashboard.ui import layout
from dashboard.ui.jobs_tab import JobBrowser
from dashboard.ui.layout import BROWSER_TAB, PANELS
from dashboard.ui.screens.audit import AuditScreen
from dashboard.ui.widgets.keyedtable import KeyedTable
from dashboard.ui.widgets.latency_panel import LatencyPanel
from dashboard.ui.widgets.loadgen_panel import RecordedLoadStrip
from dashboard.ui.widgets.plots import HistoryPlot
from dashboard.ui.widgets.state_panel import StatePanel
from dashboard.ui.widgets.status import StatusBar
from dashboard.ui.widgets.tables import LocksTable, StaleLeaseTable
from dashboard.ui.widgets.unknowns_bar import UnknownsBar


@dataclass(frozen=True)
class Panels:
    bar: StatusBar
    unknowns: UnknownsBar
    state: StatePanel
    latency: LatencyPanel
    plots: tuple[HistoryPlot, ...]
    tabs: tuple[tuple[KeyedTable, Tab], ...]  # each panel's table and its tab


class MainView:
    """The panels of `app`'s main screen (its default screen) for `spec`; `load` is the
    load generator's controls, or None."""

    def __init__(self, app: Any, spec: QueueSpec | None, load: Any) -> None:
        self._app = app
        self._spec = spec
        self._load = load
        self._count_digits: dict[str, int] = {}  # per tab: see layout.label_tabs
        self._panels: Panels | None = None  # found once: a query walks the DOM

    # --- the widgets -------------------------------------------------------------------------

    def table(self, table_id: str) -> KeyedTable:
        return self._app.query_one(f"#{table_id}", KeyedTable)

    def _drawn(self) -> Panels:
        """The widgets a poll draws into, found once (the main screen composes them once):
        querying them on every poll was a third of the time a snapshot took to draw."""
        if self._panels is None or not self._panels.state.is_attached:
            app = self._app
            self._panels = Panels(
                app.query_one(StatusBar),
                app.query_one(UnknownsBar),
                app.query_one(StatePanel),
                app.query_one(LatencyPanel),
                tuple(app.query(HistoryPlot)),
                layout.panel_tabs(app.default_screen),
            )
        return self._panels

    @property
    def stale_table(self) -> StaleLeaseTable:
        return self._app.query_one("#stale", StaleLeaseTable)

    @property
    def browser(self) -> JobBrowser:
        return self._app.query_one(JobBrowser)

    # --- what the snapshot feeds ---------------------------------------------------------------

    def active_groups(self) -> list[str]:
        snap = self._app.snapshot
        return [g.name for g in snap.groups] if snap else []

    def role_counts(self) -> dict[str, int]:
        snap = self._app.snapshot
        return dict(snap.counts) if snap else {}

    def draw(self, snap: Snapshot) -> None:
        """Every panel from one snapshot, each once; a panel whose content did not change
        draws nothing (the plots replot only what moved, the tables are diffed)."""
        drawn = self._drawn()
        drawn.unknowns.show(snap)
        drawn.state.show(snap, self._spec)
        drawn.latency.show(snap, self._spec)
        for plot in drawn.plots:  # a hidden one waits until it is shown
            plot.replot()
        for table, _ in drawn.tabs:
            table.update_from(snap)
        if self._load is not None:
            self._load.show_waiting(len(snap.waiting))
        self.label_tabs()

    def draw_header(self) -> None:
        """The header from the app's state (its watchers call this, nobody else)."""
        app = self._app
        try:
            bar = self._drawn().bar
        except (NoMatches, ScreenStackError):  # not composed yet, or torn down
            return
        bar.show(
            snap=app.snapshot,
            fallback=(app.dsn, self._spec),
            interval=app.interval,
            link=app.link,
            read_only=app.read_only,
            actions=app.actions_note,
        )

    def label_tabs(self) -> None:
        screen = self._app.default_screen
        layout.label_tabs(screen, self._spec, self._count_digits, self._drawn().tabs)

    def fit(self, width: int, height: int) -> None:
        """The layout for a terminal of this size (and the labels that go with it)."""
        layout.fit(self._app.default_screen, width, height, self._load)
        if self._app.snapshot is not None:
            self.label_tabs()

    # --- the tabs ----------------------------------------------------------------------------

    def toggle_lock_filter(self) -> str:
        """The sessions tabs' filter the other way (queue sessions / whole database: locks,
        waiting and idle alike): what they show now."""
        locks = self._app.query_one(LocksTable)
        scoped = (locks, self.table("waiting"), self.table("idle"))
        locks.queue_only = not locks.queue_only
        for table in scoped[1:]:
            table.queue_only = locks.queue_only
        if self._app.snapshot is not None:
            for table in scoped:
                table.update_from(self._app.snapshot)
            self.label_tabs()
        return locks.describe()

    def show_recorded_load(self, load: LoadState) -> None:
        """A replayed demo: the generator's knobs and rates in a strip, and the stale leases
        its crashes made marked as the live demo marks them."""
        self._app.query_one(RecordedLoadStrip).show(load)
        self.stale_table.set_crash_causes(dict(load.crashes))

    def show_panel(self, table_id: str) -> None:
        pane_id = next(p for p, t, _ in PANELS if t == table_id)
        self._app.query_one(TabbedContent).active = pane_id
        self.table(table_id).focus()

    def show_browser(self) -> None:
        self._app.query_one(TabbedContent).active = BROWSER_TAB
        self.browser.table.focus()
        self.browser.ensure_loaded()

    def tab_activated(self, pane_id: str | None) -> None:
        if pane_id == BROWSER_TAB:  # a click on the tab: the first page then
            self.browser.ensure_loaded()

    def after_action(self) -> None:
        """After an action: an audit screen left open reads its trail again, and the job
        browser its page."""
        for screen in self._app.screen_stack:
            if isinstance(screen, AuditScreen):
                screen.reload()
        if self._spec is not None:
            self.browser.after_action()
