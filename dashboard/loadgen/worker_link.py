"""A worker's pipe to the parent: the events it sends up, the control it polls.

Counters, claim latencies and claim/finish records gather in memory and go up as
one `Batch` event every FLUSH_EVERY_S (never one message per job); control
messages (typed, events.py) are read between and during jobs. The pipe is this
worker's alone (supervisor.py says why). A send blocks only while the parent is a
whole socket buffer behind; it lands in the kernel at once, so what a worker sent
before it dies, even by SIGKILL, still reaches the parent.
"""

from __future__ import annotations

import time
from dataclasses import replace
from multiprocessing.connection import Connection
from typing import Any

from dashboard.loadgen import faults
from dashboard.loadgen.events import (
    Batch,
    Control,
    CrashAfterClaim,
    SetKnobs,
    Stall,
    StopWorking,
    WorkerEvent,
)
from dashboard.loadgen.settings import LoadSettings
from dashboard.loadgen.stats import COUNTERS

FLUSH_EVERY_S = 0.1


class ParentLink:
    def __init__(
        self, k: int, settings: LoadSettings, control: Connection, parent_pid: int
    ) -> None:
        self.k, self.settings, self.control = k, settings, control
        self.parent_pid = parent_pid
        self.stopping = False
        self.crash_next = False
        self.stall_for = 0.0
        self.last_poll = 0.0
        self._reset_batch()

    def _reset_batch(self) -> None:
        self.counts = dict.fromkeys(COUNTERS, 0)
        self.latencies: list[float] = []
        self.claimed: list[tuple[Any, Any, float]] = []  # job, token, wall time claim returned
        self.finished: list[tuple[Any, Any, float]] = []  # job, token, wall time finish started
        self.requeued = False  # a finished record above put its job back to ready
        self.last_flush = time.monotonic()

    def send(self, event: WorkerEvent) -> None:
        try:
            self.control.send(event)
        except OSError:  # the parent closed its end: it is gone
            faults.crash_now()

    def flush(self) -> None:
        if any(self.counts.values()) or self.latencies or self.claimed or self.finished:
            counts = {n: v for n, v in self.counts.items() if v}
            self.send(Batch(self.k, counts, self.latencies, self.claimed, self.finished))
        self._reset_batch()

    def maybe_flush(self, before_a_wait: bool = False) -> None:
        """Flush every FLUSH_EVERY_S; or now, `before_a_wait` (a claim that may queue on a
        row lock), if a job this worker let go went back to ready meanwhile: another
        worker may claim it while we wait, and the ledger must hear of our finish first."""
        due = time.monotonic() - self.last_flush >= FLUSH_EVERY_S
        if due or (before_a_wait and self.requeued):
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
