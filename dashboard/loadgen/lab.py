"""The contention lab: each claim strategy with the claim transaction short and held, a
deadlock and a lock_timeout scenario, side by side on a scratch queue of their own.

Every cell starts on a fresh `queuetop_lab.jobs` (the demo queue's columns, plus a
trigger that logs each state or token change in the changing transaction), runs
for `seconds` once its workers are connected, stops them, and reads its result:
jobs/s, claim p50/p95 and lock waits from the workers, lock errors by kind from
the workers, deadlocks from the server too (`pg_stat_database.deadlocks` before and
after), and lost and double-claimed jobs from the table and its log, never from the
workers' own counters.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import psycopg

import queries
from dashboard import config
from dashboard.loadgen.lab_deadlock import WORKERS as DEADLOCK_WORKERS
from dashboard.loadgen.lab_deadlock import run_deadlocks
from dashboard.loadgen.pool import LoadGenerator
from dashboard.loadgen.settings import LoadSettings
from dashboard.loadgen.stats import LOCK_ERROR_KINDS, Latency, LoadSnapshot
from dashboard.loadgen.strategies import STRATEGIES
from dashboard.models import QueueSpec, TableName

LAB_TABLE = TableName("jobs", "queuetop_lab")
WORK_MS = 50.0  # long beside a claim (~1 ms): held, the claim serializes for-update claimers
LOCK_TIMEOUT_MS = 20.0  # the lock_timeout scenario's, well below WORK_MS
SETUP = (
    "drop_schema",
    "create_schema",
    "create_jobs",
    "create_ready_index",
    "create_transitions",
    "create_log_function",
    "create_log_trigger",
)
STATS_FLUSH_S = 5.0  # how long the server may take to count a deadlock in pg_stat_database


@dataclass(frozen=True)
class Cell:
    """One run of the lab: a scenario, the claim strategy and whether the claim is held."""

    scenario: str  # "claim", "deadlock" or "lock_timeout"
    strategy: str
    hold_tx: bool

    @property
    def label(self) -> str:
        if self.scenario == "deadlock":
            return "deadlock, opposite order"
        if self.scenario == "lock_timeout":
            return f"lock_timeout {LOCK_TIMEOUT_MS:g}ms, held"
        return f"{self.strategy}, {'held' if self.hold_tx else 'short'}"


CELLS = (
    *(Cell("claim", s, False) for s in STRATEGIES),
    *(Cell("claim", s, True) for s in STRATEGIES),
    Cell("deadlock", "for-update", True),
    Cell("lock_timeout", "for-update", True),
)


@dataclass(frozen=True)
class CellResult:
    cell: Cell
    workers: int
    seconds: float  # the measured window
    jobs_per_s: float
    claim: Latency  # ms
    lock_waits: int
    errors: dict[str, int]  # by kind: nowait, lock_timeout, deadlock
    server_deadlocks: int  # pg_stat_database.deadlocks, after minus before
    lost: int
    double_claims: int
    done: int  # jobs the table says are done

    def as_json(self) -> dict[str, Any]:
        def ms(v: float | None) -> float | None:
            return None if v is None else round(v, 3)

        return {
            "scenario": self.cell.scenario,
            "strategy": self.cell.strategy,
            "hold_tx": self.cell.hold_tx,
            "workers": self.workers,
            "seconds": round(self.seconds, 3),
            "jobs_per_s": round(self.jobs_per_s, 1),
            "claim_p50_ms": ms(self.claim.p50),
            "claim_p95_ms": ms(self.claim.p95),
            "lock_waits": self.lock_waits,
            "errors": dict(self.errors),
            "server_deadlocks": self.server_deadlocks,
            "lost": self.lost,
            "double_claims": self.double_claims,
        }


def lab_spec(conn: psycopg.Connection) -> QueueSpec:
    """The demo preset, pointed at the lab's table (no dead-letter table), validated."""
    demo = config.load_preset("demo")
    spec = replace(demo, table=LAB_TABLE, policy=replace(demo.policy, dead_letter=None))
    return config.validate(conn, spec)


def _fresh_queue(dsn: str, jobs: int) -> QueueSpec:
    with psycopg.connect(dsn, autocommit=True, application_name="queuetop-lab") as conn:
        with conn.transaction():
            for name in SETUP:
                conn.execute(queries.load(f"loadgen/lab/{name}"))
            conn.execute(queries.load("loadgen/lab/enqueue_jobs"), {"n": jobs})
        conn.execute(queries.load("loadgen/lab/analyze_jobs"))
        return lab_spec(conn)


def _server_deadlocks(conn: psycopg.Connection) -> int:
    conn.execute(queries.load("loadgen/lab/clear_stats_snapshot"))
    return int(conn.execute(queries.load("loadgen/lab/get_server_deadlocks")).fetchone()[0])


def _settled_deadlocks(conn: psycopg.Connection, before: int, at_least: int) -> int:
    """The server's count once it holds at least the deadlocks the workers saw (a backend
    reports its statistics when it goes idle or exits), or after STATS_FLUSH_S."""
    deadline = time.monotonic() + STATS_FLUSH_S
    while (now := _server_deadlocks(conn)) - before < at_least and time.monotonic() < deadline:
        time.sleep(0.05)
    return now - before


def _run_generator(
    dsn: str, spec: QueueSpec, settings: LoadSettings, seconds: float
) -> tuple[LoadSnapshot, LoadSnapshot, float, list[str]]:
    """(stats at the window's start, at its end, its length, errors) once all are live."""
    with LoadGenerator(dsn, spec, settings) as gen:
        deadline = time.monotonic() + 60
        while gen.stats().live_workers < settings.workers and time.monotonic() < deadline:
            if gen.stats().errors:
                break
            time.sleep(0.02)
        time.sleep(0.2)  # past each session's first prepared statements
        first, t0 = gen.stats(), time.monotonic()
        time.sleep(seconds)
        last, t1 = gen.stats(), time.monotonic()
    return first, last, t1 - t0, list(gen.stats().errors)


def _delta(last: LoadSnapshot, first: LoadSnapshot, name: str) -> int:
    return last.totals.get(name, 0) - first.totals.get(name, 0)


def run_cell(dsn: str, cell: Cell, workers: int, seconds: float) -> CellResult:
    n = DEADLOCK_WORKERS if cell.scenario == "deadlock" else workers
    spec = _fresh_queue(dsn, int(n * 1000 / WORK_MS * (seconds + 10)) + 200)
    with psycopg.connect(dsn, autocommit=True, application_name="queuetop-lab") as conn:
        before = _server_deadlocks(conn)
        if cell.scenario == "deadlock":
            tally, window = run_deadlocks(dsn, seconds)
            if tally.errors:
                raise RuntimeError(tally.errors[0])
            jobs, latency, waits = tally.completed, Latency.of(tally.latency), tally.lock_waits
            errors = {"nowait": 0, "lock_timeout": 0, "deadlock": tally.deadlocks}
        else:
            settings = LoadSettings(
                workers=n,
                strategy=cell.strategy,
                hold_tx=cell.hold_tx,
                work_ms=WORK_MS,
                lock_timeout_ms=LOCK_TIMEOUT_MS if cell.scenario == "lock_timeout" else 0.0,
                seed=n,
            )
            first, last, window, failures = _run_generator(dsn, spec, settings, seconds)
            if failures and not last.totals["completed"]:
                raise RuntimeError(failures[0])
            jobs, latency = _delta(last, first, "completed"), last.latency
            waits = _delta(last, first, "lock_waits")
            errors = {k: _delta(last, first, c) for k, c in LOCK_ERROR_KINDS.items()}
        server = _settled_deadlocks(conn, before, errors["deadlock"])
        lost, double, done = conn.execute(queries.load("loadgen/lab/get_outcome")).fetchone()
    return CellResult(
        cell, n, window, jobs / max(window, 1e-9), latency, waits, errors, server,
        int(lost), int(double), int(done),
    )  # fmt: skip


def run_lab(
    dsn: str,
    workers: int = 4,
    seconds: float = 3.0,
    cells: tuple[Cell, ...] = CELLS,
    on_cell: Callable[[CellResult], None] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> list[CellResult]:
    """Every cell in turn (the scratch schema is dropped at the end); `on_cell` hears each
    result as it comes; `should_stop` is asked before each cell."""
    results = []
    try:
        for cell in cells:
            if should_stop():
                break
            result = run_cell(dsn, cell, workers, seconds)
            results.append(result)
            if on_cell is not None:
                on_cell(result)
    finally:
        with psycopg.connect(dsn, autocommit=True, application_name="queuetop-lab") as conn:
            conn.execute(queries.load("loadgen/lab/drop_schema"))
    return results


# the lab's table, as `queuetop lab` prints it and the dashboard's lab screen fills it
COLUMNS = (
    "cell",
    "workers",
    "jobs/s",
    "claim p50",
    "claim p95",
    "lock waits",
    "nowait",
    "lock_timeout",
    "deadlock",
    "server deadlocks",
    "lost",
    "double",
)


def row_of(r: CellResult) -> tuple[str, ...]:
    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.1f}ms"

    return (
        r.cell.label,
        str(r.workers),
        f"{r.jobs_per_s:.1f}",
        ms(r.claim.p50),
        ms(r.claim.p95),
        str(r.lock_waits),
        *(str(r.errors[kind]) for kind in LOCK_ERROR_KINDS),
        str(r.server_deadlocks),
        str(r.lost),
        str(r.double_claims),
    )
