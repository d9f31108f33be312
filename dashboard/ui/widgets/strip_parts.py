"""The load strip's numbers: each with its long and short label, and which of them fit a
width (the highest ranks leave first, none is ever cut)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from rich.cells import cell_len
from rich.text import Text

from dashboard.loadgen import LoadSnapshot
from dashboard.loadgen.stats import LATENCY_WINDOW_S
from dashboard.render.fit import GAP, kept

WINDOW = f"{LATENCY_WINDOW_S:g}s"  # the claim latency percentiles cover this recent window


def ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def ms_unit(value: float | None) -> str:
    return "-" if value is None else f"{ms(value)} ms"


def rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def producer(snap: LoadSnapshot, short: bool = False) -> str:
    if "producer" in snap.reconnecting:
        return "retrying" if short else "reconnecting"
    if snap.rate <= 0:
        return "off"
    if snap.producer_paused:
        return "paused" if short else f"{snap.rate:,g}/s paused"
    return f"{snap.rate:,g}/s"


@dataclass(frozen=True)
class StripPart:
    """One number of the strip: its labels (long, short), value, style, and rank (0 always
    shows; the highest rank leaves first when the line is too narrow)."""

    label: str
    short: str
    value: str
    style: str
    rank: int

    def width(self, short: bool) -> int:
        return cell_len((self.short if short else self.label) + self.value)


def strip_parts(snap: LoadSnapshot, waiting: int | None = None) -> list[StripPart]:
    """In the order of the `s` story: how workers claim, what they get done, how long a
    claim takes, how many sessions wait on a lock now (`waiting`, the database's view: None
    before the first poll), how often they queue on a lock or fail on one (per second, like
    the rest: the run's totals are in the counters, tab 5); then who runs, what crashed,
    the rest."""
    waits, errors = snap.lock_waits_per_s, snap.lock_errors_per_s
    now = (
        []
        if waiting is None
        else [StripPart("waiting ", "waiting ", f"{waiting:,}", "bold red" if waiting else "", 0)]
    )
    lock_waits = StripPart(  # none (skip-locked): with the error rate, the first to leave
        "lock waits ",
        "lock waits ",
        f"{rate(waits)}/s",
        "bold yellow" if waits else "",
        1 if waits else 2,
    )
    lock_errors = StripPart(  # none (skip-locked, for-update): the first of these to leave
        "lock errors ",
        "lock err ",
        f"{rate(errors)}/s",
        "bold yellow" if errors else "",
        1 if errors else 2,
    )
    # the rate nowait's sentence points to (describe(): `lock errors/s`) is kept, and early:
    # a part leaves from the right (for-update's points to `waiting`, kept anyway)
    named = lock_errors if snap.strategy == "nowait" else None
    pointed = [replace(named, rank=0)] if named else []
    return [
        StripPart("", "", snap.strategy, "bold", 0),
        StripPart(
            "hold-tx ",
            "hold-tx ",
            "on" if snap.hold_tx else "off",
            "bold yellow" if snap.hold_tx else "",
            0,
        ),
        StripPart("done ", "done ", f"{rate(snap.completions_per_s)}/s", "bold green", 0),
        *pointed,
        StripPart(f"claim p95 ({WINDOW}) ", "claim p95 ", ms_unit(snap.recent_latency.p95), "", 0),
        *now,
        *(part for part in (lock_waits, lock_errors) if part is not named),
        StripPart("workers ", "workers ", f"{snap.live_workers}/{snap.target_workers}", "bold", 1),
        StripPart("crashed ", "crashed ", f"{snap.crashed:,}", "", 1),
        StripPart(
            "producer ",
            "producer ",
            producer(snap),
            "bold cyan" if snap.producer_paused else "",
            2,
        ),
        StripPart("claims ", "claims ", f"{rate(snap.claims_per_s)}/s", "", 3),
    ]


def fit_strip(
    badge: Text, parts: list[StripPart], room: int | None, tail: StripPart | None = None
) -> tuple[Text, list[StripPart], bool]:
    """(badge, parts shown, short labels?) for `room` cells: every part with long labels
    if they fit, else a short badge and short labels, the highest ranks leaving until the
    rest fits. `tail` (an error) comes last and takes what is left, cut. None room (not
    laid out yet): everything, long."""
    if room is None:
        return badge, parts, False
    reserve = 0 if tail is None else len(GAP) + 24  # the tail gets at least this

    def space(head: Text) -> int:
        return room - cell_len(head.plain) - len(GAP) - reserve

    long = [p.width(False) for p in parts]
    if sum(long) + len(GAP) * (len(parts) - 1) <= space(badge):
        return badge, parts, False
    head = Text(" load ", badge.style)
    keep = kept([p.width(True) for p in parts], [p.rank for p in parts], space(head), whole=True)
    return head, [parts[i] for i in keep], True
