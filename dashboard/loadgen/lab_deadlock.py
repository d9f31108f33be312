"""The lab's deadlock scenario: two workers lock the same two rows in opposite order.

Each worker reads the first two ready jobs (a plain read), then in one
transaction claims them one at a time, the first worker in id order, the
second in reverse, completing both before it commits. When both hold their
first row and wait for the other's, the server breaks the cycle: one of them
gets SQLSTATE 40P01 (deadlock_detected), its transaction (and both of its
claims) rolled back, and it retries with a fresh read, as a real worker does.
Two threads with a session each: the waits happen in the server, not here.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import psycopg
from psycopg import errors

import queries
from dashboard.loadgen.stats import LOCK_WAIT_MS, Histogram

WORKERS = 2
HOLD_S = 0.005  # between the two claims: long enough for the other to take its first row
DEADLOCK_TIMEOUT = "50ms"  # the server's default (1s) would leave a 3 s cell one or two


@dataclass
class Tally:
    """What the two workers counted; written under `lock`."""

    completed: int = 0
    deadlocks: int = 0
    lock_waits: int = 0
    latency: Histogram = field(default_factory=Histogram)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _session(dsn: str, name: str) -> psycopg.Connection:
    conn = psycopg.connect(dsn, application_name=name, connect_timeout=5)
    try:
        conn.execute(queries.load("loadgen/lab/set_deadlock_timeout"), {"value": DEADLOCK_TIMEOUT})
        conn.commit()
    except psycopg.errors.InsufficientPrivilege:  # not a superuser: the server's own setting
        conn.rollback()
    return conn


def _work(dsn: str, n: int, stop: threading.Event, ready: threading.Barrier, tally: Tally) -> None:
    name = f"queuetop-lab-deadlock-{n}"
    claim, complete = (
        queries.load("loadgen/lab/claim_job_by_id"),
        queries.load("loadgen/lab/complete_job"),
    )
    with _session(dsn, name) as conn:
        ready.wait()
        while not stop.is_set():
            pair = [row[0] for row in conn.execute(queries.load("loadgen/lab/get_ready_pair"))]
            conn.commit()
            if len(pair) < 2:
                break  # the queue ran dry
            order = pair if n == 1 else pair[::-1]
            started = time.perf_counter()
            try:
                with conn.transaction():
                    held = conn.execute(
                        claim, {"id": order[0], "worker": name, "lease_s": 30}
                    ).fetchall()
                    time.sleep(HOLD_S)
                    wait_from = time.perf_counter()
                    held += conn.execute(
                        claim, {"id": order[1], "worker": name, "lease_s": 30}
                    ).fetchall()
                    waited_ms = (time.perf_counter() - wait_from) * 1000
                    for job, token in held:
                        conn.execute(complete, {"id": job, "token": token})
            except errors.DeadlockDetected:
                with tally.lock:
                    tally.deadlocks += 1
                continue  # rolled back, both claims with it: read again and retry
            with tally.lock:
                tally.completed += len(held)
                tally.lock_waits += waited_ms > LOCK_WAIT_MS
                tally.latency.add((time.perf_counter() - started) * 1000)
        conn.rollback()


def run_deadlocks(dsn: str, seconds: float) -> tuple[Tally, float]:
    """Both workers for `seconds` once both are connected; (their tally, the window)."""
    tally, stop = Tally(), threading.Event()
    ready = threading.Barrier(WORKERS + 1)

    def target(n: int) -> None:
        try:
            _work(dsn, n, stop, ready, tally)
        except (psycopg.Error, threading.BrokenBarrierError) as exc:
            with tally.lock:
                tally.errors.append(f"deadlock worker {n}: {exc}".splitlines()[0])
            ready.abort()

    threads = [threading.Thread(target=target, args=(n,), daemon=True) for n in (1, 2)]
    for t in threads:
        t.start()
    try:
        ready.wait(timeout=30)
    except threading.BrokenBarrierError:
        pass
    started = time.monotonic()
    stop.wait(seconds)
    stop.set()
    window = time.monotonic() - started
    for t in threads:
        t.join(30)
    return tally, window
