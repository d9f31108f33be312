"""The demo's first screen at 80x24 and 120x40: the first-run hint and the strategy's
sentence whole (both were cut to a line each: '… t holds the claim transactio…'), and the
strip keeping what the sentence points to (a held for-update's pointed to 'lock waits/s',
which 80 columns dropped: it points to 'waiting' now; nowait's 'lock errors/s' is kept)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from test_ui_loadgen import fixed_app
from ui_snapshots import FixedLoadGen, fixed_load_snapshot

from dashboard.loadgen.demo import FIRST_RUN_HINT, describe

SIZES = [(80, 24), (120, 40)]


def screen_text(app) -> str:
    """The screen as one string, lines joined without their ends (a wrapped sentence reads
    on)."""
    lines = [line.text.rstrip() for line in app.screen._compositor.render_strips()]
    return " ".join(" ".join(lines).split())


def starting(strategy: str, hold_tx: bool) -> FixedLoadGen:
    return FixedLoadGen(replace(fixed_load_snapshot(), strategy=strategy, hold_tx=hold_tx))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_hint_and_the_sentence_are_whole_at_start(size):
    async def go():
        app = fixed_app(starting("skip-locked", False))
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            shown = screen_text(app)
            assert FIRST_RUN_HINT in shown
            assert " ".join(describe("skip-locked", False).split()) in shown
            assert "…" not in shown.split(FIRST_RUN_HINT)[1][:200]

    asyncio.run(go())


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize(
    ("strategy", "named"), [("for-update", "waiting 3"), ("nowait", "lock err")]
)
def test_the_strip_keeps_the_rate_the_sentence_names(size, strategy, named):
    async def go():
        app = fixed_app(starting(strategy, True))
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            strip = str(app.query_one("#loadgen-strip").render())
            assert named in strip and "…" not in strip, strip

    asyncio.run(go())


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_demo_start_snapshot(snap_compare, size):
    assert snap_compare(fixed_app(starting("skip-locked", False)), terminal_size=size)
