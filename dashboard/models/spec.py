"""The queue spec: what a queue is (its table, columns, states, policy), frozen."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

# The state of rows whose state column is NULL, or that no role's conditions take: a label
# no text value can equal (PostgreSQL text holds no NUL character).
NO_STATE = "\x00no state"


def state_label(value: str | None) -> str:
    """A state value as the screen and the text outputs name it (NO_STATE in words)."""
    return "(no state)" if value is None or value == NO_STATE else value


ROLES: tuple[str, ...] = ("ready", "scheduled", "running", "done", "failed", "dead")
# Counted exactly on every poll (indexes serve them); the finished roles may be estimated.
ACTIVE_ROLES: tuple[str, ...] = ("ready", "scheduled", "running")
FINISHED_ROLES: tuple[str, ...] = ("done", "failed", "dead")

# Optional columns of a queue table, in the order the TOML lists them.
OPTIONAL_COLUMNS: tuple[str, ...] = (
    "created_at",
    "scheduled_at",
    "started_at",
    "finished_at",
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


# In a preset's table name, what stands for the queue's own part (`pgmq.q_*`).
WILDCARD = "*"


@dataclass(frozen=True)
class TableName:
    """A table, schema-qualified once resolved against the catalog."""

    name: str
    schema: str | None = None

    def parts(self) -> tuple[str, ...]:
        return (self.schema, self.name) if self.schema else (self.name,)

    def __str__(self) -> str:
        if self.is_pattern:  # a preset's pattern is no identifier: shown as written
            return ".".join(
                (_display_ident(self.schema), self.name) if self.schema else (self.name,)
            )
        return ".".join(_display_ident(p) for p in self.parts())

    @property
    def is_pattern(self) -> bool:
        """A preset's name for one table per queue (`pgmq.q_*`), `*` standing for the queue."""
        return WILDCARD in self.name

    def match(self, table: TableName) -> str | None:
        """What this pattern's `*` stands for in `table` (pgmq.q_* in pgmq.q_orders:
        'orders'), or None where `table` is not one of its tables."""
        if not self.is_pattern or table.is_pattern:
            return None
        if self.schema is not None and table.schema != self.schema:
            return None
        head, _, tail = self.name.partition(WILDCARD)
        name = table.name
        if len(name) <= len(head) + len(tail) or not name.startswith(head):
            return None
        return name[len(head) : len(name) - len(tail)] if name.endswith(tail) else None


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

    # the key: one column, or several (a composite key, in key order)
    id: str | tuple[str, ...] = "id"
    status: str | Derived | None = "status"  # None: roles by conditions (QueueSpec.rules)
    created_at: Column = None
    scheduled_at: Column = None  # due time: ready rows due later read as scheduled
    started_at: Column = None
    # when the job ended (done, failed or dead): run time is finished_at - started_at
    finished_at: Column = None
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

    @property
    def key(self) -> tuple[str, ...]:
        """The key columns, in key order (one, or several for a composite key)."""
        return (self.id,) if isinstance(self.id, str) else tuple(self.id)


# The tests a role's condition may put to a column: a value (or one of several), set or
# null, a time before or after now, a number above or below a bound.
TESTS: tuple[str, ...] = ("equals", "set", "null", "past", "future", "above", "below", "not")


@dataclass(frozen=True)
class Condition:
    """One test on one column of the queue row: `locked_at set`, `read_ct above 0`,
    `picked = true`, `status in (a, b)`, `run_at after now`."""

    column: str
    test: str  # one of TESTS
    # equals/not: the values (as PostgreSQL prints them); above/below: the bound
    values: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.test == "set":
            return f"{self.column} set"
        if self.test == "null":
            return f"{self.column} null"
        if self.test == "past":
            return f"{self.column} before now"
        if self.test == "future":
            return f"{self.column} after now"
        if self.test in ("above", "below"):
            return f"{self.column} {'>' if self.test == 'above' else '<'} {self.values[0]}"
        op = "=" if self.test == "equals" else "<>"
        if len(self.values) == 1:
            return f"{self.column} {op} {self.values[0]}"
        word = "in" if self.test == "equals" else "not in"
        return f"{self.column} {word} ({', '.join(self.values)})"


@dataclass(frozen=True)
class RoleRule:
    """A role defined by conditions over columns (all must hold). Rules are tried in their
    order and a row takes the first whose conditions hold; a row no rule takes has no role
    (and is said, never dropped). An empty rule takes every row left."""

    role: str
    conditions: tuple[Condition, ...]

    @property
    def label(self) -> str:
        """The state value this rule stands for in counts: its conditions, in words."""
        return ", ".join(c.describe() for c in self.conditions) or "every other row"


@dataclass(frozen=True)
class Understood:
    """How queuetop understood a table it was not told about: how sure it is, the evidence
    for each part, the flags and TOML that pin it, and what it could only guess."""

    confidence: str  # high, medium, low
    evidence: tuple[str, ...] = ()  # one line per inference: what and why
    pin_flags: tuple[str, ...] = ()  # the command-line flags that pin this mapping
    pin_toml: str = ""  # the same as a queue TOML
    doubts: tuple[str, ...] = ()  # guessed with low confidence: check answers UNKNOWN


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
    # the history row's own times and group, where it keeps them (django_q_task: started,
    # stopped, cluster): the latency of finished jobs is read there
    started_at: str | None = None
    finished_at: str | None = None
    group: str | None = None


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
    # How far back the latency (wait and run times) looks: jobs started or finished since.
    latency_window_s: float = 300.0


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
    # A preset keeping one table per queue names them by a pattern (`pgmq.q_*`); `--table`
    # picks one, and `table` is then that one (validation refuses a pattern left unpicked).
    table_pattern: TableName | None = None
    policy: Policy = field(default_factory=Policy)
    source: str = "flags"
    # The states are `--table`'s guesses (several common values per role): an action then
    # writes a value only where a flag names it or the table holds it (actions/writes.py).
    guessed_states: bool = False
    # The adapter whose SQL (queries/presets/<name>/) derives columns or replaces statements.
    adapter: str | None = None
    workers: WorkersTable | None = None
    history: HistoryTable | None = None
    # The library's other tables of the same queue ([queue.tables]: Absurd's t_* beside its
    # r_*), read by the adapter's SQL as `{NAME_table}`; validation resolves their `*`.
    tables: dict[str, TableName] = field(default_factory=dict)
    # 1-based element of an array worker column that names the worker (Oban's attempted_by).
    worker_element: int | None = None
    # The zone `timestamp without time zone` columns hold (None: the session's TimeZone).
    time_zone: str | None = None
    # Filled by validation against the catalog: column name -> SQL type.
    column_types: dict[str, str] = field(default_factory=dict)
    # Filled by validation: column name -> SQL type, for the workers and history tables.
    workers_types: dict[str, str] = field(default_factory=dict)
    history_types: dict[str, str] = field(default_factory=dict)
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
    # Roles defined by conditions over columns, in order (no state column): the state is then
    # the label of the first rule a row meets (states: role -> the labels of its rules).
    rules: tuple[RoleRule, ...] = ()
    # How the table was understood, where nobody described it (`--table`, discovery).
    understood: Understood | None = None
    # `--table` without a spec: the table is understood against the catalog (validate);
    # what the flags named ("id", "status", a column key, "states.ROLE") is kept as given
    understand: bool = False
    given: frozenset[str] = frozenset()

    def values(self, role: str) -> tuple[str, ...]:
        return self.states.get(role, ())

    @property
    def table_match(self) -> str | None:
        """What the pattern's `*` stands for in the table picked: the queue's name (pgmq's
        and Absurd's), which the adapter's SQL passes to the library's functions."""
        return self.table_pattern.match(self.table) if self.table_pattern else None

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

    @cached_property  # asked several times a poll; a frozen spec's roles never change
    def roles(self) -> tuple[str, ...]:
        """The roles this queue has: those its states name (a table that deletes finished
        jobs has no done role), `scheduled` also where jobs can wait for a due time, `dead`
        also where dead jobs move to a table of their own. Ready and running always."""
        have = {role for role in ROLES if self.values(role)} | {"ready", "running"}
        if self.columns.scheduled_at:
            have.add("scheduled")
        dead = self.policy.dead_letter
        if dead is not None and dead.kind == "table":
            have.add("dead")
        return tuple(r for r in ROLES if r in have)

    def can_find_stale(self) -> bool:
        """Whether running jobs can be told stale: a lease, a heartbeat or a start time."""
        cols = self.columns
        return bool(
            cols.lease_until
            or cols.started_at
            or cols.advisory_lock
            or self.liveness in ("heartbeat", "workers")
        )
