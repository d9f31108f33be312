"""One worker process: claim, simulate work, complete or fail, repeat.

The worker talks to the parent through two channels: a control pipe it
polls between (and during) jobs, and a shared events queue it flushes
counters, claim latencies and claim/finish records into (typed: events.py). It never blocks
on the parent, and dies with it (faults.die_with_parent).
"""

from __future__ import annotations

import random
import signal
import time
from dataclasses import replace
from multiprocessing.connection import Connection
from typing import Any

import psycopg
from psycopg import errors

import queries
from dashboard.loadgen import faults
from dashboard.loadgen.events import (
    Batch,
    Control,
    CrashAfterClaim,
    Crashed,
    Down,
    Failed,
    Ready,
    SetKnobs,
    Stall,
    StopWorking,
    Up,
)
from dashboard.loadgen.prepared import Statement
from dashboard.loadgen.settings import LoadSettings
from dashboard.loadgen.stats import COUNTERS, LOCK_WAIT_MS
from dashboard.loadgen.strategies import QueueSql, build
from dashboard.models import QueueSpec

FLUSH_EVERY_S = 0.1
POLL_EVERY_S = 0.01  # between busy jobs; idle and working waits poll anyway
IDLE_MIN_S, IDLE_MAX_S = 0.005, 0.2  # backoff when the queue is empty
NOWAIT_BACKOFF_S = 0.002
LOCK_ERRORS = (errors.LockNotAvailable, errors.DeadlockDetected, errors.QueryCanceled)


def lock_error_counter(exc: BaseException, strategy: str) -> str | None:
    """The per-kind counter of a lock error. NOWAIT and lock_timeout share one SQLSTATE
    (55P03): a NOWAIT claim never waits, so under nowait it is NOWAIT's, else the timeout's.
    A statement timeout (57014) counts in lock_errors only."""
    if isinstance(exc, errors.DeadlockDetected):
        return "deadlocks"
    if isinstance(exc, errors.LockNotAvailable):
        return "nowait_errors" if strategy == "nowait" else "lock_timeouts"
    return None


RECONNECT_MIN_S, RECONNECT_MAX_S = 0.1, 3.0  # backoff while the server is away


def first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class Stop(Exception):
    """The controller asked this worker to stop."""


class Worker:
    def __init__(
        self,
        k: int,
        name: str,
        dsn: str,
        spec: QueueSpec,
        settings: LoadSettings,
        events: Any,
        control: Connection,
        parent_pid: int,
    ):
        self.k, self.name, self.dsn = k, name, dsn
        self.sessions = 0  # database sessions opened so far (see connect)
        self.session = name  # the current one's application_name
        self.settings, self.events, self.control = settings, events, control
        self.parent_pid = parent_pid
        self.sql: QueueSql = build(spec)
        self.rng = random.Random(None if settings.seed is None else settings.seed * 1000 + k)
        self.conn: psycopg.Connection | None = None
        self.stopping = False
        self.crash_next = False
        self.stall_for = 0.0
        self.last_poll = 0.0
        self._reset_batch()

    # --- talking to the parent -----------------------------------------------------------

    def _reset_batch(self) -> None:
        self.counts = dict.fromkeys(COUNTERS, 0)
        self.latencies: list[float] = []
        self.claimed: list[tuple[Any, Any, float]] = []  # job, token, wall time claim returned
        self.finished: list[tuple[Any, Any, float]] = []  # job, token, wall time finish started
        self.last_flush = time.monotonic()

    def flush(self) -> None:
        if any(self.counts.values()) or self.latencies or self.claimed or self.finished:
            counts = {n: v for n, v in self.counts.items() if v}
            self.events.put(Batch(self.k, counts, self.latencies, self.claimed, self.finished))
        self._reset_batch()

    def maybe_flush(self, force_if_pending: bool = False) -> None:
        due = time.monotonic() - self.last_flush >= FLUSH_EVERY_S
        if due or (force_if_pending and self.finished):
            self.flush()

    def handle(self, msg: Control) -> None:
        if isinstance(msg, StopWorking):
            self.stopping = True
        elif isinstance(msg, Stall):
            self.stall_for = msg.seconds
        elif isinstance(msg, CrashAfterClaim):
            self.crash_next = True
        elif isinstance(msg, SetKnobs):
            self.settings = replace(self.settings, **msg.knobs)

    def poll(self, timeout: float = 0.0) -> None:
        """Apply control messages; wait up to `timeout` for the first one."""
        self.last_poll = time.monotonic()
        if not faults.parent_alive(self.parent_pid):
            faults.crash_now()
        while self.control.poll(timeout):
            self.handle(self.control.recv())
            timeout = 0.0

    def sleep(self, seconds: float, renew: tuple[Any, Any] | None = None) -> None:
        """Simulated work or backoff that a stop interrupts (raising Stop); renews the lease."""
        end = time.monotonic() + seconds
        next_renewal = time.monotonic() + self.settings.lease_s / 3
        while not self.stopping:
            now = time.monotonic()
            if now >= end:
                return
            if renew and now >= next_renewal:
                self.renew(*renew)
                next_renewal = now + self.settings.lease_s / 3
            self.poll(min(end, next_renewal if renew else end) - now)
        raise Stop

    # --- the database --------------------------------------------------------------------

    def connect(self) -> None:
        # A session after a lost one gets a name of its own (queuetop-worker-3.2): the
        # leases the lost session held are stale, and the monitor tells that from a live
        # owner by the name's session (worker_alive). The process keeps its number K.
        session = f"{self.name}.{self.sessions + 1}" if self.sessions else self.name
        self.conn = psycopg.connect(
            self.dsn, autocommit=True, application_name=session, connect_timeout=5
        )
        self.sessions += 1
        self.session = session
        self.sql = self.sql.rendered(self.conn)
        if self.conn.info.server_version >= 140000:
            # a backend waiting on a row lock notices a killed worker within a second
            self.conn.execute("SET client_connection_check_interval = 1000")
        if self.settings.lock_timeout_ms:  # the lab's lock_timeout scenario
            self.conn.execute(
                queries.load("loadgen/set_lock_timeout"),
                {"value": f"{self.settings.lock_timeout_ms:g}ms"},
            )
        # the hot loop's statements: prepared once per session, one round trip per run
        self.fixed = {**self.sql.values, "worker": session, "lease_s": self.settings.lease_s}

        def prepare(name: str, query: bytes, *varying: str) -> Statement:
            return Statement(self.conn, f"queuetop_{name}", query, self.fixed, varying)

        self.claims: dict[tuple[str, int], Statement] = {}  # by (strategy, batch), made on use
        self.complete = prepare("complete", self.sql.complete, "id", "token")
        self.fail = prepare("fail", self.sql.fail, "id", "token", "error")
        self.release_one = prepare("release", self.sql.release, "id", "token")
        self.renew_one = (
            prepare("renew", self.sql.renew, "id", "token") if self.sql.renew is not None else None
        )
        self.fail_message = f"simulated failure in {self.name}"

    def claim_statement(self, strategy: str, batch: int) -> Statement:
        stmt = self.claims.get((strategy, batch))
        if stmt is None:
            stmt = self.claims[strategy, batch] = Statement(
                self.conn,
                f"queuetop_claim_{strategy.replace('-', '_')}_{batch}",
                self.sql.claims[strategy],
                {**self.fixed, "batch": batch},
            )
        return stmt

    def claim(self) -> list[tuple[Any, Any]]:
        s = self.settings
        started = time.perf_counter()
        try:
            rows = self.claim_statement(s.strategy, s.batch).run()
        except LOCK_ERRORS as exc:
            self.counts["lock_errors"] += 1
            if kind := lock_error_counter(exc, s.strategy):
                self.counts[kind] += 1
            if self.conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                raise
            return []
        ms = (time.perf_counter() - started) * 1000
        self.latencies.append(ms)
        if ms > LOCK_WAIT_MS and s.strategy == "for-update":
            self.counts["lock_waits"] += 1
        if not rows:
            self.counts["empty_claims"] += 1
            return []
        self.counts["claims"] += 1
        self.counts["claimed"] += len(rows)
        now = time.time()
        self.claimed.extend((job, token, now) for job, token in rows)
        return rows

    def renew(self, job: Any, token: Any) -> None:
        if self.renew_one is None:
            return
        if self.renew_one.run(job, token):
            self.counts["renewals"] += 1

    def finish(self, job: Any, token: Any) -> None:
        """Complete or fail one job: a short statement guarded by the lease token."""
        self.finished.append((job, token, time.time()))
        if faults.happens(self.rng, self.settings.fail_rate):
            rows = self.fail.run(job, token, self.fail_message)
            if not rows:
                self.counts["fenced"] += 1
            else:
                self.counts["failed"] += 1
                self.counts["dead"] += rows[0][0] == self.sql.values["terminal"]
        elif self.complete.run(job, token):
            self.counts["completed"] += 1
        else:
            self.counts["fenced"] += 1

    def release(self, jobs: list[tuple[Any, Any]]) -> None:
        for job, token in jobs:
            self.finished.append((job, token, time.time()))
            if self.release_one.run(job, token):
                self.counts["released"] += 1

    # --- one turn of the loop ------------------------------------------------------------

    def turn(self) -> None:
        s = self.settings
        self.maybe_flush(force_if_pending=s.strategy == "for-update")
        if self.stall_for:
            self.stall()
        if s.hold_tx:
            jobs: list[tuple[Any, Any]] = []
            try:
                with self.conn.transaction():
                    try:
                        jobs = self.claim()
                        self.after_claim(jobs)
                        for job, token in jobs:
                            self.sleep(faults.work_seconds(self.rng, s.work_ms))
                            self.finish(job, token)
                    except BaseException:
                        # about to roll back: every claim of this transaction is undone
                        now = time.time()
                        self.finished.extend((job, token, now) for job, token in jobs)
                        raise
            except LOCK_ERRORS:
                jobs = []  # counted by claim(); the transaction is rolled back
        else:
            jobs = self.claim()
            self.after_claim(jobs)
            for i, (job, token) in enumerate(jobs):
                try:
                    self.sleep(faults.work_seconds(self.rng, s.work_ms), renew=(job, token))
                except Stop:
                    self.release(jobs[i:])
                    raise
                self.finish(job, token)
        if not jobs:
            self.idle = min(IDLE_MAX_S, self.idle * 2) if self.idle else IDLE_MIN_S
            self.sleep(NOWAIT_BACKOFF_S if s.strategy == "nowait" else self.idle)
        else:
            self.idle = 0.0
            if time.monotonic() - self.last_poll >= POLL_EVERY_S:
                self.poll()

    def after_claim(self, jobs: list[tuple[Any, Any]]) -> None:
        """The crash knob: exit hard right after the claim committed, leaving a stale lease.

        The parent hears which session crashed, holding which jobs, and why (the `!` knob or
        the random crash rate); with hold-tx the claim had not committed: no stale lease."""
        by_knob = self.crash_next
        if jobs and (by_knob or faults.happens(self.rng, self.settings.crash_rate)):
            self.flush()
            self.events.put(
                Crashed(
                    self.k,
                    time.time(),
                    self.session,
                    tuple(job for job, _ in jobs),
                    by_knob,
                    committed=not self.settings.hold_tx,
                )
            )
            self.events.close()
            self.events.join_thread()  # the records must reach the parent before we vanish
            faults.crash_now()

    def stall(self) -> None:
        """Sit idle in a transaction that holds a row lock on one ready job, then roll back."""
        seconds, self.stall_for = self.stall_for, 0.0
        self.counts["stalls"] += 1
        with self.conn.transaction(force_rollback=True):
            self.claim_statement("skip-locked", 1).run()
            self.sleep(seconds)

    def reconnect(self, lost: psycopg.OperationalError) -> None:
        """The server went away (restart, terminated backend): say so, then retry with a
        bounded backoff until connected or stopped. Jobs claimed on the lost session stay
        running: stale leases, as after any crash."""
        self.flush()
        delay, reported = RECONNECT_MIN_S, None
        while True:
            reason = first_line(lost)
            if reason != reported:
                self.events.put(Down(self.k, reason))
                reported = reason
            if self.conn is not None:
                self.conn.close()
                self.conn = None
            self.sleep(delay)  # a stop request ends the wait (raises Stop)
            try:
                self.connect()
            except psycopg.OperationalError as exc:
                lost, delay = exc, min(RECONNECT_MAX_S, delay * 2)
                continue
            self.events.put(Up(self.k, self.session, self.conn.info.backend_pid))
            return

    def run(self) -> int:
        self.idle = 0.0
        try:
            try:
                self.connect()
            except psycopg.OperationalError as exc:  # started while the server is away
                self.reconnect(exc)
            self.events.put(Ready(self.k, self.session, self.conn.info.backend_pid))
            while not self.stopping:
                try:
                    self.turn()
                except psycopg.OperationalError as exc:
                    self.reconnect(exc)
        except Stop:
            pass
        finally:
            self.flush()
            if self.conn is not None:
                self.conn.close()
        return 0


def run_worker(
    k: int,
    name: str,
    dsn: str,
    spec: QueueSpec,
    settings: LoadSettings,
    events: Any,
    control: Connection,
    parent_pid: int,
) -> None:
    """The target of each worker process."""
    faults.die_with_parent(parent_pid)
    # Ctrl-C and a hang-up reach the whole process group: the parent decides when we stop
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        Worker(k, name, dsn, spec, settings, events, control, parent_pid).run()
    except psycopg.Error as exc:  # not a lost connection: the statements themselves fail
        events.put(Failed(k, f"{name}: {first_line(exc)}"))
        events.close()
        events.join_thread()
        raise SystemExit(faults.ERROR_EXIT_CODE) from None
