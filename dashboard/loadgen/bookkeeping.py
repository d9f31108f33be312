"""The parent's stats bookkeeping: what the workers' events add to the counters, the
double-claim ledger, the crash reports and the error list. Nothing about processes."""

from __future__ import annotations

import time
from collections import deque

from dashboard.loadgen.events import Batch, Crashed
from dashboard.loadgen.stats import CRASHES_KEPT, CrashReport, StatsBook


class Bookkeeper:
    """Written by the supervisor thread under the generator's lock; read by stats()."""

    def __init__(self) -> None:
        self.book = StatsBook()
        self.clock_started = False
        self.errors: list[str] = []  # append-only; see fold_errors
        self.crashes: deque[CrashReport] = deque(maxlen=CRASHES_KEPT)
        self._crash_count = 0
        self._folded = (0, 0)  # ledger examples and producer errors already in errors

    def start_clock(self) -> None:
        """The first worker connected: the run's elapsed time counts from here."""
        if not self.clock_started:
            self.clock_started, self.book.started = True, time.monotonic()

    def on_batch(self, e: Batch, alive: set[int]) -> None:
        self.book.add(e.k, e.counts, e.latencies)
        ledger = self.book.ledger
        records = [(at, 1, job, token) for job, token, at in e.claimed]
        records += [(at, 0, job, token) for job, token, at in e.finished]
        for at, is_claim, job, token in sorted(records, key=lambda r: (r[0], r[1])):
            if is_claim:
                ledger.claim(e.k, job, token, at, alive)
            else:
                ledger.finish(e.k, job, token, at)

    def on_crashed(self, e: Crashed) -> None:
        self._crash_count += 1
        self.crashes.append(
            CrashReport(self._crash_count, e.k, e.session, tuple(e.jobs), e.by_knob, e.committed)
        )

    def on_exit(self, k: int, asked: bool, on_error: bool) -> None:
        """A dead worker's session is gone, and its locks with it; an unasked exit that was
        no error exit is a crash (injected, or killed from outside)."""
        self.book.ledger.worker_gone(k)
        if not asked and not on_error:
            self.book.crashed += 1

    def error(self, message: str) -> None:
        self.errors.append(message)

    def tick(self, producer_errors: list[str]) -> None:
        self.book.tick()
        self.book.ledger.expire()
        self.fold_errors(producer_errors)

    def fold_errors(self, producer_errors: list[str]) -> None:
        """Append new double-claim examples and producer errors to the one ordered list."""
        examples = self.book.ledger.examples
        seen_examples, seen_produced = self._folded
        self.errors += examples[seen_examples:] + producer_errors[seen_produced:]
        self._folded = (len(examples), len(producer_errors))
