"""The load generator's own view: a headline strip, its counters, and one row per worker."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from dashboard.loadgen import LoadSnapshot, WorkerStats
from dashboard.loadgen.stats import COUNTERS, LATENCY_WINDOW_S
from dashboard.ui.widgets.keyedtable import Col, KeyedTable

WINDOW = f"{LATENCY_WINDOW_S:g}s"  # the claim latency percentiles cover this recent window


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def _ms_unit(value: float | None) -> str:
    return "-" if value is None else f"{_ms(value)} ms"


def _rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def _producer(snap: LoadSnapshot, short: bool = False) -> str:
    if "producer" in snap.reconnecting:
        return "retrying" if short else "reconnecting"
    if snap.rate <= 0:
        return "off"
    if snap.producer_paused:
        return "paused" if short else f"{snap.rate:,g}/s paused"
    return f"{snap.rate:,g}/s"


def _unreachable(snap: LoadSnapshot) -> bool:
    """Every connection the generator has is lost (the producer's and each worker's): the
    database is gone, not just one session."""
    active = sum(1 for w in snap.workers if w.alive) + 1
    return bool(snap.reconnecting) and len(snap.reconnecting) >= active


def _who(snap: LoadSnapshot) -> str:
    workers = sum(1 for name in snap.reconnecting if name != "producer")
    names = ["producer"] if "producer" in snap.reconnecting else []
    if workers:
        names.append(f"{workers} worker{'s' if workers > 1 else ''}")
    return " + ".join(names)


def _reconnecting_badge(snap: LoadSnapshot) -> tuple[str, str]:
    if _unreachable(snap):
        return " DATABASE UNREACHABLE: reconnecting ", "bold white on red"
    return f" {len(snap.reconnecting)} reconnecting ", "bold black on yellow"


def _line(text: str, style: str) -> Text:
    """One line, cut with an ellipsis: a long error never wraps or widens anything."""
    return Text(text, style, no_wrap=True, overflow="ellipsis")


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
        elif snap.reconnecting:
            text.append(*_reconnecting_badge(snap))
        # what an operator needs first comes first: a narrow screen cuts the line at its end
        parts = [
            ("", snap.strategy, "bold"),
            ("hold-tx ", "on" if snap.hold_tx else "off", "bold yellow" if snap.hold_tx else ""),
            ("workers ", f"{snap.live_workers}/{snap.target_workers}", "bold"),
            ("producer ", _producer(snap), "bold cyan" if snap.producer_paused else ""),
            ("done ", f"{_rate(snap.completions_per_s)}/s", "bold green"),
            (f"claim p95 ({WINDOW}) ", _ms_unit(snap.recent_latency.p95), ""),
            ("claims ", f"{_rate(snap.claims_per_s)}/s", "bold"),
            ("lock waits ", f"{snap.totals.get('lock_waits', 0):,}", ""),
            ("crashed ", f"{snap.crashed:,}", ""),
        ]
        if snap.running and snap.reconnecting:
            # what an operator needs first: who is down, then why; the rest is stale anyway
            first = [p for p in parts if p[0] in ("workers ", "producer ")]
            parts = first + [("why ", snap.connection_error or "?", "yellow")] + \
                [p for p in parts if p not in first]
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
        lat = snap.recent_latency
        row("claim time", f"last {WINDOW}", "p50", _ms_unit(lat.p50))
        row("p95", _ms_unit(lat.p95), "p99", _ms_unit(lat.p99))
        row("lock waits", f"{t.get('lock_waits', 0):,}", "lock err", f"{t.get('lock_errors', 0):,}")
        row("empty", f"{t.get('empty_claims', 0):,}", "crashed", f"{snap.crashed:,}")
        row("claimed", f"{t.get('claimed', 0):,}", "done", f"{t.get('completed', 0):,}")
        row("failed", f"{t.get('failed', 0):,}", "dead", f"{t.get('dead', 0):,}")
        row("double", _double(snap), "enqueued", f"{snap.enqueued:,}")
        # below the grid, not in it: a long line must not widen the grid's columns
        lines: list[Text] = []
        if snap.running and snap.reconnecting:
            badge, style = _reconnecting_badge(snap)
            lines.append(_line(badge.strip(), style))
            lines.append(_line(f"  {_who(snap)}, retrying", "yellow"))
            lines.append(_line(f"  {snap.connection_error or '?'}", "yellow"))
        if snap.errors:
            lines.append(_line(f"! {snap.errors[-1]}", "yellow"))
        self.update(Group(grid, *lines) if lines else grid)


STATE_STYLES = {"stopping": "dim", "STALLED": "bold yellow", "alive": "green",
                "retrying": "bold yellow"}


def _state(w: WorkerStats) -> str:
    if not w.alive:
        return "stopping"
    if not w.connected:
        return "retrying"  # its connection is lost; it reconnects
    return "STALLED" if w.stalled else "alive"


@dataclass(frozen=True)
class WorkerDetail:
    """One worker as the detail view (Enter) shows it: field names read as labels there."""

    worker_number: int  # K of queuetop-worker-K, as the generator counts them
    session: str  # its application_name now (queuetop-worker-K.N after a lost session)
    process_id: int | None
    state: str
    counters: str  # since it started, one a line: "claimed    552", "completed  547", …

    @classmethod
    def of(cls, w: WorkerStats) -> WorkerDetail:
        # one a line, numbers aligned: a wrapped "failed / 0" would pair the wrong words
        counts = [(name.replace("_", " "), f"{w.counters.get(name, 0):,}") for name in COUNTERS]
        names, numbers = (max(len(x[i]) for x in counts) for i in (0, 1))
        return cls(worker_number=w.k, session=w.session, process_id=w.pid, state=_state(w),
                   counters="\n".join(f"{name:<{names}}  {n:>{numbers}}" for name, n in counts))


class WorkersTable(KeyedTable):
    """One row per worker process, keyed by its number K, as the generator counts it."""

    TITLE = "Load generator"
    SHORT_TITLE = "Load gen"
    COLUMNS = (
        # beside the summary an 80-column screen leaves ~35 cells: name and state stay
        Col("name", "worker", 21), Col("state", "state", 8),
        Col("pid", "pid", 7, "right", drop=1), Col("claimed", "claimed", 7, "right", drop=2),
        Col("completed", "done", 7, "right", drop=2), Col("failed", "failed", 6, "right", drop=3),
        Col("lock_waits", "lock waits", 10, "right", drop=3),
    )

    def cell_style(self, column: str, value: object) -> str | None:
        return STATE_STYLES.get(value) if column == "state" else None

    def update_from(self, snap: LoadSnapshot) -> None:
        self.set_rows((f"k{w.k}", w) for w in snap.workers)

    def values(self, key: str, w: WorkerStats) -> tuple:
        c = w.counters
        # the session's name, as the lock, idle and stale-lease tables show it
        return (w.session, _state(w), w.pid or "-", f"{c.get('claimed', 0):,}",
                f"{c.get('completed', 0):,}", f"{c.get('failed', 0):,}",
                f"{c.get('lock_waits', 0):,}")

    def action_select_cursor(self) -> None:
        """Enter: the worker in words (its counters one a line), not its raw stats."""
        key = self.cursor_key()
        if key is not None:
            self.post_message(self.RowSelected(self, key, WorkerDetail.of(self.items[key])))
