"""The knobs of one load-generator run, shared by the CLI, the pool and the workers."""

from __future__ import annotations

from dataclasses import dataclass, fields

from dashboard.errors import UserError
from dashboard.loadgen.strategies import check_strategy

# Knobs a running worker accepts from the controller (the rest are fixed per run).
LIVE_KNOBS = ("strategy", "batch", "work_ms", "hold_tx", "fail_rate", "crash_rate")


@dataclass(frozen=True)
class LoadSettings:
    workers: int = 4
    strategy: str = "skip-locked"
    batch: int = 1
    work_ms: float = 20.0  # mean of the simulated work time (lognormal)
    hold_tx: bool = False  # work inside the claim transaction: the anti-pattern
    fail_rate: float = 0.0
    crash_rate: float = 0.0
    lease_s: float = 30.0  # lease length; a heartbeat renews it for long jobs
    prefill: int = 0  # jobs enqueued before the workers start
    rate: float = 0.0  # jobs per second the producer enqueues; 0 = none
    payload_bytes: int = 64
    seed: int | None = None
    lock_timeout_ms: float = 0.0  # the workers' lock_timeout; 0: the server's own setting

    def __post_init__(self) -> None:
        check_strategy(self.strategy)
        for name in ("fail_rate", "crash_rate"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise UserError(f"--{name.replace('_', '-')} must be between 0 and 1, not {value}")
        for name in ("workers", "prefill", "payload_bytes"):
            if getattr(self, name) < 0:
                raise UserError(f"--{name.replace('_', '-')} must not be negative")
        if self.workers > MAX_WORKERS:
            raise UserError(
                f"--workers {self.workers}: at most {MAX_WORKERS} "
                "(each worker is a process and a database session)"
            )
        if self.batch < 1:
            raise UserError("--batch must be at least 1")
        if self.work_ms < 0 or self.rate < 0:
            raise UserError("--work-ms and --rate must not be negative")
        if self.lock_timeout_ms < 0:
            raise UserError("--lock-timeout-ms must not be negative")
        if self.lease_s <= 0:
            raise UserError("--lease must be positive")

    def live(self) -> dict[str, object]:
        """The knobs a worker re-reads when the controller changes them."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name in LIVE_KNOBS}


# each worker is a process and a database session (max_connections is often 100)
MAX_WORKERS = 64

# What `queuetop demo` starts with: jobs flowing within seconds, contention one key away.
DEMO_SETTINGS = LoadSettings(workers=4, prefill=300, rate=40.0, work_ms=80.0, lease_s=15.0)
