"""Frozen dataclasses shared by every layer: the queue spec and the snapshot."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

ROLES: tuple[str, ...] = ("ready", "scheduled", "running", "done", "failed", "dead")
# Counted exactly on every poll (indexes serve them); the finished roles may be estimated.
ACTIVE_ROLES: tuple[str, ...] = ("ready", "scheduled", "running")
FINISHED_ROLES: tuple[str, ...] = ("done", "failed", "dead")

# Optional columns of a queue table, in the order the TOML lists them.
OPTIONAL_COLUMNS: tuple[str, ...] = (
    "created_at",
    "scheduled_at",
    "started_at",
    "worker",
    "worker_pid",
    "attempts",
    "max_attempts",
    "lease_until",
    "lease_token",
    "heartbeat",
    "last_error",
    "group",
    "payload",
    "advisory_lock",
)
# Expressions an adapter's SQL may supply that no column of a user's table can: why the
# library forbids requeueing or dead-lettering a job (NULL when it allows it); whether the
# job's worker lives (true, false, NULL: unknown) where the library's own liveness signal
# fits none of the spec's (pg-boss's per-job heartbeat_seconds, which many jobs lack).
DERIVED_ONLY: tuple[str, ...] = ("requeue_refusal", "dead_letter_refusal", "worker_alive")


@dataclass(frozen=True)
class TableName:
    """A table, schema-qualified once resolved against the catalog."""

    name: str
    schema: str | None = None

    def parts(self) -> tuple[str, ...]:
        return (self.schema, self.name) if self.schema else (self.name,)

    def __str__(self) -> str:
        return ".".join(_display_ident(p) for p in self.parts())


def _display_ident(part: str) -> str:
    plain = part.replace("_", "a").isalnum() and part == part.lower() and not part[0].isdigit()
    return part if plain else '"' + part.replace('"', '""') + '"'


@dataclass(frozen=True)
class Derived:
    """A value an adapter computes in SQL: queries/presets/<adapter>/<name>.sql, an expression
    over the queue row `t` (e.g. graphile-worker's state, from locked_at and attempts)."""

    name: str

    def __str__(self) -> str:
        return f"derived:{self.name}"


Column = str | Derived | None


@dataclass(frozen=True)
class Columns:
    """Column names of the queue table (or derived expressions); None where there is none."""

    id: str = "id"
    status: str | Derived = "status"
    created_at: Column = None
    scheduled_at: Column = None  # due time: ready rows due later read as scheduled
    started_at: Column = None
    worker: Column = None
    # The backend pid of the session that claimed the job (pg_backend_pid() in the claim):
    # a worker's liveness by its session then needs that pid as well as the name, which
    # any role may give its own session.
    worker_pid: Column = None
    attempts: Column = None
    max_attempts: Column = None  # per-job limit (Oban, graphile-worker)
    lease_until: Column = None
    lease_token: Column = None
    heartbeat: Column = None  # per-job heartbeat: the job is alive while it is recent
    last_error: Column = None
    group: Column = None  # queue name or task kind: counts and stale leases per group
    payload: Column = None
    # The bigint key of the session advisory lock a worker holds while it runs the job
    # (Que: the id; NULL where the job takes none): a running job with a key is alive
    # exactly while some session holds it, and the locks view names the job.
    advisory_lock: Column = None
    requeue_refusal: Derived | None = None
    dead_letter_refusal: Derived | None = None
    worker_alive: Derived | None = None  # replaces what the liveness would say

    def real(self, key: str) -> str | None:
        """The column name behind `key`, or None when it is absent or derived."""
        value = getattr(self, key)
        return value if isinstance(value, str) else None


@dataclass(frozen=True)
class WorkersTable:
    """A table of live workers with a heartbeat: liveness for the jobs they hold."""

    table: TableName
    key: str  # the column the job's worker value names
    last_seen: str
    timeout_s: float = 60.0


@dataclass(frozen=True)
class HistoryTable:
    """Where a library logs finished jobs it deletes from the queue table (pgqueuer_log)."""

    table: TableName
    status: str


@dataclass(frozen=True)
class DeadLetter:
    """Where dead-lettered jobs go: a state value, or another table."""

    kind: Literal["status", "table"]
    status: str | None = None
    table: TableName | None = None


@dataclass(frozen=True)
class Policy:
    stale_after_s: float = 600.0
    max_attempts: int | None = None
    dead_letter: DeadLetter | None = None
    # How to tell whether a lease's worker still has a session:
    # "application_name": the worker column equals a live session's application_name;
    # "pid": the worker column holds a backend pid; "none": unknown.
    worker_session: Literal["application_name", "pid", "none"] = "application_name"
    # Above this many rows (planner estimate) finished states are estimated.
    exact_count_limit: int = 1_000_000
    # A per-job heartbeat older than this means the job's worker is gone.
    heartbeat_timeout_s: float = 60.0
    # The value requeue and retry-dead write (policy.ready_value, --ready-value); None:
    # the ready role's first value, where the spec names its states.
    ready_value: str | None = None


@dataclass(frozen=True)
class Threshold:
    """When a running job is taken for abandoned: the time limit of the spec's liveness
    signal, and who set it (a preset's default, a spec key, --stale-after)."""

    signal: Literal["workers", "heartbeat", "start", "expiry", "lock"]
    seconds: float | None  # None: no single limit (each job's own expiry, a held lock)
    source: str  # "preset procrastinate default (workers.timeout)", "--stale-after", ...
    what: str  # the signal in the spec's words: "silence in procrastinate_workers.last_heartbeat"

    def describe(self) -> str:
        """One line for the screen and the text outputs."""
        if self.seconds is None:
            return f"stale by {self.what} [{self.source}]"
        return f"stale after {short_duration(self.seconds)} of {self.what} [{self.source}]"


def short_duration(seconds: float) -> str:
    """4s, 90s, 5m, 4h, 1h30m: a threshold as a person writes it."""
    if seconds < 120 or seconds % 60:
        return f"{seconds:g}s"
    minutes = int(seconds // 60)
    if minutes < 120 and minutes % 60:
        return f"{minutes}m"
    hours, rest = divmod(minutes, 60)
    return f"{hours}h" + (f"{rest}m" if rest else "")


@dataclass(frozen=True)
class LibraryVersion:
    """The library schema found under a preset: its own marker, and what queuetop maps."""

    library: str
    marker: str  # the marker's value as the library keeps it ("24", "0.18 (migration 19)")
    release: str  # the library release(s) it stands for ("pg-boss 10")
    sql: str | None = None  # the folder of version-specific SQL under the adapter's own


@dataclass(frozen=True)
class QueueSpec:
    """How one queue table maps onto queuetop's roles."""

    table: TableName
    columns: Columns = field(default_factory=Columns)
    states: dict[str, tuple[str, ...]] = field(default_factory=dict)
    policy: Policy = field(default_factory=Policy)
    source: str = "flags"
    # The states are `--table`'s guesses (several common values per role): an action then
    # writes a value only where a flag names it or the table holds it (actions/writes.py).
    guessed_states: bool = False
    # The adapter whose SQL (queries/presets/<name>/) derives columns or replaces statements.
    adapter: str | None = None
    workers: WorkersTable | None = None
    history: HistoryTable | None = None
    # 1-based element of an array worker column that names the worker (Oban's attempted_by).
    worker_element: int | None = None
    # The zone `timestamp without time zone` columns hold (None: the session's TimeZone).
    time_zone: str | None = None
    # Filled by validation against the catalog: column name -> SQL type.
    column_types: dict[str, str] = field(default_factory=dict)
    # Filled by validation: column name -> SQL type, for the workers and history tables.
    workers_types: dict[str, str] = field(default_factory=dict)
    # The liveness thresholds the spec's own file names (stale_after, heartbeat_timeout,
    # workers.timeout -> seconds), and the user's --stale-after (seconds, where from).
    threshold_keys: dict[str, float] = field(default_factory=dict)
    stale_after_override: tuple[float, str] | None = None
    # Whether the file has a [versions] table (a preset, or a copy of one): validation then
    # reads the library's version marker and maps or refuses what it finds.
    versioned: bool = False
    # The threshold in force (config.thresholds), and the library schema found (validate).
    threshold: Threshold | None = None
    library_version: LibraryVersion | None = None

    def values(self, role: str) -> tuple[str, ...]:
        return self.states.get(role, ())

    def values_of(self, roles: tuple[str, ...]) -> list[str]:
        """The raw values of several roles, in role order."""
        return [v for role in roles for v in self.values(role)]

    def written_value(self, role: str) -> str | None:
        """The state value an action writes into `role` ('ready': requeue and retry-dead;
        'dead': dead-letter to a state): the one the spec or a flag names, else the role's
        first value; None where that would be a guess (`--table` alone) or there is none."""
        if role == "ready" and self.policy.ready_value:
            return self.policy.ready_value
        dead = self.policy.dead_letter
        if role == "dead" and dead is not None:
            return dead.status if dead.kind == "status" else None
        if self.guessed_states or not self.values(role):
            return None
        return self.values(role)[0]

    def role_of(self, raw: str | None) -> str | None:
        for role in ROLES:
            if raw in self.values(role):
                return role
        return None

    @property
    def liveness(self) -> str:
        """What tells a live worker from a dead one: 'heartbeat' (per job), 'workers' (a
        worker table's last-seen), or the policy's worker_session ('application_name',
        'pid', 'none'). Liveness comes from heartbeats, never from row locks; where a
        library's workers hold a session advisory lock per job (advisory_lock), the lock
        is its liveness (dashboard/advisory.py)."""
        if self.columns.heartbeat:
            return "heartbeat"
        if self.workers:
            return "workers"
        return self.policy.worker_session

    @property
    def roles(self) -> tuple[str, ...]:
        """The roles this queue has: `scheduled` only where jobs can wait for a due time."""
        if self.values("scheduled") or self.columns.scheduled_at:
            return ROLES
        return tuple(r for r in ROLES if r != "scheduled")

    def can_find_stale(self) -> bool:
        """Whether running jobs can be told stale: a lease, a heartbeat or a start time."""
        cols = self.columns
        return bool(
            cols.lease_until
            or cols.started_at
            or cols.advisory_lock
            or self.liveness in ("heartbeat", "workers")
        )


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
