"""The load generator inside the dashboard: its panel, its refresh timer, and its knobs.

`LoadGenControls` is owned by the app, which composes its widgets and binds its keys
(LOADGEN_BINDINGS, each an app action that calls the knob of the same name here). The
generator's stats come from `loadgen.stats()` (no database) on a timer of their own, so
the panel stays live while a poll is slow or paused. Every knob queues a command for the
generator's supervisor thread and returns at once.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable
from multiprocessing import resource_tracker
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.timer import Timer
from textual.widgets import TabbedContent, TabPane

from dashboard.loadgen import STRATEGIES, LoadSnapshot, WorkerStats
from dashboard.loadgen.demo import describe
from dashboard.loadgen.settings import MAX_WORKERS
from dashboard.models import LoadState
from dashboard.ui.tab_labels import relabel
from dashboard.ui.widgets.loadgen_panel import LoadStory, LoadStrip, LoadSummary, WorkersTable

LOADGEN_KEYS = Binding.Group("Load")
LOADGEN_TAB = "tab-loadgen"
LOADGEN_REFRESH_S = 0.5
STALL_S = 15.0

LOADGEN_BINDINGS = [
    Binding(
        "5",
        "show_loadgen",
        "Load gen",
        tooltip="Focus the load generator's workers",
        group=LOADGEN_KEYS,
    ),
    Binding(
        "w", "add_worker", "Add worker", tooltip="Start one more worker process", group=LOADGEN_KEYS
    ),
    Binding(
        "W",
        "remove_worker",
        "Remove worker",
        tooltip="Stop the newest worker process",
        group=LOADGEN_KEYS,
    ),
    Binding(
        "s",
        "cycle_strategy",
        "Strategy",
        tooltip="Claim strategy: skip-locked -> for-update -> nowait",
        group=LOADGEN_KEYS,
    ),
    Binding(
        "t",
        "toggle_hold_tx",
        "Hold tx",
        tooltip="Hold transaction: work inside the claim transaction (the anti-pattern)",
        group=LOADGEN_KEYS,
    ),
    Binding(
        "exclamation_mark",
        "crash_worker",
        "Crash",
        key_display="!",
        tooltip="The newest worker exits hard after its next claim (a stale lease)",
        group=LOADGEN_KEYS,
    ),
    Binding(
        "z",
        "stall_worker",
        "Stall",
        tooltip=f"The newest worker sits idle in a transaction for {STALL_S:g}s",
        group=LOADGEN_KEYS,
    ),
    Binding(
        "c",
        "toggle_chaos",
        "Chaos",
        tooltip="Random crashes on or off (off in the demo unless --chaos): each leaves a "
        "stale lease",
        group=LOADGEN_KEYS,
    ),
    Binding(
        "P",
        "toggle_producer",
        "Producer",
        tooltip="Pause or resume the producer",
        group=LOADGEN_KEYS,
    ),
]
LOADGEN_ACTIONS = {b.action for b in LOADGEN_BINDINGS}
LOADGEN_KNOBS = LOADGEN_ACTIONS - {"show_loadgen"}  # what changes the load: off when read-only


def crash_causes(snap: LoadSnapshot) -> dict[str, str]:
    """job id -> what made its lease stale: the `!` key or the demo's random crashes."""
    return {
        str(job): "! crash" if c.by_knob else "random crash"
        for c in snap.crashes
        if c.committed
        for job in c.jobs
    }


class LoadGenControls:
    """The running load generator's panel and knobs, for `app` (its widgets, timers and
    notifications). `loadgen` is a dashboard.loadgen.LoadGenerator."""

    def __init__(self, app: Any, loadgen: Any) -> None:
        self._app = app
        self.loadgen = loadgen
        self.stats: LoadSnapshot | None = None  # the last stats shown
        self._timer: Timer | None = None
        self._errors_seen = 0
        self._reconnecting = False
        self._crashes_seen = 0  # the n of the last crash reported

    def compose_strip(self) -> ComposeResult:
        yield LoadStrip(id="loadgen-strip")
        yield LoadStory(id="loadgen-story")

    def compose_tab(self) -> ComposeResult:
        with TabPane(WorkersTable.TITLE, id=LOADGEN_TAB), Horizontal(id="loadgen"):
            summary = LoadSummary(id="loadgen-summary")
            summary.border_title = "Generator counters"
            yield summary
            yield WorkersTable(id="loadgen-workers")

    def fit(self, screen, narrow: bool) -> None:
        """Beside each other where the screen is wide; on a narrow one the workers table
        above the counters, each the width of the screen, so that its pid, claimed and done
        columns stay (beside the counters 80 columns left room for a name and a state; the
        strip above shows the counters' headline figures)."""
        try:
            box = screen.query_one("#loadgen", Horizontal)
            workers = box.query_one("#loadgen-workers", WorkersTable)
            summary = box.query_one("#loadgen-summary", LoadSummary)
        except NoMatches:
            return
        first = box.children[0] if box.children else None
        if narrow and first is not workers:
            box.move_child(workers, before=summary)
        elif not narrow and first is not summary:
            box.move_child(summary, before=workers)

    def start(self) -> None:
        """Start (if the caller has not) and show the generator; call from on_mount."""
        # multiprocessing's helper process inherits sys.stderr's file descriptor, and
        # Textual's stderr capture has none: start the helper on the real stderr first
        if sys.__stderr__ is not None:
            with contextlib.redirect_stderr(sys.__stderr__):
                resource_tracker.ensure_running()
        self.loadgen.start()  # on the app's thread, which outlives the workers
        self.refresh()
        self._timer = self._app.set_interval(LOADGEN_REFRESH_S, self.refresh)

    def stop(self) -> None:
        """Ask every worker to stop (returns at once; the caller may wait())."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.loadgen.stop()

    def refresh(self) -> None:
        self.show(self.loadgen.stats())

    def show_waiting(self, waiting: int) -> None:
        """Sessions waiting on a lock, from the last poll: the strip shows them beside the
        generator's own rates."""
        with contextlib.suppress(NoMatches):
            self._app.query_one(LoadStrip).show_waiting(waiting)

    def show(self, snap: LoadSnapshot) -> None:
        self.stats = snap
        try:
            strip, summary = self._app.query_one(LoadStrip), self._app.query_one(LoadSummary)
            workers = self._app.query_one(WorkersTable)
            tab = self._app.query_one(TabbedContent).get_tab(LOADGEN_TAB)
        except NoMatches:  # the timer can fire while the app tears its widgets down on exit
            return
        strip.show(snap)
        self._app.query_one(LoadStory).show(snap)
        summary.show(snap)
        workers.update_from(snap)
        compact = self._app.default_screen.has_class("-compact")
        label = f"{workers.SHORT_TITLE if compact else workers.TITLE} {len(snap.workers)}"
        if tab.label_text != label:  # every half second: only a change is drawn
            relabel(tab, label)
        self.report_crashes(snap)
        for error in snap.errors[self._errors_seen :]:
            self._app.notify(error, title="load generator", severity="error", timeout=10)
        self._errors_seen = len(snap.errors)
        reconnecting = bool(snap.running and snap.reconnecting)
        if reconnecting and not self._reconnecting:
            self._app.notify(
                f"lost the database: {snap.connection_error}; reconnecting, the "
                "workers keep their count",
                title="load generator",
                severity="warning",
                timeout=10,
            )
        elif self._reconnecting and not reconnecting and snap.running:
            self._app.notify("reconnected", title="load generator", timeout=4)
        self._reconnecting = reconnecting

    def report_crashes(self, snap: LoadSnapshot) -> None:
        """Say which worker each new crash took and which job it left; tell the stale-lease
        table which leases a crash made (`!`, or the demo's random crashes)."""
        for crash in snap.crashes:
            if crash.n <= self._crashes_seen:
                continue
            self._crashes_seen = crash.n
            if not crash.by_knob:  # the demo's random crashes come every ~20 s: tab 4 says
                continue
            jobs = ", ".join(map(str, crash.jobs))
            if crash.committed:
                left = (
                    f"job {jobs} stays running under its name: a stale lease once its "
                    f"{snap.lease_s:g}s lease runs out (tab 4 marks it '! crash')"
                )
            else:
                left = f"its claim of job {jobs} had not committed (hold-tx): rolled back"
            self._app.notify(
                f"! crashed {crash.session}: {left}",
                title="load generator",
                severity="warning",
                timeout=10,
            )
        with contextlib.suppress(NoMatches):
            self._app.stale_table.set_crash_causes(crash_causes(snap))

    def state(self) -> LoadState | None:
        """The generator as a recording keeps it with each frame (demo --record)."""
        snap = self.stats
        if snap is None:
            return None
        return LoadState(
            strategy=snap.strategy,
            hold_tx=snap.hold_tx,
            done_per_s=snap.completions_per_s,
            claim_p95_ms=snap.recent_latency.p95,
            lock_waits_per_s=snap.lock_waits_per_s,
            lock_errors_per_s=snap.lock_errors_per_s,
            live_workers=snap.live_workers,
            target_workers=snap.target_workers,
            crashes=crash_causes(snap),
        )

    def help_sections(self) -> list[tuple[str, Iterable]]:
        return [("load generator", LOADGEN_BINDINGS)]

    # --- the knobs (each bound to the app action of the same name) ------------------

    def _stats(self) -> LoadSnapshot:
        return self.loadgen.stats()

    def _newest_live(self) -> WorkerStats | None:
        live = [w for w in self._stats().workers if w.alive]
        return live[-1] if live else None

    def show_loadgen(self) -> None:
        self._app.query_one(TabbedContent).active = LOADGEN_TAB
        self._app.query_one(WorkersTable).focus()

    def add_worker(self) -> None:
        target = self._stats().target_workers + 1
        if target > MAX_WORKERS:
            self._app.notify(f"at most {MAX_WORKERS} workers", severity="warning", timeout=3)
            return
        self.loadgen.add_worker()
        self._app.notify(f"adding a worker: {target} wanted", timeout=3)

    def remove_worker(self) -> None:
        snap = self._stats()
        if snap.target_workers == 0:
            self._app.notify("no worker left to remove", severity="warning", timeout=3)
            return
        self.loadgen.remove_worker()
        newest = self._newest_live()
        self._app.notify(
            f"stopping {newest.session if newest else 'a worker'}: "
            f"{snap.target_workers - 1} wanted (its jobs go back to ready)",
            timeout=3,
        )

    def cycle_strategy(self) -> None:
        """`s` changes the claim strategy only; `t` alone holds the claim transaction."""
        current = self.loadgen.settings.strategy
        order = list(STRATEGIES)
        new = order[(order.index(current) + 1) % len(order)] if current in order else order[0]
        self.loadgen.set_strategy(new)
        self._app.notify(describe(new, self.loadgen.settings.hold_tx), timeout=8)

    def toggle_hold_tx(self) -> None:
        on = not self.loadgen.settings.hold_tx
        self.loadgen.set_hold_tx(on)
        self._app.notify(describe(self.loadgen.settings.strategy, on), timeout=8)

    def toggle_chaos(self) -> None:
        on = not self.loadgen.settings.crash_rate
        self.loadgen.set_random_crashes(on)
        self._app.notify(
            "random crashes ON: now and then a worker exits right after its claim, leaving a "
            "stale lease (tab 4 marks them 'random crash')"
            if on
            else "random crashes off: the only stale leases are the ones ! makes",
            timeout=6,
        )

    def crash_worker(self) -> None:
        worker = self._newest_live()
        if worker is None:
            self._app.notify("no live worker to crash", severity="warning", timeout=3)
            return
        self.loadgen.crash_worker(worker.k)  # this one, the one named: not whoever is newest
        self._app.notify(
            f"{worker.session} (pid {worker.backend_pid or '-'}) will exit hard after "
            "its next claim; a new worker replaces it",
            timeout=5,
        )

    def stall_worker(self) -> None:
        worker = self._newest_live()
        if worker is None:
            self._app.notify("no live worker to stall", severity="warning", timeout=3)
            return
        self.loadgen.stall_worker(STALL_S)
        self._app.notify(
            f"{worker.session} sits idle in a transaction holding a row lock for {STALL_S:g}s",
            timeout=5,
        )

    def toggle_producer(self) -> None:
        paused = not self._stats().producer_paused
        self.loadgen.pause_producer(paused)
        self._app.notify(
            "producer paused: no new jobs" if paused else "producer resumed", timeout=3
        )
