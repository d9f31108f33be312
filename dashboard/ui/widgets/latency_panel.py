"""How long jobs waited and ran lately, for the queue and its busiest groups: p50, p95 and
p99 of the wait (ready or due until started) and of the run (started until finished),
jobs finished per minute and the share that failed, over the monitor's latency window.

Under the plots and above the tables, a line per group: a header, the whole queue, then
the groups that finished the most jobs. On a small terminal one line for the queue. What
the spec cannot measure says so where the numbers would be, and why below them (the
column or flag that would enable it); a paced or failed read says so, and how old.
"""

from __future__ import annotations

from dataclasses import dataclass

from dashboard.models import Durations, GroupLatency, Latency, QueueSpec, Snapshot
from dashboard.render.report import age
from dashboard.text.untrusted import shown as safe
from dashboard.ui.widgets.lines_panel import Line, LinesPanel
from dashboard.ui.widgets.state_panel import clip, wrap
from dashboard.ui.widgets.text_strip import Part

NAME_W = 16
BLOCK_W = 22  # p50 (8 cells), p95 and p99 (7 each)
NOT_MEASURED = "not measured"
GROUP_ROWS = {"compact": 0, "normal": 3, "tall": 6}  # group lines under the queue's
FAILED_STYLE = "red"
NOTE_STYLE = "yellow"


@dataclass(frozen=True)
class Shape:
    """What the lines are drawn for: the terminal's mode, the width, and whether the spec
    has a group column (the group lines then keep their room)."""

    mode: str = "normal"
    width: int = 120
    grouped: bool = False


def window_text(seconds: float) -> str:
    """The window as people say it: 5m, 1h, 90s."""
    s = int(seconds)
    if s and s % 3600 == 0:
        return f"{s // 3600}h"
    if s and s % 60 == 0:
        return f"{s // 60}m"
    return age(seconds)


def per_minute(group: GroupLatency, window_s: float) -> str:
    """Jobs finished per minute over the window."""
    rate = group.finished * 60 / window_s if window_s > 0 else 0.0
    return f"{rate:.1f}" if rate < 10 else f"{rate:,.0f}"


def failed_share(group: GroupLatency) -> str:
    """The share of the window's finished jobs that failed; '-' when none finished."""
    if not group.finished:
        return "-"
    return f"{100 * group.failed / group.finished:.1f}%"


def short(seconds: float | None) -> str:
    """A duration as the panel shows it: '12ms' below a tenth of a second (a job's run is
    often that short: '0.0s' said nothing), else as an age ('0.4s', '1m28s')."""
    if seconds is not None and 0 <= seconds < 0.1:
        return f"{seconds * 1000:.0f}ms"
    return age(seconds)


def percentiles(durations: Durations | None) -> tuple[str, str, str] | None:
    """p50, p95, p99 as short ages ('-' where no job is in the window); None: not measured."""
    if durations is None:
        return None
    return (short(durations.p50_s), short(durations.p95_s), short(durations.p99_s))


def busiest(latency: Latency) -> list[GroupLatency]:
    """The groups that finished the most jobs first, then those that started the most."""
    started = lambda g: g.wait.count if g.wait else 0  # noqa: E731
    return sorted(latency.groups, key=lambda g: (-g.finished, -started(g), g.group or ""))


def never_read(latency: Latency) -> bool:
    """The monitor has not read it yet (or every read failed): nothing to show but why."""
    return latency.read_at is None and latency.error is not None


def read_note(snap: Snapshot) -> str | None:
    """Why the numbers are older than the poll: the read failed (and how old the numbers
    are), or no index serves it so it is paced (how often, and how old); None: fresh."""
    latency = snap.latency
    if latency is None:
        return None
    old = ""
    if latency.read_at is not None:
        seconds = (snap.taken_at - latency.read_at).total_seconds()
        old = f"{age(seconds)} old" if seconds >= 1 else ""
    if latency.error:
        return f"! {safe(latency.error)}" + (f"; numbers {old}" if old else "")
    if latency.paced:
        return f"{old}, {safe(latency.paced)}" if old else safe(latency.paced)
    return None


def block(cells: tuple[str, str, str] | None) -> Part:
    if cells is None:
        return (f"{NOT_MEASURED:>{BLOCK_W}}", NOTE_STYLE)
    return (f"{cells[0]:>8}{cells[1]:>7}{cells[2]:>7}", "" if cells[0] != "-" else "dim")


def rates(group: GroupLatency, latency: Latency) -> tuple[Part, Part]:
    """Jobs finished per minute and the share that failed; where the spec has no finish
    time (Latency.finished_measured), not measured: never a 0 for unknown."""
    window_s = latency.window_s
    if not latency.finished_measured:
        return (f"  {NOT_MEASURED:>20}", NOTE_STYLE), ("", "")
    failed = failed_share(group)
    return (
        (f"  {per_minute(group, window_s):>12}", ""),
        (f" {failed:>7}", FAILED_STYLE if group.failed else ("dim" if failed == "-" else "")),
    )


def row(name: str, group: GroupLatency, latency: Latency, style: str = "") -> Line:
    return (
        (f"{clip(safe(name), NAME_W):<{NAME_W}} ", style),
        block(percentiles(group.wait)),
        ("  ", ""),
        block(percentiles(group.run)),
        *rates(group, latency),
    )


def header(window_s: float) -> Line:
    return (
        (f"{'Latency ' + window_text(window_s):<{NAME_W}} ", "bold"),
        (
            f"{'wait p50':>8}{'p95':>7}{'p99':>7}  {'run p50':>8}{'p95':>7}{'p99':>7}"
            f"  {'finished/min':>12} {'failed':>7}",
            "dim",
        ),
    )


def compact_line(latency: Latency, shape: Shape) -> Line:
    """The queue's numbers on one line; the p99s, then the p50s, give way to the width."""
    q = latency.queue
    wait, run = percentiles(q.wait), percentiles(q.run)
    if latency.finished_measured:
        tail: tuple[Part, ...] = (
            (f"  {per_minute(q, latency.window_s)}/min", ""),
            ("  failed ", "dim"),
            (failed_share(q), FAILED_STYLE if q.failed else ""),
        )
    else:
        tail = (("  finished ", "dim"), (NOT_MEASURED, NOTE_STYLE))
    for keep, title in (((0, 1, 2), "p50/95/99"), ((0, 1), "p50/95"), ((1,), "p95")):
        parts: list[Part] = [(f"Latency {window_text(latency.window_s)} ", "bold")]
        parts.append((title, "dim"))
        for label, cells in (("wait", wait), ("run", run)):
            parts.append((f"  {label} ", "dim"))
            parts.append(
                (NOT_MEASURED, NOTE_STYLE)
                if cells is None
                else (" ".join(cells[i] for i in keep), "")
            )
        line = (*parts, *tail)
        if sum(len(text) for text, _ in line) <= shape.width:
            break
    return line


def unread_line(snap: Snapshot | None) -> Line:
    """The line before any latency was read: waiting, or why not."""
    if snap is None:
        return (("Latency: waiting for the first snapshot…", "dim"),)
    latency = snap.latency
    if latency is None:  # a monitor or a recording without the latency section
        return (("Latency: not in this snapshot", "dim"),)
    window = window_text(latency.window_s)
    if latency.error == "not read yet":
        return ((f"Latency {window}: not read yet", "dim"),)
    return (
        (f"Latency {window} not read: ", "bold " + NOTE_STYLE),
        (safe(latency.error), NOTE_STYLE),
    )


def latency_lines(snap: Snapshot | None, shape: Shape) -> list[Line]:
    """Every line of the panel for `snap` drawn at `shape`."""
    latency = snap.latency if snap is not None else None
    missing = [
        ((line, NOTE_STYLE),)
        for m in (latency.missing if latency is not None else ())
        for line in wrap(f"! {safe(m)}", shape.width)
    ]
    if snap is None or latency is None or never_read(latency):
        return [unread_line(snap), *missing]
    note = read_note(snap)
    notes = [((line, NOTE_STYLE),) for line in wrap(note, shape.width)] if note else []
    if shape.mode == "compact":
        return [compact_line(latency, shape), *notes, *missing]
    lines = [header(latency.window_s)]
    if note and len(note) + 2 + sum(len(t) for t, _ in lines[0]) <= shape.width:
        lines[0] += (("  " + note, NOTE_STYLE),)  # the note fits beside the titles
        notes = []
    lines.append(row("queue", latency.queue, latency, "bold"))
    lines += notes + missing
    room = max(GROUP_ROWS[shape.mode] + 2 - len(lines), 0)
    groups = busiest(latency)
    more = None
    if len(groups) > room:  # never cut silently: what does not fit is counted
        kept = max(room - 1, 0)
        more = f"… {len(groups) - kept} more groups (snapshot --json has them all)"
        groups = groups[:kept]
    lines += [row(g.group or "-", g, latency) for g in groups[:room]]
    if more:
        lines.append(((more, "dim italic"),))
    if shape.grouped:  # the group lines keep their room: nothing below moves
        lines += [()] * (GROUP_ROWS[shape.mode] + 2 - len(lines))
    return lines


class LatencyPanel(LinesPanel):
    """The latency lines; `fit` sets the mode (how many group lines there is room for).
    Its height is its lines', set when their number changes (rarely: a spec's group rows
    keep their room)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.mode = "normal"
        self._last: tuple[Snapshot | None, QueueSpec | None] = (None, None)
        self._shown: tuple | None = None
        self._height = 0

    def fit(self, mode: str) -> None:
        """'compact' (one line for the queue), 'normal' or 'tall' (more group lines)."""
        if mode != self.mode:
            self.mode = mode
            self.show(*self._last)

    def on_resize(self) -> None:
        self.show(*self._last)  # the wrapping depends on the width

    def show(self, snap: Snapshot | None, spec: QueueSpec | None) -> None:
        shown = (id(snap), id(spec), self.mode, self.content_size.width)
        if shown == self._shown:
            return
        self._last, self._shown = (snap, spec), shown
        grouped = spec is not None and spec.columns.group is not None
        width = max(self.content_size.width, 40)
        lines = latency_lines(snap, Shape(self.mode, width, grouped))
        if len(lines) != self._height:
            self._height = len(lines)
            self.styles.height = self._height
        self._draw(lines)
