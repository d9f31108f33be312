"""The load generator's own view: a headline strip, the sentence under it, its counters,
and one row per worker."""

from __future__ import annotations

from dataclasses import dataclass, replace

from rich.cells import cell_len
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from dashboard.loadgen import LoadSnapshot, WorkerStats
from dashboard.loadgen.demo import FIRST_RUN_HINT, describe
from dashboard.loadgen.stats import COUNTERS, RATE_WINDOW_S
from dashboard.models import LoadState
from dashboard.render.fit import GAP
from dashboard.text.untrusted import escape_controls
from dashboard.ui.widgets.keyedtable import Col, KeyedTable
from dashboard.ui.widgets.strip_parts import (
    WINDOW,
    StripPart,
    fit_strip,
    ms_unit,
    producer,
    rate,
    strip_parts,
)


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
    """One line, cut with an ellipsis: a long error never wraps or widens anything (an
    error may quote the server's text: escaped)."""
    return Text(escape_controls(text), style, no_wrap=True, overflow="ellipsis")


def _double(snap: LoadSnapshot) -> Text:
    """Must stay 0: anything else is a bug in the claim SQL, shouted."""
    style = "bold white on red" if snap.double_claims else "green"
    return Text(f"{snap.double_claims:,}", style)


class LoadStrip(Static):
    """One line above the tables: the generator's knobs and rates beside the database's view.

    It fits its width: long labels where they fit, short ones where not, and then the
    least needed numbers leave (never cut in the middle of one)."""

    _snap: LoadSnapshot | None = None
    _waiting: int | None = None  # sessions waiting on a lock at the last poll

    def on_resize(self) -> None:
        self.show(self._snap)

    def show_waiting(self, waiting: int) -> None:
        """The database's count of sessions waiting on a lock, from each poll."""
        if waiting != self._waiting:
            self._waiting = waiting
            self.show(self._snap)

    def show(self, snap: LoadSnapshot | None) -> None:
        self._snap = snap
        text = Text(no_wrap=True, overflow="ellipsis")
        badge = Text(" load generator ", "bold reverse")
        if snap is None:
            text.append_text(badge)
            text.append(" starting…", "dim")
            self.update(text)
            return
        if snap.double_claims:
            text.append(f" DOUBLE CLAIMS {snap.double_claims} ", "bold white on red")
        if not snap.running:
            text.append(" stopped ", "bold white on red")
        elif snap.reconnecting:
            text.append(*_reconnecting_badge(snap))
        parts, tail = strip_parts(snap, self._waiting), None
        if snap.running and snap.reconnecting:
            # who is down, then why; the rest is stale anyway
            first = [p for p in parts if p.label in ("workers ", "producer ")]
            parts = [replace(p, rank=0) for p in first] + [
                replace(p, rank=max(p.rank, 1)) for p in parts if p not in first
            ]
            why = escape_controls(snap.connection_error or "?")
            tail = StripPart("why ", "why ", why, "yellow", 0)
        room = self.size.width - cell_len(text.plain) if self.size.width else None
        badge, shown, short = fit_strip(badge, parts, room, tail)
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append_text(badge)
        line.append_text(text)
        for part in shown + ([tail] if tail else []):
            line.append(GAP + (part.short if short else part.label), "dim")
            line.append(part.value, part.style)
        self.update(line)


class RecordedLoadStrip(Static):
    """A replayed demo's load generator, as its frames kept it (demo --record): the knobs
    and the rates that caused what the tables show. Hidden where frames carry none."""

    DEFAULT_CSS = """
    RecordedLoadStrip { height: 1; display: none; background: $boost; }
    RecordedLoadStrip.-shown { display: block; }
    """

    def show(self, load: LoadState) -> None:
        p95 = "-" if load.claim_p95_ms is None else ms_unit(load.claim_p95_ms)
        parts = [
            (load.strategy, "bold"),
            (f"hold-tx {'on' if load.hold_tx else 'off'}", "bold yellow" if load.hold_tx else ""),
            (f"done {rate(load.done_per_s)}/s", "green"),
            (f"claim p95 {p95}", ""),
            (f"lock waits {rate(load.lock_waits_per_s)}/s", ""),
            (f"lock err {rate(load.lock_errors_per_s)}/s", ""),
            (f"workers {load.live_workers}/{load.target_workers}", ""),
        ]
        line = Text(" load (recorded) ", "bold reverse", no_wrap=True, overflow="ellipsis")
        for text, style in parts:
            line.append(GAP)
            line.append(text, style)
        self.update(line)
        self.add_class("-shown")


class LoadStory(Static):
    """Two lines under the strip: what the current strategy x hold-tx does and where to
    look (always), and until the first change of either knob, the hint that names `s`."""

    # as tall as its words: the hint's line and the sentence, wrapped (both were cut to one
    # line each at start, at 80 and 120 columns)
    DEFAULT_CSS = """
    LoadStory {
        height: auto;
        max-height: 4;
        padding: 0 1;
        color: $text-muted;
    }
    """

    _first: tuple[str, bool] | None = None
    _changed = False

    def show(self, snap: LoadSnapshot | None) -> None:
        if snap is None:
            self.update(Text(FIRST_RUN_HINT, "italic"))
            return
        now = (snap.strategy, snap.hold_tx)
        if self._first is None:
            self._first = now
        self._changed = self._changed or now != self._first
        sentence = Text(describe(*now))
        if self._changed:
            self.update(sentence)
            return
        self.update(Group(Text(FIRST_RUN_HINT, "bold"), sentence))


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
            grid.add_row(
                Text(a, "dim"),
                av if isinstance(av, Text) else Text(str(av)),
                Text(b, "dim"),
                bv if isinstance(bv, Text) else Text(str(bv)),
            )

        row(
            "strategy",
            Text(snap.strategy, "bold"),
            "hold-tx",
            Text("on", "bold yellow") if snap.hold_tx else "off",
        )
        row(
            "workers",
            f"{snap.live_workers}/{snap.target_workers}",
            "producer",
            producer(snap, short=True),
        )
        row(
            "claims/s",
            rate(snap.claims_per_s),
            "done/s",
            Text(rate(snap.completions_per_s), "green"),
        )
        lat = snap.recent_latency
        row("claim time", f"last {WINDOW}", "p50", ms_unit(lat.p50))
        row("p95", ms_unit(lat.p95), "p99", ms_unit(lat.p99))
        # what must stay visible first (a short pane cuts the last rows): rates, then the
        # two numbers that mean trouble, then the run's totals
        row(
            f"waits ({RATE_WINDOW_S:g}s)",
            f"{rate(snap.lock_waits_per_s)}/s",
            "lock err",
            f"{rate(snap.lock_errors_per_s)}/s",
        )
        row("double", _double(snap), "crashed", f"{snap.crashed:,}")
        row("claimed", f"{t.get('claimed', 0):,}", "done", f"{t.get('completed', 0):,}")
        row("failed", f"{t.get('failed', 0):,}", "dead", f"{t.get('dead', 0):,}")
        row(
            "waits total",
            f"{t.get('lock_waits', 0):,}",
            "err total",
            f"{t.get('lock_errors', 0):,}",
        )
        row(
            "nowait err",
            f"{t.get('nowait_errors', 0):,}",
            "timeouts",
            f"{t.get('lock_timeouts', 0):,}",
        )
        row(
            "deadlocks",
            f"{t.get('deadlocks', 0):,}",
            "crashes",
            "random" if snap.crash_rate else "! only",
        )
        row("empty", f"{t.get('empty_claims', 0):,}", "enqueued", f"{snap.enqueued:,}")
        # below the grid, not in it: a long line must not widen the grid's columns
        lines: list[Text] = []
        if snap.running and snap.reconnecting:
            badge, style = _reconnecting_badge(snap)
            lines.append(_line(badge.strip(), style))
            lines.append(_line(f"  {_who(snap)}, retrying", "yellow"))
            lines.append(_line(f"  {snap.connection_error or '?'}", "yellow"))
        lines += [_line(note, "cyan") for note in snap.notes]
        if snap.errors:
            lines.append(_line(f"! {snap.errors[-1]}", "yellow"))
        self.update(Group(grid, *lines) if lines else grid)


STATE_STYLES = {
    "stopping": "dim",
    "STALLED": "bold yellow",
    "alive": "green",
    "retrying": "bold yellow",
}


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
    backend_pid: int | None  # its session's pid: the one tabs 1-3 show
    process_id: int | None  # the worker's own OS process
    state: str
    counters: str  # since it started, one a line: "claimed    552", "completed  547", …

    @classmethod
    def of(cls, w: WorkerStats) -> WorkerDetail:
        # one a line, numbers aligned: a wrapped "failed / 0" would pair the wrong words
        counts = [(name.replace("_", " "), f"{w.counters.get(name, 0):,}") for name in COUNTERS]
        names, numbers = (max(len(x[i]) for x in counts) for i in (0, 1))
        return cls(
            worker_number=w.k,
            session=w.session,
            backend_pid=w.backend_pid,
            process_id=w.pid,
            state=_state(w),
            counters="\n".join(f"{name:<{names}}  {n:>{numbers}}" for name, n in counts),
        )


class WorkersTable(KeyedTable):
    """One row per worker process, keyed by its number K, as the generator counts it."""

    TITLE = "Load generator"
    SHORT_TITLE = "Load"
    COLUMNS = (
        # beside the summary an 80-column screen leaves ~35 cells: name and state stay
        Col("name", "worker", 21),
        Col("state", "state", 8),
        # pid: the backend's, as the lock, waiting and idle tables show it; then the OS's
        Col("pid", "pid", 7, "right", drop=1),
        Col("os_pid", "os pid", 7, "right", drop=3),
        Col("claimed", "claimed", 7, "right", drop=2),
        Col("completed", "done", 7, "right", drop=2),
        Col("failed", "failed", 6, "right", drop=3),
        Col("lock_waits", "lock waits", 10, "right", drop=3),
    )

    def cell_style(self, column: str, value: object) -> str | None:
        return STATE_STYLES.get(value) if column == "state" else None

    def update_from(self, snap: LoadSnapshot) -> None:
        self.set_rows((f"k{w.k}", w) for w in snap.workers)

    def values(self, key: str, w: WorkerStats) -> tuple:
        c = w.counters
        # the session's name, as the lock, idle and stale-lease tables show it
        return (
            w.session,
            _state(w),
            w.backend_pid or "-",
            w.pid or "-",
            f"{c.get('claimed', 0):,}",
            f"{c.get('completed', 0):,}",
            f"{c.get('failed', 0):,}",
            f"{c.get('lock_waits', 0):,}",
        )

    def action_select_cursor(self) -> None:
        """Enter: the worker in words (its counters one a line), not its raw stats."""
        key = self.cursor_key()
        if key is not None:
            self.post_message(self.RowSelected(self, key, WorkerDetail.of(self.items[key])))
