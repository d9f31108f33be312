"""LoadGenerator: the controller the CLI and the TUI drive.

Every public method returns at once: it queues a command for the
supervisor thread, which alone spawns, signals and reaps the worker
processes (on Linux a worker's parent-death signal follows the *thread*
that started it, so that thread must live as long as the pool), runs the
producer, and folds the workers' events into the stats.

The pool keeps the worker count the user asked for: a worker that loses its
connection reconnects by itself (and says so meanwhile), and a worker process
that exits is replaced, after a growing pause if it exited on an error.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import threading
import time
from collections import deque
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from typing import Any

import psycopg

from dashboard.audit.writers import AuditSink
from dashboard.loadgen import faults
from dashboard.loadgen.producer import Producer, Rescue, enqueue
from dashboard.loadgen.rescuer import check_rescue
from dashboard.loadgen.settings import LIVE_KNOBS, MAX_WORKERS, LoadSettings
from dashboard.loadgen.stats import (
    CRASHES_KEPT,
    CrashReport,
    Latency,
    LoadSnapshot,
    StatsBook,
    WorkerStats,
)
from dashboard.loadgen.strategies import build, check_strategy
from dashboard.loadgen.worker import first_line, run_worker
from dashboard.models import QueueSpec

WORKER_PREFIX = "queuetop-worker-"
TICK_S = 0.05
STOP_TIMEOUT_S = 5.0
MAX_EVENTS_PER_TICK = 5000
RESPAWN_MIN_S, RESPAWN_MAX_S = 0.5, 8.0  # after a worker exits on an error


@dataclass
class _Proc:
    k: int
    name: str
    process: Any  # multiprocessing.Process
    control: Connection
    session: str  # its database session's application_name: name, or name.2 after a loss
    ready: bool = False
    stopping: bool = False
    stalled_until: float = 0.0
    down: str | None = None  # why, while it has lost its connection and reconnects
    backend_pid: int | None = None  # its session's, as pg_stat_activity shows it


class LoadGenerator:
    """Competing worker processes against one queue table, with live knobs.

    `spec` must be validated (config.validate). Usage from a UI thread:
    `gen.start()`, then any of the knobs, `gen.stats()` on each refresh,
    and `gen.stop()` + `gen.wait()` when leaving.

    Expired leases are left alone unless `rescue` names an audit sink: the rescuer
    (rescuer.py) then requeues them, guarded and audited like an operator's requeue.
    """

    def __init__(
        self, dsn: str, spec: QueueSpec, settings: LoadSettings, *, rescue: AuditSink | None = None
    ):
        self.dsn, self.spec = dsn, spec
        self._settings = settings
        if rescue is not None:
            check_rescue(spec)
        self._rescue = rescue
        self._target = settings.workers
        self._ctx = mp.get_context("spawn")  # no fork of a threaded parent (TUI, psycopg)
        self._events: Any = None
        self._commands: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._book = StatsBook()
        self._clock_started = False
        self._stopped_at: float | None = None
        self._procs: dict[int, _Proc] = {}
        self._next_k = 1
        self._errors: list[str] = []  # append-only; see _fold_errors
        self._crashes: deque[CrashReport] = deque(maxlen=CRASHES_KEPT)
        self._crash_count = 0
        self._folded = (0, 0)  # ledger examples and producer errors already in _errors
        self._respawn_at = 0.0
        self._respawn_delay = RESPAWN_MIN_S
        # set while workers exit on errors: the first K that did not (yet) fail
        self._failing_until_k: int | None = None
        self._producer: Producer | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # --- the controller API (none of these block) -------------------------------------------

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._supervise, name="queuetop-loadgen", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """Ask every worker to stop; `wait()` until they have."""
        self._stop.set()

    def wait(self, timeout: float | None = None) -> bool:
        """True once the supervisor and every worker process are gone."""
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def settings(self) -> LoadSettings:
        return self._settings

    def set_workers(self, n: int) -> None:
        self._commands.put(("workers", max(0, int(n))))

    def add_worker(self) -> None:
        self._commands.put(("workers_delta", 1))

    def remove_worker(self) -> None:
        self._commands.put(("workers_delta", -1))

    def set_strategy(self, strategy: str) -> None:
        self.set_knobs(strategy=check_strategy(strategy))

    def set_hold_tx(self, on: bool) -> None:
        self.set_knobs(hold_tx=bool(on))

    def set_knobs(self, **knobs: Any) -> None:
        """Change live knobs (strategy, batch, work_ms, hold_tx, fail_rate, crash_rate)."""
        unknown = set(knobs) - set(LIVE_KNOBS)
        if unknown:
            raise ValueError(f"not a live knob: {', '.join(sorted(unknown))}")
        self._settings = replace(self._settings, **knobs)  # validates
        self._commands.put(("set", dict(knobs)))

    def crash_worker(self, k: int | None = None) -> None:
        """Worker k (default: the newest live one) exits hard after its next claim commits."""
        self._commands.put(("crash", k))

    def stall_worker(self, seconds: float, k: int | None = None) -> None:
        """Worker k (default: the newest live one) sits idle in a transaction holding a row lock."""
        self._commands.put(("stall", k, float(seconds)))

    def pause_producer(self, paused: bool = True) -> None:
        self._commands.put(("pause", paused))

    def resume_producer(self) -> None:
        self.pause_producer(False)

    def set_rate(self, jobs_per_s: float) -> None:
        self._commands.put(("rate", max(0.0, float(jobs_per_s))))

    def stats(self) -> LoadSnapshot:
        """A frozen copy of the counters; cheap, safe from any thread."""
        now = time.monotonic()
        with self._lock:
            book, s = self._book, self._settings
            claims_s, completions_s = book.rates()
            end = self._stopped_at or now
            procs = sorted(self._procs.values(), key=lambda p: p.k)
            workers = tuple(
                WorkerStats(
                    k=p.k,
                    name=p.name,
                    session=p.session,
                    pid=p.process.pid,
                    backend_pid=None if p.down else p.backend_pid,
                    alive=not p.stopping,
                    stalled=p.stalled_until > now,
                    counters=dict(book.per_worker.get(p.k, {})),
                    connected=not p.down,
                )
                for p in procs
            )
            producer = self._producer
            down = [("producer", producer.down)] if producer and producer.down else []
            down += [(p.name, p.down) for p in procs if p.down and not p.stopping]
            return LoadSnapshot(
                running=self.running and not self._stop.is_set(),
                strategy=s.strategy,
                hold_tx=s.hold_tx,
                batch=s.batch,
                work_ms=s.work_ms,
                target_workers=self._target,
                live_workers=sum(1 for p in procs if p.ready and not p.stopping and not p.down),
                producer_paused=bool(producer and producer.paused),
                rate=producer.rate if producer else s.rate,
                elapsed_s=max(0.0, end - book.started) if self._clock_started else 0.0,
                totals={
                    **book.totals,
                    "dead": book.totals["dead"] + (producer.rescued_dead if producer else 0),
                },
                crashed=book.crashed,
                rescue=self._rescue is not None,
                rescued=producer.rescued if producer else 0,
                double_claims=book.ledger.double_claims,
                enqueued=book.enqueued + (producer.enqueued if producer else 0),
                claims_per_s=claims_s,
                completions_per_s=completions_s,
                latency=Latency.of(book.latency),
                workers=workers,
                errors=tuple(self._errors),
                recent_latency=Latency.of(book.recent.at(now)),
                reconnecting=tuple(name for name, _ in down),
                connection_error=down[-1][1] if down else None,
                crashes=tuple(self._crashes),
                lease_s=s.lease_s,
            )

    def __enter__(self) -> LoadGenerator:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self.wait(STOP_TIMEOUT_S * 3)

    # --- the supervisor thread -----------------------------------------------------------

    def _supervise(self) -> None:
        self._events = self._ctx.Queue()
        try:
            self._setup()
            while not self._stop.is_set():
                self._apply_commands()
                self._reconcile()
                self._drain(TICK_S)
                self._reap()
                with self._lock:
                    self._book.tick()
                    self._book.ledger.expire()
                    self._fold_errors()
        except Exception as exc:  # reported through stats().errors; the pool still shuts down
            with self._lock:
                self._errors.append(f"load generator: {first_line(exc)}")
        finally:
            self._stopped_at = self._stopped_at or time.monotonic()
            self._shutdown()
            with self._lock:
                self._fold_errors()

    def _fold_errors(self) -> None:
        """Append new double-claim examples and producer errors to the one ordered list."""
        examples = self._book.ledger.examples
        produced = self._producer.errors if self._producer else []
        seen_examples, seen_produced = self._folded
        self._errors += examples[seen_examples:] + produced[seen_produced:]
        self._folded = (len(examples), len(produced))

    def _setup(self) -> None:
        s = self._settings
        queue_sql = build(self.spec)
        with psycopg.connect(
            self.dsn, autocommit=True, application_name="queuetop-loadgen", connect_timeout=5
        ) as conn:
            row = conn.execute(queue_sql.last_worker_number, queue_sql.params()).fetchone()
            self._next_k = int(row[0]) + 1  # never reuse a name a live lease points at
            if s.prefill:
                try:
                    self._book.enqueued += enqueue(conn, queue_sql, s.prefill, s.payload_bytes)
                except psycopg.Error as exc:
                    raise RuntimeError(
                        f"cannot enqueue jobs into {self.spec.table}: {first_line(exc)}; fill "
                        "the queue yourself and run without --jobs and --rate"
                    ) from exc
        rescue = (
            Rescue(
                self._rescue,
                every_s=max(0.2, min(s.lease_s / 2, 5.0)),
                table=str(self.spec.table),
                stale_after_s=self.spec.policy.stale_after_s,
            )
            if self._rescue is not None
            else None
        )
        self._producer = Producer(
            self.dsn, queue_sql, rate=s.rate, payload_bytes=s.payload_bytes, rescue=rescue
        )
        self._producer.start()

    def _apply_commands(self) -> None:
        while True:
            try:
                cmd = self._commands.get_nowait()
            except queue.Empty:
                return
            kind = cmd[0]
            if kind == "workers":
                self._target = min(cmd[1], MAX_WORKERS)
            elif kind == "workers_delta":
                self._target = max(0, min(self._target + cmd[1], MAX_WORKERS))
            elif kind == "set":
                self._broadcast(("set", cmd[1]))
            elif kind == "crash":
                self._send_one(cmd[1], ("crash",))
            elif kind == "stall":
                proc = self._send_one(cmd[1], ("stall", cmd[2]))
                if proc:
                    proc.stalled_until = time.monotonic() + cmd[2]
            elif kind == "pause" and self._producer:
                self._producer.paused = cmd[1]
            elif kind == "rate" and self._producer:
                self._producer.rate = cmd[1]

    def _live(self) -> list[_Proc]:
        return sorted((p for p in self._procs.values() if not p.stopping), key=lambda p: p.k)

    def _send(self, proc: _Proc, msg: tuple) -> None:
        try:
            proc.control.send(msg)
        except OSError:
            pass  # it just died; _reap notices

    def _broadcast(self, msg: tuple) -> None:
        for proc in self._live():
            self._send(proc, msg)

    def _send_one(self, k: int | None, msg: tuple) -> _Proc | None:
        live = self._live()
        proc = self._procs.get(k) if k is not None else (live[-1] if live else None)
        if proc and not proc.stopping:
            self._send(proc, msg)
            return proc
        return None

    def _reconcile(self) -> None:
        live = self._live()
        if self._target > len(live) and time.monotonic() >= self._respawn_at:
            for _ in range(self._target - len(live)):
                self._spawn()
        for proc in live[self._target :] if len(live) > self._target else ():
            proc.stopping = True
            self._send(proc, ("stop",))

    def _spawn(self) -> None:
        k, self._next_k = self._next_k, self._next_k + 1
        name = f"{WORKER_PREFIX}{k}"
        ours, theirs = self._ctx.Pipe()
        process = self._ctx.Process(
            target=run_worker,
            name=name,
            daemon=True,
            args=(k, name, self.dsn, self.spec, self._settings, self._events, theirs, os.getpid()),
        )
        process.start()
        theirs.close()
        with self._lock:
            self._procs[k] = _Proc(k, name, process, ours, session=name)

    def _drain(self, timeout: float) -> None:
        try:
            msg = self._events.get(timeout=timeout)
        except queue.Empty:
            return
        with self._lock:
            for _ in range(MAX_EVENTS_PER_TICK):
                self._handle(msg)
                try:
                    msg = self._events.get_nowait()
                except queue.Empty:
                    return

    def _handle(self, msg: tuple) -> None:
        kind, k = msg[0], msg[1]
        proc = self._procs.get(k)
        if kind == "ready":
            if proc:
                proc.ready, proc.session, proc.backend_pid = True, msg[2], msg[3]
            if not self._clock_started:
                self._clock_started, self._book.started = True, time.monotonic()
        elif kind == "down":
            if proc:
                proc.down = msg[2]
        elif kind == "up":
            if proc:
                proc.down, proc.session, proc.backend_pid = None, msg[2], msg[3]
        elif kind == "crash":
            _, _, _, session, jobs, by_knob, committed = msg
            self._crash_count += 1
            self._crashes.append(
                CrashReport(self._crash_count, k, session, tuple(jobs), by_knob, committed)
            )
        elif kind == "batch":
            _, _, counts, latencies, claimed, finished = msg
            self._book.add(k, counts, latencies)
            if counts.get("completed") and k >= (self._failing_until_k or 0):
                # a worker started after the last error exit gets work done: it is over
                self._respawn_delay, self._failing_until_k = RESPAWN_MIN_S, None
            alive = {p.k for p in self._procs.values() if p.process.exitcode is None}
            ledger = self._book.ledger
            records = [(at, 1, job, token) for job, token, at in claimed]
            records += [(at, 0, job, token) for job, token, at in finished]
            for at, is_claim, job, token in sorted(records, key=lambda r: (r[0], r[1])):
                if is_claim:
                    ledger.claim(k, job, token, at, alive)
                else:
                    ledger.finish(k, job, token, at)
        elif kind == "error":
            if self._failing_until_k is None:  # its replacements will likely fail alike
                self._errors.append(msg[2])
            self._failing_until_k = self._next_k

    def _reap(self) -> None:
        for proc in list(self._procs.values()):
            code = proc.process.exitcode
            if code is None:
                continue
            with self._lock:
                del self._procs[proc.k]
                self._book.ledger.worker_gone(proc.k)
                if not proc.stopping:
                    if code == faults.ERROR_EXIT_CODE:
                        # replaced too, but not in a tight loop if every replacement fails
                        self._respawn_at = time.monotonic() + self._respawn_delay
                        self._respawn_delay = min(RESPAWN_MAX_S, self._respawn_delay * 2)
                    else:
                        self._book.crashed += 1  # injected crash or killed: replaced
            proc.control.close()
            proc.process.join(0)

    def _shutdown(self) -> None:
        if self._producer:
            self._producer.stop()
        for proc in self._procs.values():
            proc.stopping = True
            self._send(proc, ("stop",))
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while self._procs and time.monotonic() < deadline:
            self._drain(TICK_S)  # a worker cannot exit while its queued events are unread
            self._reap()
        for proc in list(self._procs.values()):
            proc.process.kill()
            proc.process.join(2)
        self._reap()
        self._drain(0.01)
        if self._producer:
            self._producer.join(5)
