"""The load generator's own view: a headline strip, its counters, and one row per worker."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from dashboard.loadgen import LoadSnapshot, WorkerStats
from dashboard.ui.widgets.keyedtable import Col, KeyedTable


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}"


def _rate(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}"


def _producer(snap: LoadSnapshot, short: bool = False) -> str:
    if snap.rate <= 0:
        return "off"
    if snap.producer_paused:
        return "paused" if short else f"{snap.rate:g}/s paused"
    return f"{snap.rate:g}/s"


def _double(snap: LoadSnapshot) -> Text:
    """Must stay 0: anything else is a bug in the claim SQL, shouted."""
    style = "bold white on red" if snap.double_claims else "green"
    return Text(f"{snap.double_claims:,}", style)


class LoadStrip(Static):
    """One line above the tables: the generator's knobs and rates beside the database's view."""

    def show(self, snap: LoadSnapshot | None) -> None:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(" load generator ", "bold reverse")
        if snap is None:
            text.append(" starting…", "dim")
            self.update(text)
            return
        if snap.double_claims:
            text.append(f" DOUBLE CLAIMS {snap.double_claims} ", "bold white on red")
        if not snap.running:
            text.append(" stopped ", "bold white on red")
        parts = [
            ("", snap.strategy, "bold"),
            ("hold-tx ", "on" if snap.hold_tx else "off", "bold yellow" if snap.hold_tx else ""),
            ("workers ", f"{snap.live_workers}/{snap.target_workers}", "bold"),
            ("claims ", f"{_rate(snap.claims_per_s)}/s", "bold"),
            ("done ", f"{_rate(snap.completions_per_s)}/s", "bold green"),
            ("lock waits ", f"{snap.totals.get('lock_waits', 0):,}", ""),
            ("crashed ", f"{snap.crashed:,}", ""),
            ("producer ", _producer(snap), "bold cyan" if snap.producer_paused else ""),
            ("claim p95 ", f"{_ms(snap.latency.p95)} ms", ""),
        ]
        for label, value, style in parts:
            text.append("  " + label, "dim")
            text.append(value, style)
        self.update(text)


class LoadSummary(Static):
    """The generator's counters since it started: knobs, rates, claim latency, faults."""

    def show(self, snap: LoadSnapshot | None) -> None:
        if snap is None:
            self.update(Text("load generator starting…", style="dim"))
            return
        t = snap.totals
        grid = Table.grid(padding=(0, 1))
        for justify in ("left", "right", "left", "right"):
            grid.add_column(justify=justify, no_wrap=True)

        def row(a: str, av: object, b: str = "", bv: object = "") -> None:
            grid.add_row(Text(a, "dim"), av if isinstance(av, Text) else Text(str(av)),
                         Text(b, "dim"), bv if isinstance(bv, Text) else Text(str(bv)))

        row("strategy", Text(snap.strategy, "bold"), "hold-tx",
            Text("on", "bold yellow") if snap.hold_tx else "off")
        row("workers", f"{snap.live_workers}/{snap.target_workers}", "producer",
            _producer(snap, short=True))
        row("claims/s", _rate(snap.claims_per_s), "done/s",
            Text(_rate(snap.completions_per_s), "green"))
        lat = snap.latency
        row("claim p50", f"{_ms(lat.p50)} ms", "p95/p99", f"{_ms(lat.p95)}/{_ms(lat.p99)}")
        row("lock waits", f"{t.get('lock_waits', 0):,}", "lock err", f"{t.get('lock_errors', 0):,}")
        row("empty", f"{t.get('empty_claims', 0):,}", "crashed", f"{snap.crashed:,}")
        row("claimed", f"{t.get('claimed', 0):,}", "done", f"{t.get('completed', 0):,}")
        row("failed", f"{t.get('failed', 0):,}", "dead", f"{t.get('dead', 0):,}")
        row("double", _double(snap), "enqueued", f"{snap.enqueued:,}")
        if snap.errors:
            grid.add_row(Text(f"! {snap.errors[-1]}", "yellow", overflow="ellipsis"))
        self.update(grid)


STATE_STYLES = {"stopping": "dim", "STALLED": "bold yellow", "alive": "green"}


def _state(w: WorkerStats) -> str:
    if not w.alive:
        return "stopping"
    return "STALLED" if w.stalled else "alive"


class WorkersTable(KeyedTable):
    """One row per worker process, keyed by its number K, as the generator counts it."""

    TITLE = "Load generator"
    SHORT_TITLE = "Load gen"
    COLUMNS = (
        Col("name", "worker", 18), Col("state", "state", 8), Col("pid", "pid", 7, "right"),
        Col("claimed", "claimed", 7, "right"), Col("completed", "done", 7, "right"),
        Col("failed", "failed", 6, "right"), Col("lock_waits", "lock waits", 10, "right"),
    )

    def cell_style(self, column: str, value: object) -> str | None:
        return STATE_STYLES.get(value) if column == "state" else None

    def update_from(self, snap: LoadSnapshot) -> None:
        self.set_rows((f"k{w.k}", w) for w in snap.workers)

    def values(self, key: str, w: WorkerStats) -> tuple:
        c = w.counters
        return (w.name, _state(w), w.pid or "-", c.get("claimed", 0), c.get("completed", 0),
                c.get("failed", 0), c.get("lock_waits", 0))
