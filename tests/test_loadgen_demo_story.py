"""Issue 18, items 3 and 4, at the load generator's level: the strategy and the held claim
transaction are independent knobs, each combination has its sentence, lock waits and lock
errors are per-second figures beside their totals, random crashes are off in the demo
unless asked for, and leases an earlier demo run left are requeued (guarded, audited) at
the next start. Checked against the server: pg_stat_activity, pgrowlocks, the table and
the audit log."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import psycopg
import pytest
from rich.console import Console
from textual.app import App
from ui_snapshots import fixed_load_snapshot

from dashboard import config, db
from dashboard.cli.dispatch import build_parser
from dashboard.cli.watch_commands import demo_loadgen
from dashboard.loadgen import LoadGenerator, LoadSettings
from dashboard.loadgen.demo import FIRST_RUN_HINT, RANDOM_CRASH_RATE, describe
from dashboard.loadgen.stats import RATE_WINDOW_S
from dashboard.loadgen.strategies import STRATEGIES
from dashboard.setup import schema
from dashboard.ui.widgets.loadgen_panel import LoadStory, LoadSummary
from tests.helpers import wait_until

# a worker sitting in its claim transaction while it works, holding its row
HELD = """
SELECT count(*) FROM pg_stat_activity
WHERE application_name LIKE 'queuetop-worker-%' AND state = 'idle in transaction'
"""


@pytest.fixture
def demo_spec(dsn):
    with psycopg.connect(dsn) as conn:
        schema.init_demo(conn)
    with db.connect_monitor(dsn) as conn:
        return config.validate(conn, config.load_preset("demo"))


def test_each_combination_has_its_own_sentence_and_the_hint_names_s():
    sentences = {describe(s, h) for s in STRATEGIES for h in (False, True)}
    assert len(sentences) == 2 * len(STRATEGIES)
    assert "tab 2" in describe("for-update", True) and "waiting" in describe("for-update", True)
    # four busy workers and `running 0`: the sentence says why
    assert "uncommitted claims still read ready" in describe("for-update", True)
    assert "committed at once" in describe("for-update", False)
    assert all(len(s) <= 160 for s in sentences)  # two lines of an 80-column screen
    assert "s changes" in FIRST_RUN_HINT and "t holds" in FIRST_RUN_HINT
    assert len(FIRST_RUN_HINT) <= 78  # one line of an 80-column screen, whole


def test_the_strategy_knob_leaves_the_transaction_alone_and_the_other_way_round(
    dsn, demo_spec, connect
):
    settings = LoadSettings(workers=3, work_ms=60.0, prefill=3000, strategy="skip-locked")
    observer = connect(autocommit=True)
    observer.execute("CREATE EXTENSION IF NOT EXISTS pgrowlocks")
    with LoadGenerator(dsn, demo_spec, settings) as gen:
        wait_until(lambda: gen.stats().totals["completed"] >= 5, timeout=30)
        gen.set_strategy("for-update")
        wait_until(lambda: gen.stats().strategy == "for-update", timeout=5)
        assert gen.settings.hold_tx is False
        # for-update alone holds nothing while working: nobody idles in a transaction
        base = gen.stats().totals["completed"]
        wait_until(lambda: gen.stats().totals["completed"] >= base + 10, timeout=30)
        samples = [observer.execute(HELD).fetchone()[0] for _ in range(30)]
        assert samples == [0] * 30, samples
        gen.set_hold_tx(True)
        assert gen.settings.strategy == "for-update"
        # now the claim transaction stays open through the work, holding the claimed row
        wait_until(lambda: observer.execute(HELD).fetchone()[0] >= 1, timeout=15)
        rows = observer.execute("SELECT count(*) FROM pgrowlocks('queuetop_demo.jobs')").fetchone()[
            0
        ]
        assert rows >= 1
        assert gen.stats().strategy == "for-update" and gen.stats().hold_tx is True


def test_lock_errors_are_a_rate_that_falls_back_while_the_total_stays(dsn, demo_spec, connect):
    # a ready job ahead of every other (the claim's order: priority, then id), locked before
    # the workers start: every nowait claim meets it, however fast they drain the rest
    # (locked once the workers ran, the first ready row could be gone already: under the
    # full suite the 500 jobs were done before it was locked, and no error came)
    (job,) = (
        connect(autocommit=True)
        .execute(
            "INSERT INTO queuetop_demo.jobs (status, priority) VALUES ('ready', 1000000) "
            "RETURNING id"
        )
        .fetchone()
    )
    holder = connect()
    assert holder.execute(
        "SELECT id FROM queuetop_demo.jobs WHERE id = %s FOR UPDATE", (job,)
    ).fetchone()
    settings = LoadSettings(workers=2, work_ms=5.0, prefill=500, strategy="nowait")
    with LoadGenerator(dsn, demo_spec, settings) as gen:
        wait_until(lambda: gen.stats().live_workers == 2, timeout=30)
        snap = wait_until(lambda: (s := gen.stats()).lock_errors_per_s > 0 and s, timeout=20)
        assert snap.totals["nowait_errors"] == snap.totals["lock_errors"] > 0
        holder.rollback()  # the row is free: no more errors, the rate goes back to 0
        after = wait_until(
            lambda: (s := gen.stats()).lock_errors_per_s == 0 and s,
            timeout=RATE_WINDOW_S * 10,
        )
        assert after.totals["lock_errors"] >= snap.totals["lock_errors"] > 0
        assert after.lock_waits_per_s == 0  # nowait never waits


def parse_demo(*argv: str):
    return build_parser().parse_args(["demo", *argv])


def test_random_crashes_are_off_in_the_demo_unless_asked_for(dsn, demo_spec):
    quiet = demo_loadgen(dsn, demo_spec, parse_demo("--dsn", dsn))
    assert quiet.settings.crash_rate == 0.0
    chaos = demo_loadgen(dsn, demo_spec, parse_demo("--dsn", dsn, "--chaos"))
    assert chaos.settings.crash_rate == RANDOM_CRASH_RATE
    chaos.set_random_crashes(False)
    assert chaos.settings.crash_rate == 0.0


def test_leases_an_earlier_demo_run_left_are_requeued_and_audited_at_start(dsn, demo_spec, connect):
    conn = connect(autocommit=True)
    conn.execute(
        "INSERT INTO queuetop_demo.jobs (status, worker, lease_token, attempts, started_at, "
        "leased_until) SELECT 'running', 'queuetop-worker-' || g, 1, 1, now() - interval '1 min', "
        "now() - interval '30 s' FROM generate_series(1, 3) g"
    )
    conn.execute(  # a lease still running: maybe a live worker's, left alone
        "INSERT INTO queuetop_demo.jobs (status, worker, lease_token, attempts, started_at, "
        "leased_until) VALUES ('running', 'someone-else', 1, 1, now(), now() + interval '1 h')"
    )
    gen = demo_loadgen(dsn, demo_spec, parse_demo("--dsn", dsn))
    states = dict(
        conn.execute(
            "SELECT worker IS NULL AND status = 'ready', count(*) FROM queuetop_demo.jobs "
            "GROUP BY 1"
        ).fetchall()
    )
    assert states == {True: 3, False: 1}
    audited = conn.execute(
        "SELECT count(*) FROM queuetop.audit_log WHERE reason LIKE '%earlier demo run%'"
    ).fetchone()[0]
    assert audited == 3
    (note,) = gen.stats().notes
    assert "requeued 3 stale leases" in note and "1 running job" in note


# --- what the widgets under the strip say (dashboard/ui/widgets/loadgen_panel.py) ----------


def test_the_story_line_names_s_until_a_knob_changes_then_keeps_the_sentence():
    def lines(widget) -> list[str]:
        console = Console(width=widget.content_size.width, color_system=None)
        rendered = console.render_lines(widget.content, console.options, pad=False)
        return ["".join(seg.text for seg in line).rstrip() for line in rendered]

    class StoryApp(App):
        def compose(self):
            yield LoadStory()
            yield LoadSummary()

    async def body():
        app = StoryApp()
        async with app.run_test(size=(120, 30)) as pilot:
            story, summary = app.query_one(LoadStory), app.query_one(LoadSummary)
            first = replace(fixed_load_snapshot(), strategy="skip-locked", hold_tx=False)
            story.show(first)
            summary.show(replace(first, notes=("requeued 2 stale leases an earlier run left",)))
            await pilot.pause()
            shown = lines(story)
            assert "s changes" in shown[0] and shown[1].startswith("skip-locked, claim committed")
            assert any("requeued 2 stale leases" in line for line in lines(summary))
            assert any("waits total" in line for line in lines(summary))  # totals say so
            story.show(replace(first, strategy="for-update", hold_tx=True))
            await pilot.pause()
            text = " ".join(lines(story))
            assert "s changes" not in text and "tab 2" in text and "waiting" in text
            story.show(first)  # back where it started: the hint stays gone
            await pilot.pause()
            assert "s changes" not in " ".join(lines(story))

    asyncio.run(body())
