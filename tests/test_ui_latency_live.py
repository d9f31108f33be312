"""The latency panel against a staged workload (tests/latency_stage.py): the p50 and p95
it shows, read off the widget as text, are within one poll interval of the truth computed
from the rows while the workload runs, and equal it (to the tenth of a second shown) once
the rows stop moving; the p95 wait plot draws a line."""

from __future__ import annotations

import asyncio
import re

from helpers.pilot import until
from latency_stage import Stage, create_queue, truth

from dashboard.ui.app import QueuetopApp
from dashboard.ui.widgets.latency_panel import LatencyPanel
from dashboard.ui.widgets.plots import P95WaitPlot

INTERVAL = 1.0
SHOWN = 0.05 + 1e-9  # the panel shows tenths of a second below 10 s
ROWS = {"queue": None, "fast": "fast", "slow": "slow"}
AGE = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:([\d.]+)s)?$")


def seconds(text: str) -> float | None:
    """A shown age ('12ms', '0.4s', '12s', '1m28s', '2h05m') in seconds; '-' is None."""
    if text == "-":
        return None
    if text.endswith("ms") and text[:-2].isdigit():
        return int(text[:-2]) / 1000
    match = AGE.match(text)
    assert match and text, text
    hours, minutes, secs = match.groups()
    return int(hours or 0) * 3600 + int(minutes or 0) * 60 + float(secs or 0)


def panel_rows(app) -> dict[str | None, list[str]]:
    """The panel's rows as a person reads them: group (None: the queue) -> its cells
    (wait p50 p95 p99, run p50 p95 p99, finished/min, failed)."""
    text = str(app.query_one(LatencyPanel).render())
    rows = {}
    for line in text.splitlines():
        cells = line.split()
        if cells and cells[0] in ROWS:
            rows[ROWS[cells[0]]] = cells[1:]
    return rows


def compare(rows: dict, truths: dict, tolerance: float) -> list[str]:
    """Where a shown p50 or p95 (wait and run) is further than `tolerance` from the truth."""
    off = []
    for group, cells in rows.items():
        t = truths[group]
        for (kind, q), cell in zip(
            (("wait", 0.5), ("wait", 0.95), ("run", 0.5), ("run", 0.95)),
            (cells[0], cells[1], cells[3], cells[4]),
            strict=True,
        ):
            want = t.wait(q) if kind == "wait" else t.run(q)
            got = seconds(cell)
            if want is None or got is None or abs(got - want) > tolerance:
                off.append(f"{group} {kind} p{round(q * 100)}: shown {cell}, truth {want}")
    return off


def test_the_panel_shows_the_staged_waits_and_runs_within_a_poll_of_the_rows(dsn, connect):
    asyncio.run(_panel_against_the_rows(dsn, connect))


async def _panel_against_the_rows(dsn, connect):
    spec = create_queue(dsn)
    stage = Stage(dsn, seconds=4.0)
    reader = connect(autocommit=True)
    app = QueuetopApp(spec, dsn, interval=INTERVAL)
    stage.start()
    stopped = False
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            # while jobs flow: each sample compared with the rows read right after it
            samples = 0
            while samples < 3:
                seen = app.snapshots_applied
                await until(pilot, lambda s=seen: app.snapshots_applied > s, timeout=20)
                rows = panel_rows(app)
                if set(rows) != set(ROWS.values()) or any("-" in r[:5] for r in rows.values()):
                    continue  # a group without a finished job yet
                assert not compare(rows, truth(reader), INTERVAL), compare(
                    rows, truth(reader), INTERVAL
                )
                samples += 1
            await asyncio.to_thread(stage.stop)
            stopped = True
            # the rows stand still: two polls later the panel shows them exactly
            seen = app.snapshots_applied
            await until(pilot, lambda: app.snapshots_applied >= seen + 2, timeout=20)
            truths = truth(reader)
            rows = panel_rows(app)
            assert not compare(rows, truths, SHOWN), compare(rows, truths, SHOWN)
            for group, cells in rows.items():
                t = truths[group]
                assert float(cells[6]) == round(t.finished * 60 / 300, 1), (group, cells)
                assert cells[7] == f"{100 * t.failed / t.finished:.1f}%", (group, cells)
            # the p95 wait plot draws a line: braille cells, no message in its place
            plot = app.query_one(P95WaitPlot)
            assert plot.message() is None
            drawn = "".join(plot.render_line(y).text for y in range(plot.size.height))
            assert any(0x2801 <= ord(c) < 0x2900 for c in drawn), drawn
    finally:
        if not stopped:
            stage.stop()
