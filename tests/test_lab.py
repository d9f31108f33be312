"""The contention lab (`queuetop lab`, and its dashboard screen) against a real server.

No wall-time assertions: each cell is judged by what the server holds or counted (the
table and its trigger log for lost and double-claimed jobs, pg_stat_database for
deadlocks, pgrowlocks for who holds a claimed row) and by ratios only where the
mechanism makes them large."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import conninfo, sql
from textual.app import App
from textual.widgets import DataTable

from dashboard import config, db
from dashboard.cli import main
from dashboard.loadgen import LoadGenerator, LoadSettings
from dashboard.loadgen.lab import CELLS, COLUMNS, Cell, CellResult
from dashboard.loadgen.stats import Latency
from dashboard.setup import schema
from dashboard.ui.screens.lab import DISPLAY, LabScreen
from tests.helpers import wait_until

KEYS = {
    "scenario",
    "strategy",
    "hold_tx",
    "jobs_per_s",
    "claim_p95_ms",
    "lock_waits",
    "errors",
    "server_deadlocks",
    "lost",
    "double_claims",
}
# distinct sessions holding a row they changed (a claim not yet committed), and any holder
CLAIM_HOLDERS = """
SELECT count(DISTINCT pid) FILTER (WHERE modes && ARRAY['Update', 'No Key Update']),
       count(DISTINCT pid)
FROM pgrowlocks('queuetop_demo.jobs'), unnest(pids) AS pid
"""


@pytest.fixture(scope="module")
def lab_json(server_dsn) -> Iterator[list[dict]]:
    """One run of the whole lab (the real command) in a database of its own, shared by
    the tests below."""
    name = f"qt_lab_{os.getpid()}"
    with psycopg.connect(server_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = conninfo.make_conninfo(server_dsn, dbname=name)
    try:
        out = subprocess.run(
            [sys.executable, "-m", "dashboard", "lab", "--dsn", dsn, "--json"]
            + ["--seconds", "2", "--workers", "4"],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert out.returncode == 0, out.stderr
        yield json.loads(out.stdout)["cells"]
    finally:
        with psycopg.connect(server_dsn, autocommit=True) as conn:
            drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
            conn.execute(drop.format(sql.Identifier(name)))


def cell(cells: list[dict], scenario: str, strategy: str, hold_tx: bool) -> dict:
    (found,) = [
        c
        for c in cells
        if (c["scenario"], c["strategy"], c["hold_tx"]) == (scenario, strategy, hold_tx)
    ]
    return found


def test_every_cell_has_the_keys_and_loses_and_doubles_nothing(lab_json):
    assert len(lab_json) == len(CELLS)
    for c in lab_json:
        assert KEYS <= set(c), c
        assert set(c["errors"]) == {"nowait", "lock_timeout", "deadlock"}, c
        assert (c["lost"], c["double_claims"]) == (0, 0), c
        assert c["jobs_per_s"] > 0, c


def test_the_deadlock_cell_is_counted_by_the_workers_and_by_the_server(lab_json):
    dl = cell(lab_json, "deadlock", "for-update", True)
    assert dl["errors"]["deadlock"] > 0 and dl["server_deadlocks"] > 0, dl
    # nothing else deadlocks: the server saw each one a worker retried
    assert dl["server_deadlocks"] == dl["errors"]["deadlock"], dl
    others = [c for c in lab_json if c["scenario"] != "deadlock"]
    assert all(c["server_deadlocks"] == 0 for c in others), others


def test_each_lock_error_shows_where_its_mechanism_is(lab_json):
    assert cell(lab_json, "lock_timeout", "for-update", True)["errors"]["lock_timeout"] > 0
    assert cell(lab_json, "claim", "nowait", True)["errors"]["nowait"] > 0
    for strategy in ("skip-locked", "for-update"):
        for held in (False, True):
            assert cell(lab_json, "claim", strategy, held)["errors"]["nowait"] == 0
    assert cell(lab_json, "claim", "for-update", True)["lock_waits"] > 0
    assert cell(lab_json, "claim", "skip-locked", True)["lock_waits"] == 0


def test_a_held_claim_serializes_for_update_and_not_skip_locked(lab_json):
    # 4 workers, 50 ms of work inside the claim: ~4x in theory; 2x leaves room for noise
    held = {
        s: cell(lab_json, "claim", s, True)["jobs_per_s"] for s in ("skip-locked", "for-update")
    }
    assert held["skip-locked"] >= 2 * held["for-update"], held


@pytest.fixture
def demo_spec(dsn):
    with psycopg.connect(dsn) as conn:
        schema.init_demo(conn)
    with db.connect_monitor(dsn) as conn:
        return config.validate(conn, config.load_preset("demo"))


@pytest.mark.parametrize(("strategy", "most"), [("for-update", 1), ("skip-locked", 4)])
def test_held_for_update_claims_hold_at_most_one_claimed_row_at_any_moment(
    dsn, demo_spec, connect, strategy, most
):
    """Sampled from pgrowlocks: with the claim transaction held, for-update lets one
    worker at a time hold a claimed row (the others queue behind it); skip-locked lets
    every worker hold its own."""
    observer = connect(autocommit=True)
    observer.execute("CREATE EXTENSION IF NOT EXISTS pgrowlocks")
    settings = LoadSettings(workers=4, strategy=strategy, hold_tx=True, work_ms=40.0, prefill=4000)
    samples = []
    with LoadGenerator(dsn, demo_spec, settings) as gen:
        wait_until(lambda: gen.stats().live_workers == 4, timeout=30)
        wait_until(lambda: gen.stats().totals["completed"] >= 8, timeout=30)
        while len(samples) < 150:
            samples.append(observer.execute(CLAIM_HOLDERS).fetchone()[0])
    assert max(samples) <= most, samples
    if strategy == "skip-locked":
        assert max(samples) >= 2, samples  # workers held claimed rows side by side
    else:
        assert max(samples) == 1, samples  # somebody did hold one


def test_bad_input_is_one_line_and_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["lab", "--workers", "1"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--workers" in err[0], err


# --- the dashboard's lab screen ------------------------------------------------------------


def fixed_result(i: int, c: Cell) -> CellResult:
    held = c.hold_tx and c.strategy == "for-update" and c.scenario == "claim"
    return CellResult(
        cell=c,
        workers=2 if c.scenario == "deadlock" else 4,
        seconds=3.0,
        jobs_per_s=18.2 if held else 76.5 + i,
        claim=Latency(0.3 + i / 10, 125.0 if held else 2.0 + i, None),
        lock_waits=53 if held else 0,
        errors={
            "nowait": 3679 if c.strategy == "nowait" and c.hold_tx else 0,
            "lock_timeout": 120 if c.scenario == "lock_timeout" else 0,
            "deadlock": 26 if c.scenario == "deadlock" else 0,
        },
        server_deadlocks=26 if c.scenario == "deadlock" else 0,
        lost=0,
        double_claims=0,
        done=200,
    )


def fixed_runner(results, gate: threading.Event | None = None):
    def run(on_cell, should_stop):
        for r in results:
            if gate is not None:
                gate.wait(10)
            if should_stop():
                return
            on_cell(r)

    return run


class LabApp(App):
    def __init__(self, runner):
        super().__init__()
        self.runner = runner

    def on_mount(self) -> None:
        self.push_screen(LabScreen(self.runner))


FIXED = [fixed_result(i, c) for i, c in enumerate(CELLS)]


async def until_done(pilot) -> None:
    for _ in range(200):
        await pilot.pause()
        if "done" in str(pilot.app.screen.query_one("#lab-status").render()):
            return
    raise AssertionError("the lab screen never said done")


@pytest.mark.parametrize("size", [(120, 30), (80, 24)])
def test_lab_screen_snapshot(snap_compare, size):
    assert snap_compare(LabApp(fixed_runner(FIXED)), terminal_size=size, run_before=until_done)


def test_the_lab_screen_fills_one_row_per_cell_as_it_finishes():
    gate = threading.Event()

    async def body():
        app = LabApp(fixed_runner(FIXED[:3], gate))
        async with app.run_test(size=(120, 30)) as pilot:
            await pilot.pause()
            table = app.screen.query_one(DataTable)
            assert table.row_count == len(CELLS)
            assert str(table.get_row_at(0)[2]) == "…"  # nothing yet
            gate.set()
            for _ in range(200):
                await pilot.pause()
                if str(table.get_row_at(2)[2]) != "…":
                    break
            rows = [[str(v) for v in table.get_row_at(i)] for i in range(len(CELLS))]
            assert rows[0][2] == "76.5" and rows[1][2] == "77.5" and rows[2][2] == "78.5"
            assert rows[3][2] == "…"  # the runner stopped after three cells
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, LabScreen)

    asyncio.run(body())


def test_at_80_columns_the_lab_shows_lost_and_double():
    # they were past the screen's edge at 80x24, with deadlock and server dl
    async def body():
        app = LabApp(fixed_runner(FIXED))
        async with app.run_test(size=(80, 24)) as pilot:
            await until_done(pilot)
            table = app.screen.query_one(DataTable)
            shown = [c.label.plain for c in table.ordered_columns]
            assert set(DISPLAY) == set(COLUMNS) and len(DISPLAY) == len(COLUMNS)
            widths = [c.get_render_width(table) for c in table.ordered_columns]
            right = dict(zip(shown, itertools.accumulate(widths), strict=True))
            assert right["lost"] <= 80 and right["double"] <= 80, right
            # the figures land under their own headers
            rows = [[str(v) for v in table.get_row_at(i)] for i in range(len(CELLS))]
            assert {r[shown.index("lost")] for r in rows} == {"0"}

    asyncio.run(body())
