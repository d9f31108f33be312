"""Frozen dataclasses shared by every layer: the queue spec and the snapshot."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

ROLES: tuple[str, ...] = ("ready", "running", "done", "failed", "dead")
ACTIVE_ROLES: tuple[str, ...] = ("ready", "running")

# Optional columns of a queue table, in the order the TOML lists them.
OPTIONAL_COLUMNS: tuple[str, ...] = (
    "created_at",
    "started_at",
    "worker",
    "attempts",
    "lease_until",
    "lease_token",
    "last_error",
)


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
class Columns:
    """Column names of the queue table; None where the table has no such column."""

    id: str = "id"
    status: str = "status"
    created_at: str | None = None
    started_at: str | None = None
    worker: str | None = None
    attempts: str | None = None
    lease_until: str | None = None
    lease_token: str | None = None
    last_error: str | None = None


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


@dataclass(frozen=True)
class QueueSpec:
    """How one queue table maps onto queuetop's roles."""

    table: TableName
    columns: Columns = field(default_factory=Columns)
    states: dict[str, tuple[str, ...]] = field(default_factory=dict)
    policy: Policy = field(default_factory=Policy)
    source: str = "flags"
    # Filled by validation against the catalog: column name -> SQL type.
    column_types: dict[str, str] = field(default_factory=dict)

    def values(self, role: str) -> tuple[str, ...]:
        return self.states.get(role, ())

    def values_of(self, roles: tuple[str, ...]) -> list[str]:
        """The raw values of several roles, in role order."""
        return [v for role in roles for v in self.values(role)]

    def role_of(self, raw: str | None) -> str | None:
        for role in ROLES:
            if raw in self.values(role):
                return role
        return None


@dataclass(frozen=True)
class ServerInfo:
    version: str
    database: str
    user: str
    address: str  # host:port or socket directory, never a password


@dataclass(frozen=True)
class RowLockHolder:
    """A transaction that has row-locked queue rows right now."""

    pid: int
    role: str
    rows: int
    application_name: str


@dataclass(frozen=True)
class LockInfo:
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
