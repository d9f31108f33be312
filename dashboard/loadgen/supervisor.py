"""The worker processes: spawn, signal, reap and replace them; nothing about stats.

Each worker has one pipe of its own, both ways: control messages down, its events
up. No channel is shared, so a worker killed in the middle of a message (SIGKILL,
the OOM killer) can only cut its own pipe short: the others still get through.
(A shared multiprocessing.Queue froze for every worker when one died holding its
write lock.)

Only the supervisor thread calls these methods (a worker's parent-death signal
follows the thread that started it). `procs` is read by LoadGenerator.stats()
under the generator's lock; every change to it happens under that lock too.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from dashboard.loadgen import faults
from dashboard.loadgen.events import Control, Down, Failed, Ready, StopWorking, Up, WorkerEvent
from dashboard.loadgen.settings import MAX_WORKERS, LoadSettings
from dashboard.loadgen.worker import run_worker
from dashboard.models import QueueSpec

WORKER_PREFIX = "queuetop-worker-"
RESPAWN_MIN_S, RESPAWN_MAX_S = 0.5, 8.0  # after a worker exits on an error


@dataclass
class Proc:
    k: int
    name: str
    process: Any  # multiprocessing.Process
    control: Connection  # its pipe: Control messages down, WorkerEvents up
    session: str  # its database session's application_name: name, or name.2 after a loss
    ready: bool = False
    stopping: bool = False
    stalled_until: float = 0.0
    down: str | None = None  # why, while it has lost its connection and reconnects
    backend_pid: int | None = None  # its session's, as pg_stat_activity shows it
    cut: bool = False  # its pipe ended (it exited, or died mid-message); read no more


@dataclass(frozen=True)
class Exit:
    """A worker process that ended: whether it was asked to, and how."""

    k: int
    asked: bool
    on_error: bool  # its statements failed (faults.ERROR_EXIT_CODE)
    last_events: list[WorkerEvent] = field(default_factory=list)  # read from its pipe at exit


class Supervisor:
    """Keeps `target` worker processes alive; replaces the ones that exit."""

    def __init__(
        self, ctx: Any, dsn: str, spec: QueueSpec, target: int, lock: threading.Lock
    ) -> None:
        self._ctx, self._dsn, self._spec, self._lock = ctx, dsn, spec, lock
        self.target = target
        self.procs: dict[int, Proc] = {}
        self.next_k = 1
        self._respawn_at = 0.0
        self._respawn_delay = RESPAWN_MIN_S
        # set while workers exit on errors: the first K that did not (yet) fail
        self._failing_until_k: int | None = None

    def read_events(self, timeout: float, limit: int) -> list[WorkerEvent]:
        """The events the workers sent, waiting up to `timeout` for the first of them."""
        pipes = {p.control: p for p in self.procs.values() if not p.cut}
        if not pipes:
            time.sleep(timeout)
            return []
        events: list[WorkerEvent] = []
        for pipe in wait(list(pipes), timeout):
            events += self._read(pipes[pipe], limit - len(events))
            if len(events) >= limit:
                break
        return events

    def _read(self, proc: Proc, limit: float) -> list[WorkerEvent]:
        """What is waiting in one worker's pipe (at most `limit`); a pipe that ended, or
        broke off mid-message because its worker died, is marked cut and read no more."""
        events: list[WorkerEvent] = []
        try:
            while len(events) < limit and proc.control.poll():
                events.append(proc.control.recv())
        except (EOFError, OSError):
            proc.cut = True
        return events

    # --- what the workers say about themselves ------------------------------------------

    def on_ready(self, e: Ready) -> None:
        if proc := self.procs.get(e.k):
            proc.ready, proc.session, proc.backend_pid = True, e.session, e.backend_pid

    def on_down(self, e: Down) -> None:
        if proc := self.procs.get(e.k):
            proc.down = e.reason

    def on_up(self, e: Up) -> None:
        if proc := self.procs.get(e.k):
            proc.down, proc.session, proc.backend_pid = None, e.session, e.backend_pid

    def on_failed(self, e: Failed) -> bool:
        """True for the first failure of a run of them (its replacements likely fail alike)."""
        first = self._failing_until_k is None
        self._failing_until_k = self.next_k
        return first

    def on_progress(self, k: int) -> None:
        """Worker k completed a job: a worker started after the last error exit works."""
        if k >= (self._failing_until_k or 0):
            self._respawn_delay, self._failing_until_k = RESPAWN_MIN_S, None

    # --- the processes ---------------------------------------------------------------------

    def live(self) -> list[Proc]:
        return sorted((p for p in self.procs.values() if not p.stopping), key=lambda p: p.k)

    def alive_ks(self) -> set[int]:
        return {p.k for p in self.procs.values() if p.process.exitcode is None}

    def set_target(self, n: int) -> None:
        self.target = max(0, min(n, MAX_WORKERS))

    def send(self, proc: Proc, msg: Control) -> None:
        try:
            proc.control.send(msg)
        except OSError:
            pass  # it just died; reap() notices

    def broadcast(self, msg: Control) -> None:
        for proc in self.live():
            self.send(proc, msg)

    def send_one(self, k: int | None, msg: Control) -> Proc | None:
        live = self.live()
        proc = self.procs.get(k) if k is not None else (live[-1] if live else None)
        if proc and not proc.stopping:
            self.send(proc, msg)
            return proc
        return None

    def reconcile(self, settings: LoadSettings) -> None:
        live = self.live()
        if self.target > len(live) and time.monotonic() >= self._respawn_at:
            for _ in range(self.target - len(live)):
                self._spawn(settings)
        for proc in live[self.target :]:
            proc.stopping = True
            self.send(proc, StopWorking())

    def _spawn(self, settings: LoadSettings) -> None:
        k, self.next_k = self.next_k, self.next_k + 1
        name = f"{WORKER_PREFIX}{k}"
        ours, theirs = self._ctx.Pipe()
        process = self._ctx.Process(
            target=run_worker,
            name=name,
            daemon=True,
            args=(k, name, self._dsn, self._spec, settings, theirs, os.getpid()),
        )
        process.start()
        theirs.close()
        with self._lock:
            self.procs[k] = Proc(k, name, process, ours, session=name)

    def reap(self) -> list[Exit]:
        """Forget the processes that exited (under the lock), with what was still unread in
        their pipes; back off after error exits."""
        exits = []
        for proc in list(self.procs.values()):
            code = proc.process.exitcode
            if code is None:
                continue
            last_events = [] if proc.cut else self._read(proc, float("inf"))
            on_error = code == faults.ERROR_EXIT_CODE
            with self._lock:
                del self.procs[proc.k]
            if on_error and not proc.stopping:
                # replaced too, but not in a tight loop if every replacement fails
                self._respawn_at = time.monotonic() + self._respawn_delay
                self._respawn_delay = min(RESPAWN_MAX_S, self._respawn_delay * 2)
            exits.append(Exit(proc.k, proc.stopping, on_error, last_events))
            proc.control.close()
            proc.process.join(0)
        return exits

    def ask_all_to_stop(self) -> None:
        for proc in self.procs.values():
            proc.stopping = True
            self.send(proc, StopWorking())

    def kill_the_rest(self) -> None:
        for proc in list(self.procs.values()):
            proc.process.kill()
            proc.process.join(2)
