"""LoadGenerator: the controller the CLI and the TUI drive.

Every public method returns at once: it queues a typed command (events.py) for
the supervisor thread, which alone spawns, signals and reaps the worker
processes (supervisor.py; on Linux a worker's parent-death signal follows the
*thread* that started it, so that thread must live as long as the pool), runs
the producer, and hands the workers' events, by type, to the supervisor (about
processes) or the bookkeeper (about stats, bookkeeping.py).

The pool keeps the worker count the user asked for: a worker that loses its
connection reconnects by itself (and says so meanwhile), and a worker process
that exits is replaced, after a growing pause if it exited on an error.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import psycopg

from dashboard.audit.writers import AuditSink
from dashboard.loadgen.bookkeeping import Bookkeeper
from dashboard.loadgen.demo import RANDOM_CRASH_RATE
from dashboard.loadgen.events import (
    Batch,
    Broadcast,
    ChangeTarget,
    Command,
    CrashAfterClaim,
    Crashed,
    Down,
    Failed,
    PauseProducer,
    Ready,
    SendOne,
    SetKnobs,
    SetRate,
    SetTarget,
    Stall,
    Up,
    WorkerEvent,
)
from dashboard.loadgen.producer import Producer, Rescue, enqueue
from dashboard.loadgen.rescuer import check_rescue
from dashboard.loadgen.settings import LIVE_KNOBS, LoadSettings
from dashboard.loadgen.snapshot import freeze
from dashboard.loadgen.stats import LoadSnapshot
from dashboard.loadgen.strategies import build, check_strategy
from dashboard.loadgen.supervisor import WORKER_PREFIX, Supervisor
from dashboard.loadgen.worker import first_line
from dashboard.models import QueueSpec

__all__ = ["WORKER_PREFIX", "LoadGenerator"]

TICK_S = 0.05
STOP_TIMEOUT_S = 5.0
MAX_EVENTS_PER_TICK = 5000


class LoadGenerator:
    """Competing worker processes against one queue table, with live knobs.

    `spec` must be validated (config.validate). Usage from a UI thread:
    `gen.start()`, then any of the knobs, `gen.stats()` on each refresh,
    and `gen.stop()` + `gen.wait()` when leaving.

    Expired leases are left alone unless `rescue` names an audit sink: the rescuer
    (rescuer.py) then requeues them, guarded and audited like an operator's requeue.
    """

    def __init__(
        self,
        dsn: str,
        spec: QueueSpec,
        settings: LoadSettings,
        *,
        rescue: AuditSink | None = None,
        notes: tuple[str, ...] = (),
    ):
        self.dsn, self.spec = dsn, spec
        self._notes = notes  # said with every snapshot (e.g. the demo's leftover leases)
        self._settings = settings
        if rescue is not None:
            check_rescue(spec)
        self._rescue = rescue
        self._lock = threading.Lock()
        # spawn: no fork of a threaded parent (TUI, psycopg)
        self._sup = Supervisor(mp.get_context("spawn"), dsn, spec, settings.workers, self._lock)
        self._keeper = Bookkeeper()
        self._commands: queue.Queue[Command] = queue.Queue()
        self._stopped_at: float | None = None
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
        self._commands.put(SetTarget(max(0, int(n))))

    def add_worker(self) -> None:
        self._commands.put(ChangeTarget(1))

    def remove_worker(self) -> None:
        self._commands.put(ChangeTarget(-1))

    def set_strategy(self, strategy: str) -> None:
        """The claim strategy alone: hold-tx stays as it is (its own knob)."""
        self.set_knobs(strategy=check_strategy(strategy))

    def set_hold_tx(self, on: bool) -> None:
        """Whether the claim transaction is held through the work, alone."""
        self.set_knobs(hold_tx=bool(on))

    def set_knobs(self, **knobs: Any) -> None:
        """Change live knobs (strategy, batch, work_ms, hold_tx, fail_rate, crash_rate)."""
        unknown = set(knobs) - set(LIVE_KNOBS)
        if unknown:
            raise ValueError(f"not a live knob: {', '.join(sorted(unknown))}")
        self._settings = replace(self._settings, **knobs)  # validates
        self._commands.put(Broadcast(SetKnobs(dict(knobs))))

    def set_random_crashes(self, on: bool) -> None:
        """The demo's chaos knob: random crashes after claims (each a stale lease), or none."""
        self.set_knobs(crash_rate=RANDOM_CRASH_RATE if on else 0.0)

    def crash_worker(self, k: int | None = None) -> None:
        """Worker k (default: the newest live one) exits hard after its next claim commits."""
        self._commands.put(SendOne(k, CrashAfterClaim()))

    def stall_worker(self, seconds: float, k: int | None = None) -> None:
        """Worker k (default: the newest live one) sits idle in a transaction holding a row lock."""
        self._commands.put(SendOne(k, Stall(float(seconds))))

    def pause_producer(self, paused: bool = True) -> None:
        self._commands.put(PauseProducer(paused))

    def resume_producer(self) -> None:
        self.pause_producer(False)

    def set_rate(self, jobs_per_s: float) -> None:
        self._commands.put(SetRate(max(0.0, float(jobs_per_s))))

    def stats(self) -> LoadSnapshot:
        """A frozen copy of the counters; cheap, safe from any thread."""
        with self._lock:
            return freeze(
                self._keeper,
                self._sup,
                self._settings,
                self._producer,
                running=self.running and not self._stop.is_set(),
                stopped_at=self._stopped_at,
                rescue=self._rescue is not None,
                notes=self._notes,
            )

    def __enter__(self) -> LoadGenerator:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self.wait(STOP_TIMEOUT_S * 3)

    # --- the supervisor thread -----------------------------------------------------------

    def _supervise(self) -> None:
        sup, keeper = self._sup, self._keeper
        on_event = self._event_handlers()
        on_command = self._command_handlers()
        try:
            self._setup()
            while not self._stop.is_set():
                while True:
                    try:
                        cmd = self._commands.get_nowait()
                    except queue.Empty:
                        break
                    on_command[type(cmd)](cmd)
                sup.reconcile(self._settings)
                self._drain(on_event, TICK_S)
                self._reap(on_event)
                with self._lock:
                    keeper.tick(self._producer_errors())
        except Exception as exc:  # reported through stats().errors; the pool still shuts down
            with self._lock:
                keeper.error(f"load generator: {first_line(exc)}")
        finally:
            self._stopped_at = self._stopped_at or time.monotonic()
            self._shutdown(on_event)
            with self._lock:
                keeper.fold_errors(self._producer_errors())

    def _event_handlers(self) -> dict[type, Callable[[Any], None]]:
        """Each worker event to what it changes: the processes, the stats, or both."""
        sup, keeper = self._sup, self._keeper

        def ready(e: Ready) -> None:
            sup.on_ready(e)
            keeper.start_clock()

        def batch(e: Batch) -> None:
            keeper.on_batch(e, sup.alive_ks())
            if e.counts.get("completed"):
                sup.on_progress(e.k)

        def failed(e: Failed) -> None:
            if sup.on_failed(e):  # its replacements will likely fail alike: said once
                keeper.error(e.message)

        table: dict[type, Callable[[Any], None]] = {
            Ready: ready,
            Down: sup.on_down,
            Up: sup.on_up,
            Batch: batch,
            Crashed: keeper.on_crashed,
            Failed: failed,
        }
        assert set(table) == set(WorkerEvent.__args__), "every worker event has a handler"
        return table

    def _command_handlers(self) -> dict[type, Callable[[Any], None]]:
        sup = self._sup

        def stall(cmd: SendOne) -> None:
            proc = sup.send_one(cmd.k, cmd.control)
            if proc and isinstance(cmd.control, Stall):
                proc.stalled_until = time.monotonic() + cmd.control.seconds

        def producer(**change: Any) -> None:
            if self._producer:
                for name, value in change.items():
                    setattr(self._producer, name, value)

        table: dict[type, Callable[[Any], None]] = {
            SetTarget: lambda c: sup.set_target(c.workers),
            ChangeTarget: lambda c: sup.set_target(sup.target + c.delta),
            Broadcast: lambda c: sup.broadcast(c.control),
            SendOne: stall,
            PauseProducer: lambda c: producer(paused=c.paused),
            SetRate: lambda c: producer(rate=c.jobs_per_s),
        }
        assert set(table) == set(Command.__args__), "every command has a handler"
        return table

    def _producer_errors(self) -> list[str]:
        return self._producer.errors if self._producer else []

    def _setup(self) -> None:
        s = self._settings
        queue_sql = build(self.spec)
        with psycopg.connect(
            self.dsn, autocommit=True, application_name="queuetop-loadgen", connect_timeout=5
        ) as conn:
            row = conn.execute(queue_sql.last_worker_number, queue_sql.params()).fetchone()
            self._sup.next_k = int(row[0]) + 1  # never reuse a name a live lease points at
            if s.prefill:
                try:
                    self._keeper.book.enqueued += enqueue(
                        conn, queue_sql, s.prefill, s.payload_bytes
                    )
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

    def _drain(self, on_event: dict[type, Callable[[Any], None]], timeout: float) -> None:
        events = self._sup.read_events(timeout, MAX_EVENTS_PER_TICK)
        if events:
            with self._lock:
                for event in events:
                    on_event[type(event)](event)

    def _reap(self, on_event: dict[type, Callable[[Any], None]]) -> None:
        for gone in self._sup.reap():
            with self._lock:
                for event in gone.last_events:  # what it said before it went
                    on_event[type(event)](event)
                self._keeper.on_exit(gone.k, gone.asked, gone.on_error)

    def _shutdown(self, on_event: dict[type, Callable[[Any], None]]) -> None:
        if self._producer:
            self._producer.stop()
        self._sup.ask_all_to_stop()
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while self._sup.procs and time.monotonic() < deadline:
            self._drain(on_event, TICK_S)
            self._reap(on_event)
        self._sup.kill_the_rest()
        self._reap(on_event)
        if self._producer:
            self._producer.join(5)
