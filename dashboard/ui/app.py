"""QueuetopApp: the live dashboard over monitor.collect()."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

import psycopg
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Grid, Horizontal
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Static, TabbedContent, TabPane

from dashboard import db
from dashboard.audit.trail import AUDIT_NAME, read_latest
from dashboard.browse.source import DatabaseSource
from dashboard.models import QueueSpec, Snapshot
from dashboard.monitor import Monitor
from dashboard.ui import gc_tuning, key_sections, palette
from dashboard.ui.history import History
from dashboard.ui.jobs_tab import JobBrowser
from dashboard.ui.loadgen_controls import LOADGEN_BINDINGS, LoadGenControls
from dashboard.ui.poller import PollingMixin
from dashboard.ui.recovery import RecoveryMixin
from dashboard.ui.replay.keys import REPLAY_BINDINGS, replay_allows
from dashboard.ui.screens.audit import LIMIT as AUDIT_LIMIT
from dashboard.ui.screens.audit import AuditScreen
from dashboard.ui.screens.detail import DetailScreen
from dashboard.ui.screens.help import HelpScreen
from dashboard.ui.signals import exit_on_signals
from dashboard.ui.tab_labels import counted_label, relabel
from dashboard.ui.widgets.keyedtable import KeyedTable
from dashboard.ui.widgets.plots import (
    DepthPlot,
    HistoryPlot,
    OldestReadyPlot,
    ThroughputPlot,
    WaitingPlot,
)
from dashboard.ui.widgets.state_panel import StatePanel
from dashboard.ui.widgets.status import LinkState, StatusBar
from dashboard.ui.widgets.tables import (
    IdleTable,
    LocksTable,
    StaleLeaseTable,
    WaitingTable,
    stale_unknown_text,
)

PANEL_KEYS = Binding.Group("Panels", compact=True)
SPEED_KEYS = Binding.Group("Speed")
INTERVALS = (0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
# (pane id, table id, table class) in tab order; keys 1-4 follow it
PANELS = (
    ("tab-locks", "locks", LocksTable),
    ("tab-waiting", "waiting", WaitingTable),
    ("tab-idle", "idle", IdleTable),
    ("tab-stale", "stale", StaleLeaseTable),
)
BROWSER_TAB = "tab-jobs"


class QueuetopApp(RecoveryMixin, LoadGenControls, PollingMixin, App):
    """The main screen: header, state panel, history plots, and four diffed tables.

    `snapshots` feeds fixed snapshots (tests, screenshots); `poll=False` never touches a
    database. `read_only` and `loadgen` are for the recovery actions and the load generator.
    """

    CSS_PATH = "app.tcss"
    TITLE = "queuetop"
    BINDINGS = [
        Binding("q", "quit", "Quit", tooltip="Quit queuetop"),
        # like top and pg_activity, from anywhere (a dialog's input would copy instead)
        Binding(
            "ctrl+c",
            "quit",
            "Quit",
            show=False,
            priority=True,
            tooltip="Quit queuetop, from any screen or dialog",
        ),
        Binding(
            "question_mark,f1", "help", "Help", key_display="?", tooltip="Show every key binding"
        ),
        Binding("p", "toggle_pause", "Pause", tooltip="Pause or resume polling"),
        Binding("r", "refresh_now", "Poll", tooltip="Poll now"),
        Binding(
            "e",
            "exact_counts",
            "Exact",
            tooltip="Count every state exactly on the next "
            "poll (above exact_count_limit finished states are estimates, marked ~)",
        ),
        Binding(
            "plus,equals_sign",
            "faster",
            "Faster",
            key_display="+",
            tooltip="Refresh more often",
            group=SPEED_KEYS,
        ),
        Binding(
            "minus",
            "slower",
            "Slower",
            key_display="-",
            tooltip="Refresh less often",
            group=SPEED_KEYS,
        ),
        Binding(
            "l",
            "toggle_lock_filter",
            "Filter",
            tooltip="Locks view: sessions on the queue table / whole database",
        ),
        Binding(
            "1", "show_panel('locks')", "Locks", tooltip="Focus the locks table", group=PANEL_KEYS
        ),
        Binding(
            "2",
            "show_panel('waiting')",
            "Waiting",
            tooltip="Focus the waiting sessions",
            group=PANEL_KEYS,
        ),
        Binding(
            "3",
            "show_panel('idle')",
            "Idle",
            tooltip="Focus idle-in-transaction sessions",
            group=PANEL_KEYS,
        ),
        Binding(
            "4", "show_panel('stale')", "Stale", tooltip="Focus the stale leases", group=PANEL_KEYS
        ),
        Binding(
            "b",
            "show_browser",
            "Jobs",
            group=PANEL_KEYS,
            tooltip="The job browser: failed, dead, ready, scheduled or running jobs, a "
            "page at a time, to look at and act on",
        ),
        # priority: handled as it arrives, before the keys typed after it are sent on to
        # the table in focus (see RecoveryMixin.action_lookup_jobs); in a dialog it skips
        Binding(
            "j",
            "lookup_jobs",
            "Job by id",
            priority=True,
            tooltip="Look up any job by id, then requeue or dead-letter it",
        ),
        Binding(
            "A",
            "show_audit",
            "Audit",
            tooltip="The latest actions from the audit trail (the table, or --audit-file)",
        ),
        *LOADGEN_BINDINGS,  # hidden by check_action unless a load generator runs
        *REPLAY_BINDINGS,  # hidden by check_action unless replaying (they take p + - then)
    ]

    def __init__(
        self,
        spec: QueueSpec | None = None,
        dsn: str | None = None,
        *,
        interval: float = 2.0,
        read_only: bool = False,
        audit_file: str | None = None,
        loadgen: Any = None,
        snapshots: Sequence[Snapshot] = (),
        poll: bool = True,
        browser_source: Any = None,
        recorder: Any = None,
        replay: Any = None,
    ) -> None:
        super().__init__()
        self.spec = spec
        self.dsn = dsn
        self.interval = interval
        self.read_only = read_only
        self.audit_file = audit_file
        self.loadgen = loadgen
        self.recorder = recorder  # watch --record: gets every snapshot applied
        self.replay = replay  # queuetop replay: the driver that posts the recorded frames
        self.history = History()
        self.monitor = Monitor(spec, interval) if spec is not None else None
        self.snapshot: Snapshot | None = None
        self.polling_enabled = poll and spec is not None and dsn is not None
        self.paused = False
        self.link = LinkState("connecting" if self.polling_enabled else "static")
        self.polls_started = 0
        self.snapshots_applied = 0
        self.failures = 0
        self._initial = tuple(snapshots)
        # where the job browser reads: the database, or fixed pages (screenshots)
        self.browser_source = (
            browser_source
            if browser_source is not None
            else (DatabaseSource(dsn, spec) if self.polling_enabled else None)
        )
        self._conn: psycopg.Connection | None = None
        self._timer: Timer | None = None
        self._in_flight = False
        self._seen_warnings: set[str] = set()
        self._new_timeouts = False
        self._count_digits: dict[str, int] = {}  # per tab: see _label_tabs
        self._retry_at: float | None = None  # when a failed poll is retried (poller)
        self._countdown: Timer | None = None
        self._restore_signals: Callable[[], None] = lambda: None

    # --- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        with Horizontal(id="top"):
            state = StatePanel(id="state")
            state.border_title = "Queue state: rows per role"
            yield state
            with Grid(id="plots"):
                yield DepthPlot(self.history, id="plot-depth")
                yield ThroughputPlot(self.history, id="plot-throughput")
                yield OldestReadyPlot(self.history, id="plot-oldest")
                yield WaitingPlot(self.history, id="plot-waiting")
        yield from self.compose_loadgen_strip()
        with TabbedContent(id="tables"):
            for pane_id, table_id, cls in PANELS:
                with TabPane(cls.TITLE, id=pane_id):
                    if table_id == "stale" and self.stale_unknown:
                        yield Static(stale_unknown_text(self.spec), id="stale-unknown")
                    yield cls(id=table_id)
            yield from self.compose_loadgen_tab()
            if self.spec is not None:
                with TabPane("Jobs", id=BROWSER_TAB):
                    yield JobBrowser(
                        self.spec, self.browser_source, id="browser", groups=self.active_groups
                    )
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._restore_signals = exit_on_signals(self)  # SIGTERM, SIGHUP: as `q`
        self._fit_layout(self.size.width, self.size.height)
        for snap in self._initial:
            self.apply_snapshot(snap)
        self.start_recovery()
        self._render_chrome()
        self._start_poll()
        self.start_loadgen()
        if self.replay is not None:
            self.replay.attach(self)
        self.call_after_refresh(self._freeze_startup_objects)

    def _freeze_startup_objects(self) -> None:
        self._gc_threshold = gc_tuning.settle()  # see gc_tuning: fewer, shorter collections

    def on_unmount(self) -> None:
        self._restore_signals()
        gc_tuning.restore(getattr(self, "_gc_threshold", None))
        self.stop_loadgen()
        if not self._in_flight:  # an in-flight poll ends within its statement timeout
            self._drop_connection()

    def on_resize(self, event) -> None:
        self._fit_layout(event.size.width, event.size.height)

    def _fit_layout(self, width: int, height: int) -> None:
        """Small terminals keep the tables and one plot; tall ones give the plots room."""
        self.screen.set_class(width < 110 or height < 32, "-compact")
        self.fit_loadgen_footer(width < 110)
        self.screen.set_class(height >= 45, "-tall")
        if self.snapshot is not None:
            self._label_tabs()

    def table(self, table_id: str) -> KeyedTable:
        return self.query_one(f"#{table_id}", KeyedTable)

    @property
    def stale_table(self) -> StaleLeaseTable:
        return self.query_one("#stale", StaleLeaseTable)

    def selected_job_ids(self) -> list:
        """Job ids the operator marked in the stale-lease table."""
        return self.stale_table.selected_job_ids()

    # --- applying a snapshot -----------------------------------------------------------------

    def apply_snapshot(self, snap: Snapshot) -> None:
        """Update every widget from one snapshot (the benchmark times this)."""
        self.snapshot = snap
        if self.recorder is not None:
            self.recorder.add(snap)
        self.history.add(snap)
        self.snapshots_applied += 1
        self.query_one(StatePanel).show(snap, self.spec)
        for plot in self.query(HistoryPlot):  # hidden ones too: a resize may show them
            plot.replot()
        for _, table_id, _ in PANELS:
            self.table(table_id).update_from(snap)
        self._label_tabs()
        for warning in snap.warnings:
            if warning not in self._seen_warnings:
                self._seen_warnings.add(warning)
                self.notify(warning, title="queue spec", severity="warning", timeout=8)
        self._render_chrome()

    def _render_chrome(self) -> None:
        snap = self.snapshot
        if snap is not None:
            where = f"{snap.server.user}@{snap.server.address}/{snap.server.database}"
        else:
            where = db.safe_dsn(self.dsn) if self.dsn else "libpq defaults"
        queue = snap.queue if snap else (str(self.spec.table) if self.spec else "-")
        self.query_one(StatusBar).show(
            where=where,
            queue=queue,
            interval=self.interval,
            link=self.link if self.replay is None else self.replay.link,
            snap=snap,
            read_only=self.read_only,
            actions=self.recovery_note(),
        )
        self.query_one(StatePanel).show(snap, self.spec)

    # --- actions ------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        allowed = replay_allows(self.replay, action)  # None: not the replay's to decide
        return super().check_action(action, parameters) if allowed is None else allowed

    def action_replay(self, verb: str, *args: Any) -> None:
        self.replay.act(verb, *args)

    def action_toggle_pause(self) -> None:
        self.paused = not self.paused
        if self.paused:
            self._cancel_timer()
            self._stop_countdown()
            self.link = LinkState("paused")
        else:
            self.link = LinkState("live" if self.snapshot else "connecting")
            self._start_poll()
        self._render_chrome()

    def action_refresh_now(self) -> None:
        self._start_poll()

    def action_exact_counts(self) -> None:
        if self.monitor is None:
            return
        self.monitor.request_exact()
        self.notify("counting every state exactly on this poll", timeout=3)
        self._start_poll()

    def _set_interval(self, step: int) -> None:
        here = min(range(len(INTERVALS)), key=lambda i: abs(INTERVALS[i] - self.interval))
        new = INTERVALS[max(0, min(len(INTERVALS) - 1, here + step))]
        if new == self.interval:
            limit = "fastest" if step < 0 else "slowest"
            self.notify(f"already the {limit} refresh: every {new:g}s", timeout=3)
            return
        self.interval = new
        # statement timeouts follow the interval: the next poll reconnects with new ones
        self._new_timeouts = True
        if not self._in_flight:
            self._arm(min(new, 0.2))
        self._render_chrome()

    def action_faster(self) -> None:
        self._set_interval(-1)

    def action_slower(self) -> None:
        self._set_interval(+1)

    def action_toggle_lock_filter(self) -> None:
        locks = self.query_one(LocksTable)
        locks.queue_only = not locks.queue_only
        if self.snapshot is not None:
            self.apply_lock_filter()
        self.notify(f"locks: {locks.describe()}", timeout=2)

    def apply_lock_filter(self) -> None:
        self.query_one(LocksTable).update_from(self.snapshot)
        self._label_tabs()

    def _label_tabs(self) -> None:
        """Tab labels name the table and count its rows; short ones on small terminals."""
        compact = self.screen.has_class("-compact")
        tabs = self.query_one(TabbedContent)
        for pane_id, table_id, _ in PANELS:
            table = self.table(table_id)
            title = table.SHORT_TITLE if compact else table.TITLE
            if table_id == "locks":
                title = f"{title} ({table.describe()})"
            count = "?" if table_id == "stale" and self.stale_unknown else str(table.count())
            label = counted_label(title, count, self._count_digits, pane_id)
            tab = tabs.get_tab(pane_id)
            if tab.label_text != label:
                relabel(tab, label)

    def action_show_panel(self, table_id: str) -> None:
        pane_id = next(p for p, t, _ in PANELS if t == table_id)
        self.query_one(TabbedContent).active = pane_id
        self.table(table_id).focus()

    def action_show_audit(self) -> None:
        source = self.audit_file or AUDIT_NAME
        load = partial(read_latest, self.dsn, self.audit_file, limit=AUDIT_LIMIT)
        self.push_screen(AuditScreen(load, str(source)))

    def refresh_views_after_action(self) -> None:
        """After an action: an audit screen left open reads its trail again, and the job
        browser its page."""
        for screen in self.screen_stack:
            if isinstance(screen, AuditScreen):
                screen.reload()
        if self.spec is not None:
            self.browser.after_action()

    # --- the job browser ----------------------------------------------------------------------

    @property
    def browser(self) -> JobBrowser:
        return self.query_one(JobBrowser)

    @property
    def stale_unknown(self) -> bool:
        """The spec cannot tell a stale lease (no lease, start time or heartbeat)."""
        return self.spec is not None and not self.spec.can_find_stale()

    def active_groups(self) -> list[str]:
        return [g.name for g in self.snapshot.groups] if self.snapshot else []

    def action_show_browser(self) -> None:
        self.query_one(TabbedContent).active = BROWSER_TAB
        self.browser.table.focus()
        self.browser.ensure_loaded()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == BROWSER_TAB:  # a click on the tab: the first page then
            self.browser.ensure_loaded()

    def on_job_browser_action_chosen(self, message: JobBrowser.ActionChosen) -> None:
        self.ask_job_action(message.action, message.jobs, message.force, message.left_out)

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.binding_sections(), notes=self.recovery_help()))

    def binding_sections(self) -> list[tuple[str, Iterable]]:
        return key_sections.binding_sections(self)

    def on_keyed_table_row_selected(self, event: KeyedTable.RowSelected) -> None:
        if event.item is not None:  # a blocker whose session the snapshot missed: no detail
            self.push_screen(DetailScreen(event.table.TITLE, event.item))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield from palette.app_commands(self, self.BINDINGS)
        yield from palette.stale_lease_commands(self)
        yield from palette.browser_commands(self)
        yield from palette.session_commands(self)

    def signal_open_session(self, action: str) -> None:
        """Cancel or terminate from the palette: the session under the open tab's cursor."""
        active = self.query_one(TabbedContent).active
        table_id = next((t for p, t, _ in PANELS if p == active), None)
        if table_id not in palette.SESSION_TABLES:
            self.notify(
                f"{action}: open tab 2 (waiting) or 3 (idle) and put the cursor on "
                "the session first",
                severity="warning",
                timeout=6,
            )
            return
        self.action_signal_session(action, table_id)
