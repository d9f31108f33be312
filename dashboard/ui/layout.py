"""What the main screen holds, in order, and how it fits the terminal: the app composes
it from here and calls `fit` on a resize and `label_tabs` after each snapshot."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from textual.app import ComposeResult
from textual.containers import Grid, Horizontal
from textual.screen import Screen
from textual.widgets import Static, Tab, TabbedContent, TabPane

from dashboard.models import QueueSpec
from dashboard.ui.footer_fit import NARROW_BELOW, fit_footer
from dashboard.ui.history import History
from dashboard.ui.jobs_tab import JobBrowser
from dashboard.ui.loadgen_controls import LoadGenControls
from dashboard.ui.tab_labels import counted_label, relabel
from dashboard.ui.widgets.fitting_footer import FittingFooter
from dashboard.ui.widgets.keyedtable import KeyedTable
from dashboard.ui.widgets.latency_panel import LatencyPanel
from dashboard.ui.widgets.loadgen_panel import RecordedLoadStrip
from dashboard.ui.widgets.message_bar import MessageBar
from dashboard.ui.widgets.plots import (
    DepthPlot,
    OldestReadyPlot,
    P95WaitPlot,
    ThroughputPlot,
    WaitingPlot,
)
from dashboard.ui.widgets.state_panel import StatePanel
from dashboard.ui.widgets.status import StatusBar
from dashboard.ui.widgets.tables import (
    IdleTable,
    LocksTable,
    StaleLeaseTable,
    WaitingTable,
    stale_unknown_text,
)
from dashboard.ui.widgets.unknowns_bar import UnknownsBar

# (pane id, table id, table class) in tab order; keys 1-4 follow it
PANELS = (
    ("tab-locks", "locks", LocksTable),
    ("tab-waiting", "waiting", WaitingTable),
    ("tab-idle", "idle", IdleTable),
    ("tab-stale", "stale", StaleLeaseTable),
)
BROWSER_TAB = "tab-jobs"


def stale_unknown(spec: QueueSpec | None) -> bool:
    """The spec cannot tell a stale lease (no lease, start time or heartbeat)."""
    return spec is not None and not spec.can_find_stale()


def main_screen(
    history: History,
    spec: QueueSpec | None,
    load: LoadGenControls | None,
    browser_source: object,
    groups: Callable[[], list[str]],
    counts: Callable[[], Mapping[str, int]],
) -> ComposeResult:
    """Header, state panel and plots, the latency lines, the load strip, the tabs, the
    messages, the footer."""
    yield StatusBar(id="status")
    yield UnknownsBar(id="unknowns")
    with Horizontal(id="top"):
        state = StatePanel(id="state")
        state.border_title = "Queue state: rows per role"
        yield state
        with Grid(id="plots"):
            yield DepthPlot(history, id="plot-depth")
            yield ThroughputPlot(history, id="plot-throughput")
            yield OldestReadyPlot(history, id="plot-oldest")
            yield WaitingPlot(history, id="plot-waiting")
            yield P95WaitPlot(history, id="plot-p95-wait")
    yield LatencyPanel(id="latency")
    if load is not None:
        yield from load.compose_strip()
    else:  # a replayed demo's generator, where its frames kept it (demo --record)
        yield RecordedLoadStrip(id="recorded-load")
    with TabbedContent(id="tables"):
        for pane_id, table_id, cls in PANELS:
            with TabPane(cls.TITLE, id=pane_id):
                if table_id == "stale" and stale_unknown(spec):
                    yield Static(stale_unknown_text(spec), id="stale-unknown")
                yield cls(id=table_id)
        if load is not None:
            yield from load.compose_tab()
        if spec is not None:
            with TabPane("Jobs", id=BROWSER_TAB):
                yield JobBrowser(spec, browser_source, id="browser", groups=groups, counts=counts)
    yield MessageBar(id="messages")
    yield FittingFooter(compact=True)


def fit(screen: Screen, width: int, height: int, load: LoadGenControls | None) -> None:
    """Small terminals keep the tables and two smaller plots, and a footer of the keys
    that fit; tall ones give the plots room."""
    screen.set_class(width < NARROW_BELOW or height < 32, "-compact")
    # at 80 columns `^p palette` took the room of three keys; ^p still opens it (help says so)
    screen.query_one(FittingFooter).show_command_palette = width >= NARROW_BELOW
    fit_footer(screen.app, width, demo=load is not None)
    screen.set_class(height >= 45, "-tall")
    screen.set_class(width < NARROW_BELOW, "-narrow")
    if load is not None:
        load.fit(screen, narrow=width < NARROW_BELOW)
    compact, tall = screen.has_class("-compact"), screen.has_class("-tall")
    screen.query_one(LatencyPanel).fit("compact" if compact else "tall" if tall else "normal")


def panel_tabs(screen: Screen) -> tuple[tuple[KeyedTable, Tab], ...]:
    """Each panel's table and the tab that names it, in PANELS order."""
    tabs = screen.query_one(TabbedContent)
    return tuple(
        (screen.query_one(f"#{table_id}", KeyedTable), tabs.get_tab(pane_id))
        for pane_id, table_id, _ in PANELS
    )


def label_tabs(
    screen: Screen,
    spec: QueueSpec | None,
    widths: dict[str, int],
    panels: Sequence[tuple[KeyedTable, Tab]] | None = None,
) -> None:
    """Tab labels name the table and count its rows; short ones on small terminals.
    `widths` keeps each count's widest width (see counted_label); `panels` are
    panel_tabs(screen), found once by a caller that labels the tabs on every poll."""
    compact = screen.has_class("-compact")
    for (pane_id, table_id, _), (table, tab) in zip(
        PANELS, panels or panel_tabs(screen), strict=True
    ):
        title = table.SHORT_TITLE if compact else table.TITLE
        if table_id in ("locks", "waiting", "idle"):  # the `l` filter's scope, on each
            # ("Waiting (queue)": the long title and the scope overflow 120 columns)
            title = table.SHORT_TITLE if table_id == "waiting" else title
            title = f"{title} ({table.describe(short=True)})"
        count = "?" if table_id == "stale" and stale_unknown(spec) else str(table.count())
        label = counted_label(title, count, widths, pane_id)
        if tab.label_text != label:
            relabel(tab, label)
