"""QueuetopApp: the live dashboard, wiring the objects it owns.

A snapshot source (the `Poller`, or fixed snapshots) brings snapshots as messages;
the app applies each one to its widgets once (through the `MainView`, which draws
the main screen's panels, fits them to the terminal and brings tabs to the front),
and tells the source. Recovery actions go through the `RecoveryController`, the load
generator's knobs through `LoadGenControls`. The app has one handler per message type,
and the header is redrawn by the watchers of the reactive state it shows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from textual.actions import SkipAction
from textual.app import ComposeResult, SystemCommand
from textual.css.query import NoMatches
from textual.notifications import Notify
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import TabbedContent
from textual.worker import Worker, WorkerState

from dashboard.actions.requests import ActionKind
from dashboard.audit.trail import AUDIT_NAME, read_latest
from dashboard.browse.source import DatabaseSource
from dashboard.models import QueueSpec, Snapshot
from dashboard.ui import gc_tuning, key_sections, layout, palette
from dashboard.ui.bindings import APP_BINDINGS, INTERVALS
from dashboard.ui.history import History
from dashboard.ui.jobs_tab import JobBrowser
from dashboard.ui.layout import BROWSER_TAB, PANELS
from dashboard.ui.loadgen_controls import LOADGEN_ACTIONS, LOADGEN_KNOBS, LoadGenControls
from dashboard.ui.main_view import MainView
from dashboard.ui.messages import (
    CapabilitiesReady,
    JobsObserved,
    LookupRefused,
    PollFailed,
    RecoveryDone,
    RecoveryFailed,
    SnapshotReady,
)
from dashboard.ui.plain import PlainApp
from dashboard.ui.poller import SnapshotSource, SourceFactory, source_factory
from dashboard.ui.recovery import WORKER_GROUPS, RecoveryController
from dashboard.ui.replay.keys import replay_allows
from dashboard.ui.replay.rewind import Rewind
from dashboard.ui.screens.audit import LIMIT as AUDIT_LIMIT
from dashboard.ui.screens.audit import AuditScreen
from dashboard.ui.screens.detail import DetailScreen
from dashboard.ui.screens.help import HelpScreen
from dashboard.ui.screens.job_lookup import JobListScreen
from dashboard.ui.screens.lab import lab_screen
from dashboard.ui.signals import exit_on_signals
from dashboard.ui.widgets.keyedtable import KeyedTable
from dashboard.ui.widgets.message_bar import MessageBar
from dashboard.ui.widgets.state_panel import StatePanel
from dashboard.ui.widgets.status import LinkState
from dashboard.ui.widgets.tables import StaleLeaseTable

__all__ = ["BROWSER_TAB", "INTERVALS", "PANELS", "QueuetopApp"]


class QueuetopApp(PlainApp):  # PlainApp: no notification is ever markup
    """The main screen: header, state panel, history plots, and four diffed tables.

    `snapshots` feeds fixed snapshots (tests, screenshots); `poll=False` never touches a
    database; `source(app, on_link=…)` makes another snapshot source than the poller (a
    replay: see poller.py). `read_only` and `loadgen` are for
    the recovery actions and the load generator.
    """

    CSS_PATH = "app.tcss"
    TITLE = "queuetop"
    BINDINGS = APP_BINDINGS

    # --- the app's own state (all of it; the rest lives in the objects it owns) ----------
    # What the header shows: each watcher redraws it, nobody else does.
    link: var[LinkState] = var(LinkState("static"), init=False)  # set by the source
    interval: var[float] = var(2.0, init=False)  # + and -; the source follows it
    paused: var[bool] = var(False, init=False)  # p; the source follows it
    read_only: var[bool] = var(False, init=False)
    actions_note: var[str] = var("", init=False)  # which actions are off, from recovery
    snapshot: var[Snapshot | None] = var(None, init=False, always_update=True)

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
        source: SourceFactory | None = None,
        recorder: Any = None,
        replay: Any = None,
        rewind: Any = None,
    ) -> None:
        super().__init__()
        self.set_reactive(QueuetopApp.interval, interval)
        self.set_reactive(QueuetopApp.read_only, read_only)
        self.spec = spec
        self.dsn = dsn
        self.audit_file = audit_file
        self.history = History()  # the plots' series, outside the widgets
        self.recorder = recorder  # watch --record: gets every snapshot applied
        self.replay = replay  # queuetop replay: the driver that posts the recorded frames
        self.rewind = Rewind(self, rewind)  # h: the last minutes (a RewindBuffer, or None)
        self.snapshots_applied = 0
        self._initial = tuple(snapshots)  # applied on mount
        self._seen_warnings: set[str] = set()  # each spec warning is notified once
        self._restore_signals: Callable[[], None] = lambda: None
        self._gc_threshold: tuple[int, int, int] | None = None
        # --- the objects it owns --------------------------------------------------------
        make_source = source_factory(spec, dsn, interval, poll, source, replay)
        self.source: SnapshotSource = make_source(self, on_link=self._show_link)
        self.load = LoadGenControls(self, loadgen) if loadgen is not None else None
        self.view = MainView(self, spec, self.load)  # the main screen's panels and tabs
        self.recovery = RecoveryController(
            self,
            spec,
            dsn,
            live=self.source.live,
            read_only=read_only,
            audit_file=audit_file,
            poll_soon=self.source.poll_soon,
            after_action=self.view.after_action,
            on_note=self._show_actions_note,
        )
        # where the job browser reads: the database, or fixed pages (screenshots)
        self.browser_source = (
            browser_source
            if browser_source is not None
            else (DatabaseSource(dsn, spec) if self.source.live else None)
        )

    # --- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield from layout.main_screen(
            self.history,
            self.spec,
            self.load,
            self.browser_source,
            self.view.active_groups,
            self.view.role_counts,
        )

    def on_mount(self) -> None:
        self._restore_signals = exit_on_signals(self)  # SIGTERM, SIGHUP: as `q`
        # the main screen's notifications go to its message line, not toasts over the
        # data (Textual skips a screen without a toast rack; modals keep theirs)
        for rack in self.screen.query_children("#textual-toastrack"):
            rack.remove()
        for shown in ("link", "read_only", "actions_note", "snapshot"):  # see watch_interval
            self.watch(self, shown, self._draw_header, init=False)
        self.view.fit(self.size.width, self.size.height)
        self.query_one(StatePanel).show(None, self.spec)
        self._draw_header()
        for snap in self._initial:
            self.apply_snapshot(snap)
        self.recovery.start()
        self.source.start()
        if self.load is not None:
            self.load.start()
        self.call_after_refresh(self._freeze_startup_objects)

    def _freeze_startup_objects(self) -> None:
        self._gc_threshold = gc_tuning.settle()  # see gc_tuning: fewer, shorter collections

    def on_notify(self, event: Notify) -> None:
        """Every notification is also the main screen's message line (shown there when
        the main screen is in front; see widgets/message_bar.py)."""
        if self.screen is self.screen_stack[0]:
            try:
                self.query_one(MessageBar).show(event.notification)
            except NoMatches:  # not composed yet, or being torn down
                pass

    def on_unmount(self) -> None:
        self.rewind.stop()
        self._restore_signals()
        gc_tuning.restore(self._gc_threshold)
        if self.load is not None:
            self.load.stop()
        self.source.stop()

    def on_resize(self, event) -> None:
        self.view.fit(event.size.width, event.size.height)

    def table(self, table_id: str) -> KeyedTable:
        return self.view.table(table_id)

    @property
    def stale_table(self) -> StaleLeaseTable:
        return self.view.stale_table

    def selected_job_ids(self) -> list:
        """Job ids the operator marked in the stale-lease table."""
        return self.stale_table.selected_job_ids()

    # --- snapshots: the source posts them, the app draws each one once --------------------

    def on_snapshot_ready(self, message: SnapshotReady) -> None:
        if not self.is_running:  # a poll that ends while the app shuts down: widgets are gone
            return
        if self.rewind.takes(message.snapshot):  # the rewind shows: its frame, or a live one kept
            return
        self.source.landed(message.snapshot)  # the link, and when the next one comes
        self.apply_snapshot(message.snapshot)

    def on_poll_failed(self, message: PollFailed) -> None:
        if self.is_running:
            self.source.failed(message)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:  # a bug in a worker, not the database
            return
        if event.worker.group in WORKER_GROUPS:
            self.recovery.crashed(event.worker.error)

    def apply_snapshot(self, snap: Snapshot) -> None:
        """Update every widget from one snapshot, each once (the benchmark times this);
        a widget whose content did not change draws nothing."""
        self.keep_snapshot(snap)
        self.draw_snapshot(snap)

    def keep_snapshot(self, snap: Snapshot) -> None:
        """A live snapshot to the recorder (watch --record) and the rewind."""
        if self.recorder is None and self.rewind.buffer is None:
            return
        # demo --record: what the load generator was doing, kept with the frame
        state = self.load.state() if self.load is not None else None
        kept = replace(snap, load=state) if state else snap
        if self.recorder is not None:
            self.recorder.add(kept)
        self.rewind.keep(kept)

    def draw_snapshot(self, snap: Snapshot, history: bool = True) -> None:
        """Every widget from `snap`; `history`: the plots' series take it too."""
        if self.load is None and snap.load is not None:  # a replayed demo: its generator
            self.view.show_recorded_load(snap.load)
        if history:
            self.history.add(snap)
        self.snapshots_applied += 1
        self.snapshot = snap  # the header, through watch_snapshot
        self.view.draw(snap)
        for warning in snap.warnings:
            if warning not in self._seen_warnings:
                self._seen_warnings.add(warning)
                self.notify(warning, title="queue spec", severity="warning", timeout=8)

    # --- the header: drawn by the watchers of what it shows ---------------------------------

    def _show_link(self, link: LinkState) -> None:
        if not self.rewind.link(link):  # shown once the rewind closes
            self.link = link

    def _show_actions_note(self, note: str) -> None:
        self.actions_note = note

    def watch_interval(self, interval: float) -> None:
        self.source.set_interval(interval)
        self._draw_header()

    def watch_paused(self, paused: bool) -> None:
        self.source.pause(paused)
        self._draw_header()

    def _draw_header(self) -> None:
        self.view.draw_header()

    # --- the dashboard's own keys -------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        allowed = self.rewind.allows(action, parameters)  # None: not the rewind's to decide
        if allowed is not None:
            return allowed
        allowed = replay_allows(self.replay, action)  # None: not the replay's to decide
        if allowed is not None:
            return allowed
        if self.recovery.hides(action):
            return False
        if action in LOADGEN_ACTIONS and self.load is None:
            return False  # plain `watch`: hidden from the footer, the palette and the keys
        if action in LOADGEN_KNOBS and self.read_only:
            return False  # read-only is read-only for the load generator too
        if action == "open_lab":  # it creates and drops a scratch schema: not read-only
            return self.source.live and not self.read_only
        return True

    def action_replay(self, verb: str, *args: Any) -> None:
        self.replay.act(verb, *args)

    def action_rewind(self, verb: str) -> None:
        self.rewind.act(verb)

    def action_toggle_pause(self) -> None:
        self.paused = not self.paused

    def action_refresh_now(self) -> None:
        self.source.poll_now()

    def action_exact_counts(self) -> None:
        if self.source.request_exact():
            self.notify("counting every state exactly on this poll", timeout=3)

    def _step_interval(self, step: int) -> None:
        here = min(range(len(INTERVALS)), key=lambda i: abs(INTERVALS[i] - self.interval))
        new = INTERVALS[max(0, min(len(INTERVALS) - 1, here + step))]
        if new == self.interval:
            limit = "fastest" if step < 0 else "slowest"
            self.notify(f"already the {limit} refresh: every {new:g}s", timeout=3)
            return
        self.interval = new

    def action_faster(self) -> None:
        self._step_interval(-1)

    def action_slower(self) -> None:
        self._step_interval(+1)

    def action_toggle_lock_filter(self) -> None:
        self.notify(f"locks, waiting, idle: {self.view.toggle_lock_filter()}", timeout=2)

    def action_show_panel(self, table_id: str) -> None:
        self.view.show_panel(table_id)

    def action_show_audit(self) -> None:
        source = self.audit_file or AUDIT_NAME
        load = partial(read_latest, self.dsn, self.audit_file, limit=AUDIT_LIMIT)
        self.push_screen(AuditScreen(load, str(source)))

    # --- the job browser ----------------------------------------------------------------------

    @property
    def browser(self) -> JobBrowser:
        return self.view.browser

    def action_show_browser(self) -> None:
        self.view.show_browser()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.view.tab_activated(event.pane.id)

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.binding_sections(), notes=self.recovery.help_lines()))

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

    # --- recovery: the keys and the messages, handed to the controller ------------------------

    def action_requeue_stale(self) -> None:
        self.recovery.stale_leases(ActionKind.REQUEUE, self.stale_table)

    def action_dead_letter_stale(self) -> None:
        self.recovery.stale_leases(ActionKind.DEAD_LETTER, self.stale_table)

    def action_signal_session(self, action: str, table_id: str) -> None:
        self.recovery.signal_session(ActionKind(action), self.table(table_id).cursor_item())

    async def action_lookup_jobs(self) -> None:
        if len(self.screen_stack) > 1:  # j typed in a dialog: its own key
            raise SkipAction()
        await self.recovery.look_up()

    def on_job_browser_action_chosen(self, message: JobBrowser.ActionChosen) -> None:
        kind = ActionKind(message.action)
        self.recovery.jobs(kind, message.jobs, message.force, message.left_out)

    def on_job_list_screen_chosen(self, message: JobListScreen.Chosen) -> None:
        self.recovery.chosen_from_list(message)

    def on_capabilities_ready(self, message: CapabilitiesReady) -> None:
        self.recovery.capabilities_ready(message)

    def on_recovery_done(self, message: RecoveryDone) -> None:
        self.recovery.done(message.result)

    def on_recovery_failed(self, message: RecoveryFailed) -> None:
        self.recovery.failed(message)

    def on_jobs_observed(self, message: JobsObserved) -> None:
        self.recovery.observed(message)

    async def on_lookup_refused(self, message: LookupRefused) -> None:
        await self.recovery.look_up(message.value, message.reason)

    # --- the load generator's knobs (hidden by check_action when none runs) --------------------

    def action_show_loadgen(self) -> None:
        self.load.show_loadgen()

    def action_add_worker(self) -> None:
        self.load.add_worker()

    def action_remove_worker(self) -> None:
        self.load.remove_worker()

    def action_cycle_strategy(self) -> None:
        self.load.cycle_strategy()

    def action_toggle_hold_tx(self) -> None:
        self.load.toggle_hold_tx()

    def action_crash_worker(self) -> None:
        self.load.crash_worker()

    def action_stall_worker(self) -> None:
        self.load.stall_worker()

    def action_toggle_chaos(self) -> None:
        self.load.toggle_chaos()

    def action_open_lab(self) -> None:
        self.push_screen(lab_screen(self.dsn))

    def action_toggle_producer(self) -> None:
        self.load.toggle_producer()
