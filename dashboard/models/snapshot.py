"""The snapshot: the frozen result of one poll, and the records it holds."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

# the snapshot's type hints name these (the recorder reads a snapshot back by its hints)
from dashboard.models.spec import ROLES, Threshold


@dataclass(frozen=True)
class ServerInfo:
    version: str
    database: str
    user: str
    address: str  # host:port or socket directory, never a password
    version_num: int = 0  # server_version_num (150018); 0 where unknown
    in_recovery: bool = False  # a standby (pg_is_in_recovery()): actions refuse there

    @property
    def major(self) -> int:
        return self.version_num // 10000


@dataclass(frozen=True)
class RowLockHolder:
    """A transaction that holds queue rows locked right now: the transaction in the rows'
    xmax, or a running member of the multixact there (then with its mode)."""

    pid: int
    role: str
    rows: int
    application_name: str
    job_ids: tuple[Any, ...] = ()  # the first few of the rows it holds, typed as the id column
    # a multixact member's mode (keysh, sh, fornokeyupd, forupd, nokeyupd, upd); None for a
    # plain xmax, whose mode only the tuple's infomask tells (not readable by a plain read)
    mode: str | None = None


@dataclass(frozen=True)
class LockInfo:
    """One row of pg_locks with its session. A `tuple` lock is no row lock held: it is
    a place in the queue for a row (granted: first in line, waiting on the holder's
    transaction; not granted: behind the session that is)."""

    pid: int
    backend_start: datetime | None
    application_name: str
    locktype: str
    mode: str
    granted: bool
    relation: str | None
    on_queue_table: bool
    wait_s: float | None
    state: str | None
    query: str
    # A tuple lock names its row; on the queue table the monitor reads which job it is.
    page: int | None = None
    tuple_index: int | None = None
    job_id: Any = None
    # An advisory lock on one bigint key (pg_locks objsubid 1): its key; where the queue
    # spec names an advisory_lock, the monitor names the job whose key it is (job_id).
    advisory_key: int | None = None
    xid: str | None = None  # a transactionid lock's transaction

    @property
    def is_row_queue(self) -> bool:
        """A place in the queue for a row (pg_locks' `tuple`), never a row lock held."""
        return self.locktype == "tuple"


@dataclass(frozen=True)
class WaitingSession:
    pid: int
    backend_start: datetime | None
    application_name: str
    blocked_by: tuple[int, ...]
    wait_s: float
    wait_event: str
    query: str
    # Root blocker first, this session last; empty when no chain is known.
    chain: tuple[int, ...] = ()
    # the queue row it is queued on (its tuple lock), read in the same moment as the wait
    job_id: Any = None
    first_in_line: bool = False  # holds that row's tuple lock: next to get the row
    row_holders: tuple[int, ...] = ()  # who holds that row now (its xmax, decoded)


@dataclass(frozen=True)
class SessionInfo:
    """A session that blocks others: the root of a wait chain."""

    pid: int
    backend_start: datetime | None
    application_name: str
    state: str
    xact_age_s: float | None
    query: str


@dataclass(frozen=True)
class IdleTransaction:
    pid: int
    backend_start: datetime | None
    application_name: str
    user: str
    xact_age_s: float | None  # None for an aborted transaction without xact_start
    idle_s: float
    locks_held: int
    xmin_age: int | None
    query: str
    # Which transaction is idle: an action guards on it ("still the same transaction").
    xact_start: datetime | None = None
    # the queue rows it holds locked (the first few, typed as the id column) and how many
    job_ids: tuple[Any, ...] = ()
    rows_held: int = 0


def id_text(job_id: Any) -> str:
    """A job's id as an operator types it: a composite key as its JSON array
    (["send-email", "42"], what `requeue` and the guarded statements take), else as is."""
    if isinstance(job_id, (list, tuple)):
        return json.dumps(list(job_id), default=str)
    return str(job_id)


@dataclass(frozen=True)
class StaleLease:
    id: Any
    status: str
    worker: str | None
    lease_token: Any
    attempts: int | None
    started_at: datetime | None
    lease_until: datetime | None
    overdue_s: float
    worker_alive: bool | None
    group: str | None = None
    # the token as PostgreSQL prints it: what an action's guard compares (a timestamp
    # token's Python text differs)
    lease_token_text: str | None = None


@dataclass(frozen=True)
class GroupStats:
    """The active jobs of one group (queue name or task kind)."""

    name: str
    ready: int
    scheduled: int
    running: int
    locked: int
    oldest_ready_age_s: float | None
    stale_leases: int


# Upper bounds (seconds) of the latency buckets: the `le` labels of the exported
# histograms, and what the screen's percentiles are interpolated between where a bucket
# count is all a reader has.
LATENCY_BUCKETS: tuple[float, ...] = (
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
    300.0,
    900.0,
    3600.0,
)


@dataclass(frozen=True)
class Durations:
    """One kind of duration (wait: ready or due until started; run: started until
    finished) over the jobs of a window: how many, their sum, the percentiles, and how
    many fell at or below each of LATENCY_BUCKETS (cumulative, as Prometheus's `le`)."""

    count: int
    sum_s: float
    p50_s: float | None
    p95_s: float | None
    p99_s: float | None
    buckets: tuple[int, ...] = ()  # one per LATENCY_BUCKETS, cumulative


@dataclass(frozen=True)
class GroupLatency:
    """How long the jobs of one group (None: the whole queue) waited and ran lately.
    `wait` or `run` is None where the spec lacks the timestamps it needs (`missing`
    names them) or the section could not be read (Latency.error)."""

    group: str | None
    wait: Durations | None
    run: Durations | None
    finished: int  # jobs that finished in the window (done, failed and dead)
    failed: int  # of them, the ones that ended failed or dead (or failed an attempt)


@dataclass(frozen=True)
class Latency:
    """Wait and run times over the last `window_s` seconds, for the queue and per group."""

    window_s: float
    queue: GroupLatency
    groups: tuple[GroupLatency, ...] = ()
    # the timestamps the spec would need for what is not measured, each a sentence naming
    # the column or flag that would enable it ("wait time needs a start time: --started-at")
    missing: tuple[str, ...] = ()
    # why this poll's latency is older than the poll or absent (a timeout, a paced read)
    error: str | None = None
    # where no index serves the window's range: that the section is read less often, how
    # often, and the timestamp an index would serve (`doctor` names the index)
    paced: str | None = None
    # when it was read: the end of its window (None: never read)
    read_at: datetime | None = None
    # whether the spec has a finish time: else `finished` and `failed` are 0 for unknown
    finished_measured: bool = True


@dataclass(frozen=True)
class SectionState:
    """One section of a poll: how old its data is and what reading it costs.

    A section whose cost exceeds its share of the monitor's budget is read less often
    (`every_s`); between reads the snapshot carries its last data and says how old it is.
    """

    name: str
    age_s: float | None  # None: never read successfully
    cost_ms: float  # the last read's database time
    every_s: float  # how often it is read now
    error: str | None = None  # why the data is older than it should be


@dataclass(frozen=True)
class LoadState:
    """The demo's load generator as it was at a poll, kept in the frames `demo --record`
    writes: what a replayed pile-up was caused by (the strip) and which stale leases its
    crashes made (the stale table's marks)."""

    strategy: str
    hold_tx: bool
    done_per_s: float
    claim_p95_ms: float | None
    lock_waits_per_s: float
    lock_errors_per_s: float
    live_workers: int
    target_workers: int
    # job id (as text) -> "! crash" (the `!` key) or "random crash"
    crashes: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Snapshot:
    """The frozen result of one poll."""

    taken_at: datetime
    queue: str
    server: ServerInfo
    counts: dict[str, int]
    estimated: tuple[str, ...]
    by_status: dict[str, int]
    locked: dict[str, int]
    row_lock_holders: tuple[RowLockHolder, ...]
    oldest_ready_age_s: float | None
    locks: tuple[LockInfo, ...]
    waiting: tuple[WaitingSession, ...]
    idle_in_transaction: tuple[IdleTransaction, ...]
    stale_leases: tuple[StaleLease, ...]
    blockers: tuple[SessionInfo, ...] = ()
    warnings: tuple[str, ...] = ()
    elapsed_ms: float = 0.0
    groups: tuple[GroupStats, ...] = ()
    sections: tuple[SectionState, ...] = ()
    # The monitor's own database time per second of wall time (0.02 = 2 %), lately.
    monitor_load: float | None = None
    # "index": active rows counted through indexes, finished states estimated above the
    # limit; "scan": no index serves the active rows, so one pass reads them all.
    count_mode: str = "index"
    # Stale leases in all (stale_leases lists at most ROW_LIMIT of them); None: unknown.
    stale_count: int | None = None
    # pid -> the jobs it holds row-locked right now (the first few), from the same xmax join
    held_jobs: dict[int, tuple[Any, ...]] = field(default_factory=dict)
    # The roles of this queue, in order (`scheduled` only where jobs can be due later).
    roles: tuple[str, ...] = tuple(r for r in ROLES if r != "scheduled")
    # When a running job counts as stale, and who said so (the stale tab names it).
    threshold: Threshold | None = None
    # pg_stat_database.deadlocks of this database, and its rise per second since the last
    # poll (None on the first poll); a header may show the rate whenever it is not 0
    deadlocks_total: int | None = None
    deadlocks_per_s: float | None = None
    # role -> when its count was really read (a paced section carries older counts): a
    # rate of change (jobs done per second) is the change between two real reads
    count_read_at: dict[str, datetime] = field(default_factory=dict)
    # rows in state values no role claims (NO_STATE: a NULL state, or no rule's conditions)
    unmapped: dict[str, int] = field(default_factory=dict)
    # what could not be read or mapped, each a whole sentence naming what to do: rows no
    # role claims, a mapping only guessed, a section not read; `check` answers UNKNOWN
    unknowns: tuple[str, ...] = ()
    # the demo's load generator at this poll (demo --record keeps it; None elsewhere)
    load: LoadState | None = None
    # how long jobs waited and ran lately (None: not read, or the spec cannot tell)
    latency: Latency | None = None

    @cached_property  # read by the waiting and idle tabs and by incident: once per poll
    def queue_pids(self) -> frozenset[int]:
        """The sessions that concern this queue: those holding or awaiting a lock on its
        table, holding its rows, or queued on one of its rows, and every session of a wait
        chain one of them is in (the tables' `queue sessions` view; the rest of the
        database is `l` away)."""
        pids = {lk.pid for lk in self.locks if lk.on_queue_table}
        pids |= {pid for pid, ids in self.held_jobs.items() if ids}
        pids |= {h.pid for h in self.row_lock_holders}
        pids |= {w.pid for w in self.waiting if w.job_id is not None}
        chains = [{w.pid, *w.blocked_by, *w.chain} for w in self.waiting]
        grew = True
        while grew:  # a chain touching the queue is the queue's, whole
            grew = False
            for members in chains:
                if members & pids and not members <= pids:
                    pids |= members
                    grew = True
        return frozenset(pids)
