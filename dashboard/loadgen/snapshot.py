"""Freezing the generator's state into a LoadSnapshot: processes, stats and knobs."""

from __future__ import annotations

import time

from dashboard.loadgen.bookkeeping import Bookkeeper
from dashboard.loadgen.producer import Producer
from dashboard.loadgen.settings import LoadSettings
from dashboard.loadgen.stats import Latency, LoadSnapshot, WorkerStats
from dashboard.loadgen.supervisor import Supervisor


def freeze(
    keeper: Bookkeeper,
    sup: Supervisor,
    s: LoadSettings,
    producer: Producer | None,
    *,
    running: bool,
    stopped_at: float | None,
    rescue: bool,
    notes: tuple[str, ...] = (),
) -> LoadSnapshot:
    """Called under the generator's lock."""
    now = time.monotonic()
    book = keeper.book
    rates = book.rates()
    end = stopped_at or now
    procs = sorted(sup.procs.values(), key=lambda p: p.k)
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
    down = [("producer", producer.down)] if producer and producer.down else []
    down += [(p.name, p.down) for p in procs if p.down and not p.stopping]
    return LoadSnapshot(
        running=running,
        strategy=s.strategy,
        hold_tx=s.hold_tx,
        batch=s.batch,
        work_ms=s.work_ms,
        target_workers=sup.target,
        live_workers=sum(1 for p in procs if p.ready and not p.stopping and not p.down),
        producer_paused=bool(producer and producer.paused),
        rate=producer.rate if producer else s.rate,
        elapsed_s=max(0.0, end - book.started) if keeper.clock_started else 0.0,
        totals={
            **book.totals,
            "dead": book.totals["dead"] + (producer.rescued_dead if producer else 0),
        },
        crashed=book.crashed,
        rescue=rescue,
        rescued=producer.rescued if producer else 0,
        double_claims=book.ledger.double_claims,
        enqueued=book.enqueued + (producer.enqueued if producer else 0),
        claims_per_s=rates["claimed"],
        completions_per_s=rates["completed"],
        lock_waits_per_s=rates["lock_waits"],
        lock_errors_per_s=rates["lock_errors"],
        latency=Latency.of(book.latency),
        workers=workers,
        errors=tuple(keeper.errors),
        recent_latency=Latency.of(book.recent.at(now)),
        reconnecting=tuple(name for name, _ in down),
        connection_error=down[-1][1] if down else None,
        crashes=tuple(keeper.crashes),
        lease_s=s.lease_s,
        crash_rate=s.crash_rate,
        notes=notes,
    )
