"""What crosses a process or thread boundary in the load generator, typed.

Workers send `WorkerEvent`s up their own pipe; the parent reads them by type
(a dispatch table in pool.py), never by position. The parent sends `Control`
messages down the same pipe, and the public API of
LoadGenerator queues `Command`s for its supervisor thread. All are frozen
dataclasses: pickled across the process boundary as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# --- worker -> parent ----------------------------------------------------------------------


@dataclass(frozen=True)
class Ready:
    """Connected for the first time: its session name and backend pid."""

    k: int
    session: str
    backend_pid: int


@dataclass(frozen=True)
class Down:
    """Lost its connection and retries; why."""

    k: int
    reason: str


@dataclass(frozen=True)
class Up:
    """Connected again, on a new session."""

    k: int
    session: str
    backend_pid: int


@dataclass(frozen=True)
class Batch:
    """Counter deltas, claim latencies (ms) and claim/finish records since the last flush.

    A record is (job, token, wall time): a claim's when it returned, a finish's when it
    started (the double-claim ledger orders them by that)."""

    k: int
    counts: dict[str, int]
    latencies: list[float]
    claimed: list[tuple[Any, Any, float]] = field(default_factory=list)
    finished: list[tuple[Any, Any, float]] = field(default_factory=list)


@dataclass(frozen=True)
class Crashed:
    """About to exit hard right after a claim (the crash knob or the random rate)."""

    k: int
    at: float
    session: str
    jobs: tuple[Any, ...]
    by_knob: bool
    committed: bool  # False with hold-tx: the claim rolls back with the session


@dataclass(frozen=True)
class Failed:
    """Its statements fail (not a lost connection); it exits with ERROR_EXIT_CODE."""

    k: int
    message: str


WorkerEvent = Ready | Down | Up | Batch | Crashed | Failed

# --- parent -> one worker ------------------------------------------------------------------


@dataclass(frozen=True)
class StopWorking:
    pass


@dataclass(frozen=True)
class Stall:
    seconds: float


@dataclass(frozen=True)
class CrashAfterClaim:
    pass


@dataclass(frozen=True)
class SetKnobs:
    knobs: dict[str, Any]


Control = StopWorking | Stall | CrashAfterClaim | SetKnobs

# --- API -> the supervisor thread ----------------------------------------------------------


@dataclass(frozen=True)
class SetTarget:
    workers: int


@dataclass(frozen=True)
class ChangeTarget:
    delta: int


@dataclass(frozen=True)
class Broadcast:
    control: Control


@dataclass(frozen=True)
class SendOne:
    """To worker k (None: the newest live one)."""

    k: int | None
    control: Control


@dataclass(frozen=True)
class PauseProducer:
    paused: bool


@dataclass(frozen=True)
class SetRate:
    jobs_per_s: float


Command = SetTarget | ChangeTarget | Broadcast | SendOne | PauseProducer | SetRate
