"""The postmortem summary of a recording (or a window of it): `queuetop incident`.

One pass over the frames, in order: when the queue backed up (the oldest ready job older
than a threshold), the peak of waiting sessions and the longest blocker chain (who was at
its root: pid, application, query), the stale leases that appeared and what became of
them (the audit trail says who recovered which, and when), the oldest idle transaction and
how long it held the xmin horizon, deadlocks, and what the monitor itself cost.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from dashboard.audit.trail import AuditRecord
from dashboard.models import Snapshot, id_text
from dashboard.recorder.reader import Recording

DEFAULT_MAX_OLDEST_READY_S = 60.0


@dataclass
class Backlog:
    """A stretch of frames where the oldest ready job was older than the threshold."""

    start: float
    end: float
    peak_age_s: float
    peak_at: float
    peak_ready: int


@dataclass
class Blocker:
    """A session at the root of a wait chain, as the frames saw it."""

    pid: int
    application: str
    query: str
    state: str | None
    xact_age_s: float | None


@dataclass
class WaitPeak:
    at: float
    waiting: int
    chain: tuple[int, ...]  # root blocker first, the longest chain at that moment
    blocker: Blocker | None
    waiters_of_blocker: int  # sessions waiting behind that root, directly or not


@dataclass
class Recovery:
    at: float
    action: str
    outcome: str
    who: str
    actor: str | None
    reason: str | None


@dataclass
class StaleSighting:
    job_id: str
    worker: str | None
    first_seen: float
    last_seen: float
    max_overdue_s: float
    stale_before_window: bool  # already stale in the window's first frame
    gone_at: float | None  # the first frame without it (None: stale to the end)
    recovery: Recovery | None = None


@dataclass
class IdleHold:
    pid: int
    application: str
    user: str
    first_seen: float
    last_seen: float
    max_xact_age_s: float
    held_horizon_s: float | None  # how long its snapshot held the xmin horizon back
    max_xmin_age: int | None
    query: str


@dataclass
class Deadlocks:
    recorded: bool  # the snapshots carry a deadlock figure (newer recorders)
    fields: tuple[str, ...] = ()
    total: float = 0.0
    peak: float = 0.0
    peak_at: float | None = None


@dataclass
class MonitorCost:
    polls: int
    poll_ms_median: float
    poll_ms_p95: float
    poll_ms_max: float
    load_median: float | None
    load_max: float | None
    slowest_section: str | None
    slowest_section_ms: float
    section_errors: dict[str, int] = field(default_factory=dict)


@dataclass
class Incident:
    file: str
    queue: str
    since: float
    until: float
    frames: int
    max_oldest_ready_s: float
    backlogs: list[Backlog]
    peak_waiting: WaitPeak | None
    longest_chain: WaitPeak | None
    stale_leases: list[StaleSighting]
    oldest_idle: IdleHold | None
    deadlocks: Deadlocks
    monitor: MonitorCost | None
    audit: list[AuditRecord]


def summarise(
    recording: Recording,
    since: float | None = None,
    until: float | None = None,
    max_oldest_ready_s: float = DEFAULT_MAX_OLDEST_READY_S,
) -> Incident:
    bounds = recording.bounds()
    first = since if since is not None else (bounds.first_at if bounds else 0.0)
    last = until if until is not None else (bounds.last_at if bounds else 0.0)
    ids = recording.ids_between(first, last)
    audit = sorted(recording.audit(until=last, since=first, limit=100_000), key=lambda r: r.at)
    pass_ = _Pass(max_oldest_ready_s, recording.interval)
    if ids:
        for snap in recording.snapshots(ids[0], ids[-1]):
            pass_.add(snap)
    return Incident(
        file=str(recording.path),
        queue=recording.queue,
        since=first,
        until=last,
        frames=pass_.frames,
        max_oldest_ready_s=max_oldest_ready_s,
        backlogs=pass_.backlogs,
        peak_waiting=pass_.peak,
        longest_chain=pass_.longest,
        stale_leases=pass_.stale_sightings(audit),
        oldest_idle=pass_.oldest_idle(),
        deadlocks=pass_.deadlock_summary(),
        monitor=pass_.monitor_cost(),
        audit=audit,
    )


def _blocker(snap: Snapshot, pid: int) -> Blocker | None:
    for s in snap.blockers:
        if s.pid == pid:
            return Blocker(pid, s.application_name, s.query, s.state, s.xact_age_s)
    for s in snap.idle_in_transaction:
        if s.pid == pid:
            return Blocker(pid, s.application_name, s.query, "idle in transaction", s.xact_age_s)
    for s in snap.locks:
        if s.pid == pid:
            return Blocker(pid, s.application_name, s.query, s.state, None)
    return None


class _Pass:
    """What one pass over the frames keeps."""

    def __init__(self, max_oldest_ready_s: float, interval: float):
        self.threshold = max_oldest_ready_s
        self.interval = interval
        self.frames = 0
        self.backlogs: list[Backlog] = []
        self.peak: WaitPeak | None = None
        self.longest: WaitPeak | None = None
        self._stale: dict[str, StaleSighting] = {}
        self._idle: dict[tuple, IdleHold] = {}
        # (at, pg_stat_database.deadlocks, its rise per second) of each frame that has them
        self._deadlocks: list[tuple[float, int, float | None]] = []
        self._polls: list[float] = []
        self._loads: list[float] = []
        self._sections: dict[str, float] = {}
        self._section_errors: dict[str, int] = {}
        self._last_at: float | None = None

    def add(self, snap: Snapshot) -> None:
        at = snap.taken_at.timestamp()
        self.frames += 1
        self._backlog(snap, at)
        self._waits(snap, at)
        self._stale_leases(snap, at)
        self._idle_transactions(snap, at)
        if snap.deadlocks_total is not None:
            self._deadlocks.append((at, snap.deadlocks_total, snap.deadlocks_per_s))
        self._polls.append(snap.elapsed_ms)
        if snap.monitor_load is not None:
            self._loads.append(snap.monitor_load)
        for s in snap.sections:
            self._sections[s.name] = max(self._sections.get(s.name, 0.0), s.cost_ms)
            if s.error:
                self._section_errors[s.name] = self._section_errors.get(s.name, 0) + 1
        self._last_at = at

    def _backlog(self, snap: Snapshot, at: float) -> None:
        age = snap.oldest_ready_age_s
        if age is None or age <= self.threshold:
            return
        ready = snap.counts.get("ready", 0)
        current = self.backlogs[-1] if self.backlogs else None
        if current is None or current.end != self._last_at:
            current = Backlog(at, at, age, at, ready)
            self.backlogs.append(current)
        current.end = at
        if age > current.peak_age_s:
            current.peak_age_s, current.peak_at, current.peak_ready = age, at, ready

    def _waits(self, snap: Snapshot, at: float) -> None:
        if not snap.waiting:
            return
        # the queue's own pile-up first: a longer chain on another table is not its root
        ours = snap.queue_pids
        chain = max(
            (w.chain for w in snap.waiting), key=lambda c: (bool(ours & set(c)), len(c)), default=()
        )
        if self.peak is None or len(snap.waiting) > self.peak.waiting:
            self.peak = self._moment(snap, at, chain)
        if chain and (self.longest is None or len(chain) > len(self.longest.chain)):
            self.longest = self._moment(snap, at, chain)

    @staticmethod
    def _moment(snap: Snapshot, at: float, chain: tuple[int, ...]) -> WaitPeak:
        root = chain[0] if chain else None
        behind = sum(1 for w in snap.waiting if root is not None and w.chain[:1] == (root,))
        blocker = _blocker(snap, root) if root is not None else None
        return WaitPeak(at, len(snap.waiting), tuple(chain), blocker, behind)

    def _stale_leases(self, snap: Snapshot, at: float) -> None:
        seen = set()
        for lease in snap.stale_leases:
            key = id_text(lease.id)
            seen.add(key)
            sighting = self._stale.get(key)
            if sighting is None or sighting.gone_at is not None:
                self._stale[key] = StaleSighting(
                    key, lease.worker, at, at, lease.overdue_s, self.frames == 1, None
                )
            else:
                sighting.last_seen = at
                sighting.max_overdue_s = max(sighting.max_overdue_s, lease.overdue_s)
        for key, sighting in self._stale.items():
            if key not in seen and sighting.gone_at is None:
                sighting.gone_at = at

    def _idle_transactions(self, snap: Snapshot, at: float) -> None:
        for idle in snap.idle_in_transaction:
            start = idle.xact_start.isoformat() if idle.xact_start else None
            key = (idle.pid, idle.backend_start, start)
            hold = self._idle.get(key)
            if hold is None:
                hold = self._idle[key] = IdleHold(
                    idle.pid, idle.application_name, idle.user, at, at, 0.0, None, None, ""
                )
            hold.last_seen = at
            hold.query = idle.query
            age = idle.xact_age_s or 0.0
            hold.max_xact_age_s = max(hold.max_xact_age_s, age)
            if idle.xmin_age is not None:  # its snapshot holds the horizon back
                began = idle.xact_start.timestamp() if idle.xact_start else at - age
                hold.held_horizon_s = max(hold.held_horizon_s or 0.0, at - began)
                hold.max_xmin_age = max(hold.max_xmin_age or 0, idle.xmin_age)

    def stale_sightings(self, audit: list[AuditRecord]) -> list[StaleSighting]:
        changes = [r for r in audit if r.outcome == "changed"]
        for sighting in self._stale.values():
            earliest = sighting.first_seen - 2 * self.interval
            for r in changes:
                if r.target == sighting.job_id and r.at.timestamp() >= earliest:
                    actor = (r.detail or {}).get("actor")
                    sighting.recovery = Recovery(
                        r.at.timestamp(),
                        r.action,
                        r.outcome,
                        r.who,
                        actor if isinstance(actor, str) else None,
                        r.reason,
                    )
                    break
        return sorted(self._stale.values(), key=lambda s: (s.first_seen, s.job_id))

    def oldest_idle(self) -> IdleHold | None:
        return max(self._idle.values(), key=lambda h: h.max_xact_age_s, default=None)

    def deadlock_summary(self) -> Deadlocks:
        """Deadlocks the server counted between the first frame and the last (the counter's
        rises: a reset or a stats reset counts nothing), and the peak rate."""
        if not self._deadlocks:
            return Deadlocks(False)
        result = Deadlocks(True, ("deadlocks_total", "deadlocks_per_s"))
        before: int | None = None
        for at, total, per_s in self._deadlocks:
            if before is not None and total > before:
                result.total += total - before
            before = total
            if per_s is not None and per_s > result.peak:
                result.peak, result.peak_at = per_s, at
        return result

    def monitor_cost(self) -> MonitorCost | None:
        if not self._polls:
            return None
        polls = sorted(self._polls)
        slowest = max(self._sections.items(), key=lambda kv: kv[1], default=(None, 0.0))
        return MonitorCost(
            polls=len(polls),
            poll_ms_median=statistics.median(polls),
            poll_ms_p95=polls[min(len(polls) - 1, int(0.95 * len(polls)))],
            poll_ms_max=polls[-1],
            load_median=statistics.median(self._loads) if self._loads else None,
            load_max=max(self._loads) if self._loads else None,
            slowest_section=slowest[0],
            slowest_section_ms=slowest[1],
            section_errors=dict(self._section_errors),
        )
