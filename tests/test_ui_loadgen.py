"""The load generator in the dashboard: its panel, its keys, and no worker left behind."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import psycopg
import pytest
from helpers import wait_until
from helpers.pilot import run_app
from rich.console import Console
from test_ui_live import INTERVAL, demo_spec, until
from textual.widgets import Static
from ui_snapshots import (
    FixedLoadGen,
    fixed_history,
    fixed_load_snapshot,
    lost_database_load_snapshot,
)
from ui_snapshots import demo_spec as fixed_spec

from dashboard.cli import main
from dashboard.loadgen import LoadGenerator, LoadSettings
from dashboard.loadgen.demo import describe
from dashboard.loadgen.stats import COUNTERS, CrashReport
from dashboard.ui.app import QueuetopApp
from dashboard.ui.loadgen_controls import LOADGEN_ACTIONS, LOADGEN_BINDINGS, LOADGEN_TAB
from dashboard.ui.screens.detail import DetailScreen
from dashboard.ui.screens.help import binding_rows
from dashboard.ui.widgets.loadgen_panel import LoadStrip, LoadSummary, WorkersTable

WORKERS_SQL = (
    "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'queuetop-worker-%'"
)


def fixed_app(loadgen=None, read_only: bool = False) -> QueuetopApp:
    return QueuetopApp(
        fixed_spec(),
        None,
        poll=False,
        snapshots=fixed_history(),
        loadgen=loadgen,
        read_only=read_only,
    )


run = run_app  # tests/helpers/pilot.py


@pytest.mark.parametrize("size", [(120, 40), (80, 24), (200, 50)])
def test_loadgen_panel_snapshot(snap_compare, size):
    assert snap_compare(fixed_app(FixedLoadGen()), terminal_size=size, press=["5"])


def test_plain_watch_hides_the_loadgen_keys_and_panel():
    async def body(pilot):
        app = pilot.app
        assert all(app.check_action(a, ()) is False for a in LOADGEN_ACTIONS)
        assert not app.query(LoadStrip) and not app.query(WorkersTable)
        sections = dict(app.binding_sections())
        assert "load generator" not in sections
        assert not any(b.action in LOADGEN_ACTIONS for b in sections["dashboard"])
        commands = [c.title for c in app.get_system_commands(app.screen)]
        assert "Add worker" not in commands and "Locks" in commands
        await pilot.press("w", "s", "5")  # nothing happens, nothing breaks
        assert app.query_one("#tables").active == "tab-locks"

    run(fixed_app(), body)


def test_keys_drive_the_generator_and_say_what_they_did():
    gen = FixedLoadGen()

    async def body(pilot):
        app = pilot.app
        assert ("start",) in gen.calls
        titles = {c.title for c in app.get_system_commands(app.screen)}
        described = {text for _, _, text in binding_rows(app.binding_sections())}
        for binding in LOADGEN_BINDINGS:
            assert binding.description in titles and binding.tooltip in described
        assert ("load generator", "!", LOADGEN_BINDINGS[5].tooltip) in binding_rows(
            app.binding_sections()
        )
        held = gen.settings.hold_tx
        await pilot.press("w", "W", "s", "t", "exclamation_mark", "z", "P")
        await pilot.pause()
        called = [c for c in gen.calls if c[0] != "start"]
        assert called == [
            ("add_worker",),
            ("remove_worker",),
            ("set_strategy", "nowait"),
            ("set_hold_tx", not held),
            ("crash_worker", 4),
            ("stall_worker", 15.0),
            ("pause_producer", True),
        ]
        messages = " | ".join(n.message for n in app._notifications)
        for text in (
            "5 wanted",
            "stopping queuetop-worker-4",
            describe("nowait", held),  # what the strategy now does, hold-tx as it was
            describe("nowait", not held),
            "queuetop-worker-4 (pid 4104) will exit hard",
            "idle in a transaction",
            "producer paused",
        ):
            assert text in messages
        await pilot.press("5")
        assert app.query_one("#tables").active == LOADGEN_TAB
        table = app.query_one(WorkersTable)
        assert app.focused is table and list(table.items) == ["k2", "k3", "k4", "k5"]
        assert table.cell_text("k4", "state") == "STALLED"
        assert "load generator" in dict(app.binding_sections())

    run(fixed_app(gen), body)
    assert gen.calls[-1] == ("stop",)  # leaving the app stops the workers


def test_double_claims_are_shouted():
    async def body(pilot):
        strip = str(pilot.app.query_one(LoadStrip).render())
        assert "DOUBLE CLAIMS 2" in strip

    run(fixed_app(FixedLoadGen(fixed_load_snapshot(double_claims=2))), body)


def rendered_lines(widget) -> list[str]:
    """The widget's content as plain lines, at its own width."""
    console = Console(width=widget.content_size.width, color_system=None)
    lines = console.render_lines(widget.content, console.options, pad=False)
    return ["".join(seg.text for seg in line).rstrip() for line in lines]


def test_latency_names_its_window_and_unit():
    async def body(pilot):
        await pilot.press("5")
        strip = str(pilot.app.query_one(LoadStrip).render())
        assert "claim p95 12.8 ms" in strip  # 120 columns: the window is panel 5's to name
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        assert "claim p95 (10s) 12.8 ms" in str(pilot.app.query_one(LoadStrip).render())
        lines = rendered_lines(pilot.app.query_one(LoadSummary))
        assert any(
            "claim time" in line and "last 10s" in line and "1.2 ms" in line for line in lines
        )
        assert any("12.8 ms" in line and "p99" in line and "1,421 ms" in line for line in lines)

    run(fixed_app(FixedLoadGen()), body)


STORY = ["for-update", "hold-tx on", "done 37.9/s", "claim p95", "12.8 ms", "waiting 3"]


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (60, 20), (160, 40)])
def test_the_strip_says_first_what_the_s_story_needs_and_fits(size):
    paused = replace(fixed_load_snapshot(), producer_paused=True)

    async def body(pilot):
        (line,) = rendered_lines(pilot.app.query_one(LoadStrip))
        story = STORY if size[0] >= 80 else STORY[:3]
        at = [line.index(text) for text in story]
        assert at == sorted(at), line
        if size[0] >= 120:  # the generator's own lock waits after the database's waiters
            assert line.index("waiting 3") < line.index("lock waits 3.5/s"), line
            assert "lock err 0.5/s" in line and "workers 3/4" in line, line
        if size[0] >= 160:
            assert "crashed 1" in line, line
        assert "…" not in line and len(line) <= size[0], line  # whole numbers, none cut

    run(fixed_app(FixedLoadGen(paused)), body, size=size)


def test_the_strip_fits_again_when_the_terminal_narrows():
    async def body(pilot):
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        (line,) = rendered_lines(pilot.app.query_one(LoadStrip))
        assert "waiting 3" in line and "…" not in line, line

    run(fixed_app(FixedLoadGen()), body, size=(200, 50))


def test_workers_show_their_current_session_and_enter_shows_them_in_words():
    async def body(pilot):
        app = pilot.app
        await pilot.press("5")
        table = app.query_one(WorkersTable)
        # reconnected: the session the stale-lease table tells apart from the lost one
        assert table.cell_text("k3", "name") == "queuetop-worker-3.2"
        assert table.cell_text("k5", "claimed") == "1,965"
        await pilot.press("down", "enter")
        await pilot.pause()
        detail = app.screen
        assert isinstance(detail, DetailScreen)
        text = "\n".join(rendered_lines(detail.query_one(Static)))
        assert "worker number 3 session queuetop-worker-3.2" in " ".join(text.split())
        counters = [" ".join(line.split()) for line in text.split("counters", 1)[1].splitlines()]
        assert counters[:5] == [
            "claimed 1,339",
            "claims 1,339",
            "completed 1,334",
            "failed 0",
            "dead 0",
        ]
        assert len(counters) == len(COUNTERS)
        assert "{" not in text and "'" not in text and "k 3" not in text

    run(fixed_app(FixedLoadGen()), body)


def test_an_error_sits_on_its_own_line_below_the_summary_grid():
    gen = FixedLoadGen()
    long_error = "producer: terminating connection due to administrator command " * 3

    async def body(pilot):
        app = pilot.app
        await pilot.press("5")
        summary = app.query_one(LoadSummary)
        clean = rendered_lines(summary)
        gen.snap = replace(gen.snap, errors=(long_error,))
        app.load.refresh()
        with_error = rendered_lines(summary)
        assert with_error[: len(clean)] == clean  # the grid's columns did not move
        assert with_error[len(clean)].startswith("! producer: terminating connection")
        assert with_error[len(clean)].endswith("…")
        assert len(with_error) == len(clean) + 1

    run(fixed_app(gen), body, size=(200, 50))


def test_a_lost_database_is_said_plainly_and_its_return_too():
    gen = FixedLoadGen()

    async def body(pilot):
        app = pilot.app
        await pilot.press("5")
        gen.snap = lost_database_load_snapshot()
        app.load.refresh()
        await pilot.pause()
        strip = str(app.query_one(LoadStrip).render())
        assert "DATABASE UNREACHABLE: reconnecting" in strip
        assert "workers 0/4" in strip and "producer reconnecting" in strip
        lines = rendered_lines(app.query_one(LoadSummary))
        assert "producer + 3 workers, retrying" in "\n".join(lines)
        assert lines[-1].strip().startswith("connection failed")
        table = app.query_one(WorkersTable)
        assert table.cell_text("k2", "state") == "retrying"
        assert table.cell_text("k5", "state") == "stopping"
        messages = " | ".join(n.message for n in app._notifications)
        assert "lost the database: connection failed" in messages

        gen.snap = fixed_load_snapshot()
        app.load.refresh()
        await pilot.pause()
        strip = str(app.query_one(LoadStrip).render())
        assert "UNREACHABLE" not in strip and "workers 3/4" in strip
        assert table.cell_text("k2", "state") == "alive"
        assert any(n.message == "reconnected" for n in app._notifications)

    run(fixed_app(gen), body)


def test_a_refresh_during_teardown_is_harmless():
    async def body(pilot):
        app = pilot.app
        await app.query_one("#tables").remove()  # as on exit: widgets go before the app
        app.load.refresh()  # the timer may still fire once

    run(fixed_app(FixedLoadGen()), body)


def worker_sessions(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        return conn.execute(WORKERS_SQL).fetchone()[0]


def running(pid: int | None) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, TypeError):
        return False


def test_demo_flow_for_update_pile_up_and_no_orphans(dsn):
    asyncio.run(_demo_flow_for_update_pile_up_and_no_orphans(dsn))


async def _demo_flow_for_update_pile_up_and_no_orphans(dsn):
    spec = demo_spec(dsn)
    settings = LoadSettings(workers=3, prefill=200, rate=30.0, work_ms=40.0, lease_s=10.0)
    gen = LoadGenerator(dsn, spec, settings)
    app = QueuetopApp(spec, dsn, interval=INTERVAL, loadgen=gen)
    pids: set[int] = set()
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.query_one(WorkersTable)
        await until(pilot, lambda: app.load.stats and app.load.stats.live_workers == 3, 30)
        await pilot.press("5")
        await until(pilot, lambda: len(table.items) == 3)
        # jobs flow: the database's done count rises, poll after poll
        await until(pilot, lambda: app.snapshot and app.snapshot.counts.get("done", 0) > 0)
        done = app.snapshot.counts["done"]
        await until(pilot, lambda: app.snapshot.counts["done"] > done + 10)
        assert "workers 3/3" in str(app.query_one(LoadStrip).render())

        await pilot.press("w")
        await until(pilot, lambda: app.load.stats.live_workers == 4, 30)
        await until(pilot, lambda: len(table.items) == 4)
        pids |= {w.pid for w in app.load.stats.workers}
        await pilot.press("W")
        await until(
            pilot, lambda: app.load.stats.live_workers == 3 and len(app.load.stats.workers) == 3, 30
        )

        # s: for-update alone (claims commit at once: no lasting pile-up); t: the claim
        # transaction held through the work, so everyone queues on one row
        await pilot.press("s")
        assert gen.settings.strategy == "for-update" and not gen.settings.hold_tx
        await pilot.press("t")
        assert gen.settings.hold_tx

        def piled_up():
            snap = app.snapshot
            roots = {w.chain[0] for w in snap.waiting if w.chain}
            return (
                len(snap.waiting) >= 2
                and len(roots) == 1
                and all(w.application_name.startswith("queuetop-worker-") for w in snap.waiting)
            )

        await until(pilot, piled_up, 20)
        await pilot.press("2")
        waiting = app.table("waiting")
        await until(
            pilot,
            lambda: any(" blocks " in waiting.row_texts(i)[0] for i in range(waiting.row_count)),
        )
        pids |= {w.pid for w in app.load.stats.workers}
        assert app.load.stats.double_claims == 0
    assert await asyncio.to_thread(gen.wait, 30)
    assert worker_sessions(dsn) == 0
    assert not [pid for pid in pids if running(pid)]
    assert gen.stats().double_claims == 0


def test_demo_command_starts_workers_and_stops_them_when_the_app_fails(dsn, monkeypatch):
    seen = {}

    def fake_run(app):  # the real app's lifecycle is tested above; here: the CLI's wiring
        gen = app.load.loadgen
        gen.start()  # what the mounted app does
        wait_until(lambda: gen.stats().live_workers == 2, timeout=30)
        wait_until(lambda: gen.stats().totals["completed"] > 0, timeout=10)
        seen.update(strategy=gen.settings.strategy, pids=[w.pid for w in gen.stats().workers])
        raise KeyboardInterrupt  # Ctrl-C, or any crash of the app

    monkeypatch.setattr(QueuetopApp, "run", fake_run)
    assert main(["demo", "--dsn", dsn, "--workers", "2", "--strategy", "nowait"]) == 130
    assert seen["strategy"] == "nowait" and len(seen["pids"]) == 2
    assert worker_sessions(dsn) == 0
    assert not [pid for pid in seen["pids"] if running(pid)]

    started = []
    monkeypatch.setattr(QueuetopApp, "run", lambda app: started.append(app.load))
    assert main(["demo", "--dsn", dsn, "--no-load"]) == 0
    assert started == [None]  # no load generator: no controls for one


def test_s_changes_only_the_strategy_and_t_only_the_held_transaction():
    """Issue 18 item 3: `s` once changed two things at once (for-update turned hold-tx on),
    so the demo taught that FOR UPDATE is slow, where the slowdown is the held claim."""
    gen = FixedLoadGen()
    gen.settings = LoadSettings(strategy="skip-locked", hold_tx=False)

    async def body(pilot):
        await pilot.press("s")
        assert (gen.settings.strategy, gen.settings.hold_tx) == ("for-update", False)
        await pilot.press("t")
        assert (gen.settings.strategy, gen.settings.hold_tx) == ("for-update", True)
        await pilot.press("s")
        assert (gen.settings.strategy, gen.settings.hold_tx) == ("nowait", True)
        messages = [n.message for n in pilot.app._notifications]
        assert messages[-1] == describe("nowait", True)
        await pilot.press("c")
        assert gen.calls[-1] == ("set_random_crashes", True)

    run(fixed_app(gen), body)


def test_read_only_hides_the_knobs_that_change_the_load():
    gen = FixedLoadGen()

    async def body(pilot):
        app = pilot.app
        knobs = ("add_worker", "cycle_strategy", "crash_worker", "toggle_producer")
        assert not any(app.check_action(k, ()) for k in knobs)
        assert app.check_action("show_loadgen", ())
        await pilot.press("w", "s", "t", "exclamation_mark", "z", "P", "c")
        await pilot.pause()
        assert [c for c in gen.calls if c[0] != "start"] == []

    run(fixed_app(gen, read_only=True), body)


def test_workers_show_their_backend_pid_and_their_os_pid_beside_it():
    async def body(pilot):
        await pilot.press("5")
        table = pilot.app.query_one(WorkersTable)
        # the backend pid is the one the lock, waiting and idle tables show
        assert table.cell_text("k2", "pid") == "4102" and table.cell_text("k2", "os_pid") == "7102"
        await pilot.press("enter")
        await pilot.pause()
        text = "\n".join(rendered_lines(pilot.app.screen.query_one(Static)))
        words = " ".join(text.split())
        assert "pid (database session) 4102 os pid (worker process) 7102" in words

    run(fixed_app(FixedLoadGen()), body)


def test_a_crash_names_its_worker_and_marks_the_stale_lease_it_made():
    crashes = (
        CrashReport(1, 4, "queuetop-worker-4", (1001,), by_knob=True, committed=True),
        CrashReport(2, 3, "queuetop-worker-3.2", (1002,), by_knob=False, committed=True),
        CrashReport(3, 2, "queuetop-worker-2", (1999,), by_knob=True, committed=False),
    )
    gen = FixedLoadGen(replace(fixed_load_snapshot(), crashes=crashes, lease_s=15.0))

    async def body(pilot):
        app = pilot.app
        await pilot.press("4")
        table = app.stale_table

        def worker(job: str) -> str:
            return table.values(job, table.items[job])[3]

        assert worker("1001") == "worker-1 (! crash)"
        assert worker("1002") == "worker-2 (random crash)"
        assert worker("1000") == "worker-0"
        shown = "\n".join(line.text for line in app.screen._compositor.render_strips())
        assert "worker-1 (! crash)" in shown and "worker-2 (random crash)" in shown
        messages = [str(n.message) for n in app._notifications]
        assert any(
            m.startswith("! crashed queuetop-worker-4: job 1001 stays running") and "15s lease" in m
            for m in messages
        ), messages
        assert not any("1002" in m for m in messages), messages  # random: tab 4 says it
        assert any(
            "queuetop-worker-2: its claim of job 1999 had not committed" in m for m in messages
        ), messages
        app.load.refresh()  # the same reports again: said once
        assert len(app._notifications) == len(messages)

    run(fixed_app(gen), body)
