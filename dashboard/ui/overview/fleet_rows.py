"""The rows of the overview across targets: one per queue per target (one for the target
itself while its queues are unknown), each with its link state and the reasons said whole
in the line under the table."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from rich.text import Text

from dashboard.discover.fleet import Progress
from dashboard.discover.fleet_target import ERROR, LIVE, NO_QUEUE, UNREACHABLE, TargetPoll
from dashboard.models import Snapshot
from dashboard.render.report import age
from dashboard.text.untrusted import escape_controls
from dashboard.ui.poller import link_of
from dashboard.ui.widgets.status import STYLES

COLUMNS = (
    "target",
    "queue",
    "ready",
    "running",
    "oldest ready",
    "p95 wait",
    "stale",
    "waiting",
    "unclaimed",
    "link",
)
SLOW = "slow"
LINK_STYLES = STYLES | {UNREACHABLE: "bold white on red", NO_QUEUE: "bold"}


@dataclass(frozen=True)
class FleetRow:
    key: str
    target: str
    index: int | None  # the queue's place in its target; None: the target's own row
    link: str  # the link column's word: live, slow, unreachable, timed out, error...
    cells: tuple[Text, ...]
    detail: str  # every reason, whole: the line under the table says it for the cursor's row

    @property
    def why_not_open(self) -> str | None:
        """Why Enter cannot open this row's queue (None: it can)."""
        if self.index is None or self.link in (UNREACHABLE, ERROR, NO_QUEUE, "connecting"):
            return self.detail
        return None


def _cell(value: object, style: str = "") -> Text:
    """Every cell as Text: names from a catalog are never parsed as markup."""
    return Text(escape_controls("-" if value is None else str(value)), style=style, no_wrap=True)


def p95_wait(snap: Snapshot) -> tuple[str | None, str | None]:
    """The queue's p95 wait over the latency window, and why it is not known (or is old)."""
    latency = snap.latency
    if latency is None:
        return None, "p95 wait: not read"
    wait = latency.queue.wait
    if wait is None:  # the spec lacks a timestamp wait needs, or the read failed
        about_wait = [m for m in latency.missing if "wait" in m.lower()]
        why = latency.error or next(iter(about_wait or latency.missing), None) or "not read"
        return None, f"p95 wait: {why}"
    if wait.p95_s is None:
        why = latency.error or f"no job started in the last {age(latency.window_s)}"
        return None, f"p95 wait: {why}"
    return age(wait.p95_s), (f"p95 wait: {latency.error}" if latency.error else None)


def _numbers(snap: Snapshot) -> tuple[object, ...]:
    waiting = {lk.pid for lk in snap.locks if lk.on_queue_table and not lk.granted}
    unclaimed = sum(snap.unmapped.values())
    return (
        snap.counts.get("ready", 0),
        snap.counts.get("running", 0),
        None if snap.oldest_ready_age_s is None else age(snap.oldest_ready_age_s),
        p95_wait(snap)[0],
        "?" if snap.stale_count is None else snap.stale_count,
        len(waiting),
        unclaimed,
    )


def _slow(progress: Progress | None, interval: float) -> str | None:
    """A poll running past the interval: the target is slow (its last numbers stay)."""
    if progress is not None and progress.state == "running" and progress.seconds > interval:
        return f"no answer for {math.floor(progress.seconds)}s"
    return None


def target_rows(
    name: str,
    where: str,
    poll: TargetPoll | None,
    progress: Progress | None,
    interval: float,
    last_read: dict[int, datetime] | None = None,
) -> list[FleetRow]:
    """The rows of one target: `where` is its DSN without a password; `last_read` when
    each of its queues was last read (said while it cannot be)."""
    last_read = last_read or {}
    slow = _slow(progress, interval)
    if poll is None or not poll.queues:
        if poll is None:
            link = "waiting for a connection" if _queued(progress) else "connecting"
            link = SLOW if slow else link
            why = slow or "first poll under way"
        else:
            link, why = (SLOW, slow) if slow and poll.kind == LIVE else (poll.kind, poll.reason)
        detail = f"{name} ({where}): {link}" + (f": {why}" if why and why != link else "")
        cells = (_cell(name), _cell(None), *(_cell(None) for _ in range(7)), _link(link))
        return [FleetRow(f"{name}/-", name, None, link, cells, detail)]
    rows = []
    for index, line in enumerate(poll.queues):
        reasons: list[str] = []
        numbers: tuple[object, ...] = (None,) * 7
        if poll.kind != LIVE:
            link = poll.kind
            reasons.append(poll.reason or link)
            if index in last_read:
                reasons.append(f"last read {last_read[index]:%H:%M:%S}")
        elif line.snapshot is None:
            link = ERROR
            reasons.append(line.error or "not read")
        else:
            snap = line.snapshot
            numbers = _numbers(snap)
            state = link_of(snap, interval)
            link = state.kind
            reasons += [r for r in (state.detail, state.reason) if r]
            reasons += list(snap.unknowns)
            reasons += [w for w in snap.warnings if w not in snap.unknowns]
            why_p95 = p95_wait(snap)[1]
            if why_p95:
                reasons.append(why_p95)
            reasons.append(f"read {snap.taken_at:%H:%M:%S}")
        if slow and poll.kind == LIVE:
            link = SLOW
            reasons.insert(0, slow)
        elif slow:  # a retry that hangs: still what the last poll found
            reasons.append(f"retrying, {slow}")
        detail = f"{name} ({where}) {line.label}: {link}" + "".join(f"; {r}" for r in reasons)
        cells = (_cell(name), _cell(line.label), *(_cell(n) for n in numbers), _link(link))
        rows.append(FleetRow(f"{name}/{index}", name, index, link, cells, detail))
    return rows


def _queued(progress: Progress | None) -> bool:
    return progress is not None and progress.state == "queued"


def _link(link: str) -> Text:
    return _cell(link, LINK_STYLES.get(link, ""))
