"""One worker process: claim, simulate work, complete or fail, repeat.

The worker talks to the parent through one pipe of its own: it polls control
messages from it between (and during) jobs, and sends counters, claim latencies
and claim/finish records up it (typed: events.py; see worker_link.py). It dies
with the parent (faults.die_with_parent).
"""

from __future__ import annotations

import random
import signal
import time
from multiprocessing.connection import Connection
from typing import Any

import psycopg

import queries
from dashboard.loadgen import faults
from dashboard.loadgen.events import (
    Crashed,
    Down,
    Failed,
    Ready,
    Up,
)
from dashboard.loadgen.lock_errors import LOCK_ERRORS, lock_error_counter
from dashboard.loadgen.prepared import Outcome, Statement, run_pair
from dashboard.loadgen.settings import LoadSettings
from dashboard.loadgen.stats import LOCK_WAIT_MS
from dashboard.loadgen.strategies import QueueSql, build
from dashboard.loadgen.worker_link import ParentLink
from dashboard.models import QueueSpec

POLL_EVERY_S = 0.01  # between busy jobs; idle and working waits poll anyway
IDLE_MIN_S, IDLE_MAX_S = 0.005, 0.2  # backoff when the queue is empty
NOWAIT_BACKOFF_S = 0.002
RECONNECT_MIN_S, RECONNECT_MAX_S = 0.1, 3.0  # backoff while the server is away


def first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class Stop(Exception):
    """The controller asked this worker to stop."""


class Worker(ParentLink):
    """Claims, works, finishes; says what it did through its ParentLink."""

    def __init__(
        self,
        k: int,
        name: str,
        dsn: str,
        spec: QueueSpec,
        settings: LoadSettings,
        control: Connection,
        parent_pid: int,
    ):
        super().__init__(k, settings, control, parent_pid)
        self.name, self.dsn = name, dsn
        self.sessions = 0  # database sessions opened so far (see connect)
        self.session = name  # the current one's application_name
        self.sql: QueueSql = build(spec)
        self.rng = random.Random(None if settings.seed is None else settings.seed * 1000 + k)
        self.conn: psycopg.Connection | None = None

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
            rows: Outcome = self.claim_statement(s.strategy, s.batch).run()
        except LOCK_ERRORS as exc:
            rows = exc
        return self.claimed_rows(rows, (time.perf_counter() - started) * 1000)

    def claimed_rows(self, outcome: Outcome, ms: float) -> list[tuple[Any, Any]]:
        """Count a claim's outcome (its rows, or the lock error it met) and record its jobs;
        an error that is no lock error, or one inside a held transaction, is raised."""
        strategy = self.settings.strategy
        if isinstance(outcome, psycopg.Error):
            if not isinstance(outcome, LOCK_ERRORS):
                raise outcome
            self.counts["lock_errors"] += 1
            if kind := lock_error_counter(outcome, strategy):
                self.counts[kind] += 1
            if self.conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                raise outcome
            return []
        self.latencies.append(ms)
        if ms > LOCK_WAIT_MS and strategy == "for-update":
            self.counts["lock_waits"] += 1
        if not outcome:
            self.counts["empty_claims"] += 1
            return []
        self.counts["claims"] += 1
        self.counts["claimed"] += len(outcome)
        now = time.time()
        self.claimed.extend((job, token, now) for job, token in outcome)
        return outcome

    def renew(self, job: Any, token: Any) -> None:
        if self.renew_one is None:
            return
        if self.renew_one.run(job, token):
            self.counts["renewals"] += 1

    def _finishing(self, job: Any, token: Any) -> tuple[Statement, tuple, bool]:
        """The statement that finishes one job (complete, or fail as the fail rate says)."""
        self.finished.append((job, token, time.time()))
        if faults.happens(self.rng, self.settings.fail_rate):
            return self.fail, (job, token, self.fail_message), True
        return self.complete, (job, token), False

    def _finished(self, rows: Outcome, failing: bool) -> None:
        if isinstance(rows, psycopg.Error):
            raise rows
        if not rows:
            self.counts["fenced"] += 1  # the lease moved on: the token refused the write
        elif failing:
            self.counts["failed"] += 1
            dead = rows[0][0] == self.sql.values["terminal"]
            self.counts["dead"] += dead
            self.requeued = self.requeued or not dead  # retried: ready again
        else:
            self.counts["completed"] += 1

    def finish(self, job: Any, token: Any) -> None:
        """Complete or fail one job: a short statement guarded by the lease token."""
        stmt, values, failing = self._finishing(job, token)
        self._finished(stmt.run(*values), failing)

    def finish_and_claim(self, job: Any, token: Any) -> list[tuple[Any, Any]]:
        """Finish one job and claim the next in one round trip and one transaction: the
        loop without simulated work costs one round trip per job, not two. The claim's
        latency is then that round trip's. If the claim fails (a lock error), the finish
        rolled back with it and runs again alone."""
        stmt, values, failing = self._finishing(job, token)
        s = self.settings
        pair = run_pair(stmt, values, self.claim_statement(s.strategy, s.batch), ())
        if pair.committed:
            self._finished(pair.first, failing)
            return self.claimed_rows(pair.then, pair.ms)
        if isinstance(pair.first, psycopg.Error):
            raise pair.first  # the claim did not run
        rows = self.claimed_rows(pair.then, pair.ms)  # counted; an error no lock error raises
        self._finished(stmt.run(*values), failing)
        return rows

    def release(self, jobs: list[tuple[Any, Any]]) -> None:
        for job, token in jobs:
            self.finished.append((job, token, time.time()))
            self.requeued = True
            if self.release_one.run(job, token):
                self.counts["released"] += 1

    # --- one turn of the loop ------------------------------------------------------------

    def turn(self) -> None:
        s = self.settings
        self.maybe_flush(before_a_wait=s.strategy == "for-update" or s.hold_tx)
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
                        self.requeued = self.requeued or bool(jobs)
                        raise
            except LOCK_ERRORS:
                jobs = []  # counted by claim(); the transaction is rolled back
        else:
            jobs = self.work_short(self.claim())
        if not jobs:
            self.idle = min(IDLE_MAX_S, self.idle * 2) if self.idle else IDLE_MIN_S
            self.sleep(NOWAIT_BACKOFF_S if s.strategy == "nowait" else self.idle)
        else:
            self.idle = 0.0
            if time.monotonic() - self.last_poll >= POLL_EVERY_S:
                self.poll()

    def work_short(self, jobs: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        """Work through claimed jobs with the claim committed; the last job of each claim
        is finished together with the next claim while nothing else is due (a stop, a
        stall, hold-tx turned on). Returns the first claim's jobs (empty: none claimed)."""
        first = jobs
        while jobs:
            self.after_claim(jobs)
            for i, (job, token) in enumerate(jobs):
                try:
                    self.sleep(faults.work_seconds(self.rng, self.settings.work_ms), (job, token))
                except Stop:
                    self.release(jobs[i:])
                    raise
                if i < len(jobs) - 1:
                    self.finish(job, token)
            self.maybe_flush(before_a_wait=self.settings.strategy == "for-update")
            if time.monotonic() - self.last_poll >= POLL_EVERY_S:
                self.poll()
            if self.stopping or self.stall_for or self.settings.hold_tx:
                self.finish(job, token)
                break
            jobs = self.finish_and_claim(job, token)
        return first

    def after_claim(self, jobs: list[tuple[Any, Any]]) -> None:
        """The crash knob: exit hard right after the claim committed, leaving a stale lease.

        The parent hears which session crashed, holding which jobs, and why (the `!` knob or
        the random crash rate); with hold-tx the claim had not committed: no stale lease."""
        by_knob = self.crash_next
        if jobs and (by_knob or faults.happens(self.rng, self.settings.crash_rate)):
            self.flush()
            self.send(
                Crashed(
                    self.k,
                    time.time(),
                    self.session,
                    tuple(job for job, _ in jobs),
                    by_knob,
                    committed=not self.settings.hold_tx,
                )
            )  # sent: in the kernel's buffer, it reaches the parent after we vanish
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
                self.send(Down(self.k, reason))
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
            self.send(Up(self.k, self.session, self.conn.info.backend_pid))
            return

    def run(self) -> int:
        self.idle = 0.0
        try:
            try:
                self.connect()
            except psycopg.OperationalError as exc:  # started while the server is away
                self.reconnect(exc)
            self.send(Ready(self.k, self.session, self.conn.info.backend_pid))
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
    control: Connection,
    parent_pid: int,
) -> None:
    """The target of each worker process."""
    faults.die_with_parent(parent_pid)
    # Ctrl-C and a hang-up reach the whole process group: the parent decides when we stop
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        Worker(k, name, dsn, spec, settings, control, parent_pid).run()
    except psycopg.Error as exc:  # not a lost connection: the statements themselves fail
        control.send(Failed(k, f"{name}: {first_line(exc)}"))
        raise SystemExit(faults.ERROR_EXIT_CODE) from None
