"""Time one refresh of the main screen with 1,000 rows in each table.

Applies N synthetic snapshots (ages tick on every row, about 1 stale lease in 11
leaves or comes back, every plotted series changes: no plot can skip its redraw) to a
running app, headless at 200x50, its plot history already full (as after 10 minutes at
the default interval), and
times `apply_snapshot` (diff the tables, replot, relabel: the refresh time the
50 ms target is about) and, separately, that plus the CPU time of the repaint
that follows. Times are CPU times of the UI thread: the machine is shared.
The stale-lease tab is shown: its overdue ages tick on every row. The job browser
tab holds a page of 100 jobs (read once, as an operator left it). Prints median,
p95 and median / target, then the same with 10 rows per table and the ratio.

    .venv/bin/python bench/render_main_screen.py [N]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from latency_fixtures import fixed_latency  # noqa: E402
from ui_snapshots import FixedBrowserSource, demo_spec, fixed_snapshot  # noqa: E402

from dashboard.models import Snapshot  # noqa: E402
from dashboard.ui.app import QueuetopApp  # noqa: E402
from dashboard.ui.history import History  # noqa: E402

TARGET_MS = 50.0
ROWS = 1000
FEW = 10


def busy(step: int, rows: int) -> Snapshot:
    """fixed_snapshot with every plotted series moving: depth, throughput, age, waiting,
    the p95 wait (and with it the latency lines)."""
    snap = fixed_snapshot(step, rows=rows)
    counts = dict(snap.counts)
    counts["running"] = 8 + step % 5
    counts["done"] = 52310 + 45 * step + (step * 7) % 13
    return replace(
        snap,
        counts=counts,
        oldest_ready_age_s=step % 97 + 0.5,
        waiting=snap.waiting[: max(len(snap.waiting) - step % 7, 0)],
        latency=fixed_latency(step % 50),
    )


async def measure(n: int, rows: int) -> tuple[list[float], list[float], dict[str, int]]:
    # built one at a time, as polls arrive: a list of them all would only feed the GC
    app = QueuetopApp(
        demo_spec(),
        None,
        poll=False,
        snapshots=[busy(0, rows)],
        browser_source=FixedBrowserSource(),
    )
    apply_ms: list[float] = []
    total_ms: list[float] = []
    # a full history: plotext's cost grows with the points, and a dashboard left open has them
    for step in range(-History().maxlen, 0):
        app.history.add(busy(step, 3))
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.press("b")  # the job browser reads its first page, then stays as it is
        while not app.browser.loads:
            await pilot.pause(0.01)
        await pilot.press("l")  # whole database: all 1,000 locks
        await pilot.press("4", "down", "space")  # a cursor and a mark to carry along
        await pilot.pause()
        for step in range(1, n + 1):
            snap = busy(step, rows)
            # CPU time of this thread: the machine is shared, wall time measures the neighbours
            start = time.thread_time()
            app.apply_snapshot(snap)
            apply_ms.append((time.thread_time() - start) * 1000)
            # the repaint that follows, as CPU time: pause() also sleeps until the app is idle
            cpu = time.process_time()
            await pilot.pause()
            total_ms.append(apply_ms[-1] + (time.process_time() - cpu) * 1000)
        counts = {t: app.table(t).row_count for t in ("locks", "waiting", "idle", "stale")}
        counts["browser"] = app.browser.table.row_count
    return apply_ms, total_ms, counts


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def report(name: str, values: list[float]) -> None:
    med = statistics.median(values)
    print(
        f"  {name:22} median {med:6.1f} ms  p95 {p95(values):6.1f} ms  "
        f"median/target {med / TARGET_MS:.2f}  p95/target {p95(values) / TARGET_MS:.2f}"
    )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    print(
        f"{n} refreshes at 200x50, {ROWS:,} rows per table, plot history full "
        f"({History().maxlen} points), target {TARGET_MS:.0f} ms per refresh"
    )
    apply_ms, total_ms, rows = asyncio.run(measure(n, ROWS))
    print(f"rows: {rows}")
    report("apply to widgets", apply_ms)
    report("apply + repaint (CPU)", total_ms)
    # side by side: the same screen with a screenful of rows, so the ratio is what the
    # other 990 rows per table cost (1.00: nothing)
    few_apply, few_total, few = asyncio.run(measure(n, FEW))
    print(f"the same with {FEW} rows per table (rows: {few})")
    report("apply + repaint (CPU)", few_total)
    print(
        f"  {ROWS:,} rows / {FEW} rows: apply "
        f"{statistics.median(apply_ms) / statistics.median(few_apply):.2f}, apply + repaint "
        f"{statistics.median(total_ms) / statistics.median(few_total):.2f}"
    )


if __name__ == "__main__":
    main()
