"""Item 9 of issue 18: the throughput plot spiked to 507 and 1,710 jobs/s (11,000 at a 0.2 s
interval) with about 175 jobs/s done, and sat near 0 between spikes: it plotted the change
of a done count read only every few seconds and carried over between reads. The rate is
the change between two real reads over the time between them."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from test_monitor_cost import demo_spec, fill
from ui_snapshots import T0, fixed_snapshot

from dashboard import db
from dashboard.monitor import Monitor
from dashboard.ui.history import History

RATE = 175.0  # jobs done per second, steadily


def paced_snapshots(interval: float, read_every: float, polls: int):
    """Polls every `interval` s while jobs finish at RATE/s; the done count is read every
    `read_every` s and carried in between, as the monitor does for a costly section."""
    base = fixed_snapshot(rows=0)
    read_at, done = T0, 0
    for i in range(polls):
        now = T0 + timedelta(seconds=i * interval)
        if (now - read_at).total_seconds() >= read_every - 1e-9 or i == 0:
            read_at, done = now, int(RATE * i * interval)
        counts = {**base.counts, "done": done}
        yield replace(base, taken_at=now, counts=counts, count_read_at={"done": read_at})


@pytest.mark.parametrize(("interval", "read_every"), [(1.0, 5.0), (0.2, 5.0), (1.0, 3.0)])
def test_throughput_is_the_rate_between_real_reads(interval, read_every):
    history = History()
    for snap in paced_snapshots(interval, read_every, polls=int(60 / interval)):
        history.add(snap)
    rates = list(history.throughput)
    # once measured, every point is the steady rate: no spike, no trough between reads
    assert max(rates) == pytest.approx(RATE, rel=0.02)
    assert min(rates) == pytest.approx(RATE, rel=0.02)
    # the reads it measured from are the real ones, one per `read_every` seconds
    assert len(history.done_reads) == pytest.approx(60 / read_every, abs=1)


def test_a_count_read_on_every_poll_is_a_rate_per_poll():
    history = History()
    base = fixed_snapshot(rows=0)
    for i, done in enumerate((0, 10, 30, 30, 70)):
        now = T0 + timedelta(seconds=2 * i)
        history.add(
            replace(base, taken_at=now, counts={**base.counts, "done": done}, count_read_at={})
        )
    assert list(history.throughput) == [5.0, 5.0, 10.0, 0.0, 20.0]  # the first: backfilled


def test_the_monitor_says_when_a_paced_count_was_read(dsn, connect):
    """A table whose finished states cost more than their share to count: the finished
    section is read less often than the polls, and the snapshot says when it was."""
    setup = connect(autocommit=True)
    fill(setup, 20_000)
    now = [1000.0]
    interval = 0.1
    with db.connect_monitor(dsn) as mon:
        monitor = Monitor(demo_spec(mon), interval, clock=lambda: now[0])
        first = monitor.poll(mon)
        # as if it cost more than its share (test_monitor_cost tests the pacing itself)
        monitor.sections["finished"].every_s = 5.0
        setup.execute("UPDATE queuetop_demo.jobs SET status = 'done' WHERE status = 'failed'")
        now[0] += interval
        carried = monitor.poll(mon)
        now[0] += 5.0
        again = monitor.poll(mon)
    assert carried.count_read_at["done"] == first.count_read_at["done"]
    assert carried.counts["done"] == first.counts["done"]
    assert carried.count_read_at["ready"] > first.count_read_at["ready"]  # read each poll
    assert again.count_read_at["done"] > first.count_read_at["done"]
    moved = again.counts["done"] - first.counts["done"]
    assert moved > 0
    history = History()
    for snap in (first, carried, again):
        history.add(snap)
    seconds = (again.count_read_at["done"] - first.count_read_at["done"]).total_seconds()
    assert list(history.throughput)[-1] == pytest.approx(moved / seconds)
    assert list(history.throughput)[1] == pytest.approx(moved / seconds)  # backfilled
