"""The README's picture, docs/pile-up.svg, is what the dashboard draws now: the demo's queue
for a minute, skip-locked and then a held FOR UPDATE pile-up (tests/pile_up.py's scene),
rendered at 120x40 on the waiting-sessions tab. Regenerate it with QUEUETOP_UPDATE_DOCS=1
(docs/development.md)."""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from latency_fixtures import durations
from pile_up import pile_up_snapshot
from ui_snapshots import T0, demo_spec

from dashboard.models import GroupLatency, Latency, Snapshot
from dashboard.ui.app import QueuetopApp

ROOT = Path(__file__).resolve().parent.parent
PICTURE = ROOT / "docs" / "pile-up.svg"
SIZE = (120, 40)
TITLE = "queuetop demo: a held FOR UPDATE pile-up"
FRAMES = 31  # a minute at the demo's 2 s interval, the last one tests/pile_up.py's scene
PILE_UP_FROM = 15  # the frame where `s` and `t` made the claim a held FOR UPDATE


def latency_at(piled: float, taken_at) -> Latency:
    """The last five minutes' waits and runs: skip-locked's (waits of a few ms behind a
    flat backlog), then, as the pile-up grows (`piled` from 0 to 1), waits climbing."""
    done = int(41 * 300 * (1 - piled) + 12 * 300 * piled)
    wait = durations(0.02 + 0.9 * piled, 0.3 + 31.0 * piled, 0.5 + 40.0 * piled, done)
    run = durations(0.012, 0.024 + 0.3 * piled, 0.05 + 1.3 * piled, done)
    queue = GroupLatency(None, wait, run, done, int(done * 0.004))
    return Latency(300.0, queue, read_at=taken_at)


def pile_up_minute() -> list[Snapshot]:
    """Half a minute of held skip-locked (about 41 jobs/s done, the backlog flat, nobody
    waiting), then held FOR UPDATE: 12 jobs/s, the backlog and its oldest age growing,
    three sessions waiting behind one. Only what the plots read changes before the last."""
    last = pile_up_snapshot()
    frames = []
    for step in range(FRAMES):
        piled = max(step - PILE_UP_FROM, 0)  # frames since the pile-up began
        before = min(step, PILE_UP_FROM)
        after_all = FRAMES - 1 - PILE_UP_FROM
        done = last.counts["done"] - 24 * (after_all - piled) - 82 * (PILE_UP_FROM - before)
        ready = last.counts["ready"] - 56 * (after_all - piled) + (0, 6, -4, 3)[step % 4]
        counts = {**last.counts, "done": done, "ready": ready}
        if step == FRAMES - 1:
            counts = last.counts
        taken_at = T0 - timedelta(seconds=2 * (FRAMES - 1 - step))
        frames.append(
            replace(
                last,
                taken_at=taken_at,
                latency=latency_at(piled / after_all, taken_at),
                counts=counts,
                by_status=counts,
                oldest_ready_age_s=10.0 + 32.0 * piled / after_all,
                waiting=last.waiting if piled else (),
            )
        )
    return frames


def render() -> str:
    async def go() -> str:
        app = QueuetopApp(demo_spec(), None, poll=False, snapshots=pile_up_minute())
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("2")  # waiting sessions: the blocker and its waiters
            await pilot.pause()
            return app.export_screenshot(title=TITLE)

    return normalise(asyncio.run(go()))


def normalise(svg: str) -> str:
    """The SVG without what may differ from run to run: Rich names its CSS classes and clip
    paths after a hash of the screen (`terminal-2504847006-r1`); every other byte (text,
    colours, geometry) stays, so a picture that shows anything else differs."""
    return re.sub(r"\bterminal-\d+-", "terminal-", svg)


def first_difference(expected: str, actual: str) -> str:
    for n, (a, b) in enumerate(zip(expected.splitlines(), actual.splitlines(), strict=False)):
        if a != b:
            return f"line {n + 1}:\n  committed: {a[:200]}\n  rendered:  {b[:200]}"
    return f"{len(expected.splitlines())} lines committed, {len(actual.splitlines())} rendered"


def test_the_docs_picture_is_what_the_dashboard_draws():
    rendered = render()
    if os.environ.get("QUEUETOP_UPDATE_DOCS") == "1":
        PICTURE.parent.mkdir(exist_ok=True)
        PICTURE.write_text(rendered)
    assert PICTURE.exists(), f"{PICTURE} is missing: run this test with QUEUETOP_UPDATE_DOCS=1"
    committed = normalise(PICTURE.read_text())
    assert committed == rendered, (
        "docs/pile-up.svg is not what the dashboard draws now; if the change is meant, "
        "regenerate it: QUEUETOP_UPDATE_DOCS=1 .venv/bin/python -m pytest -n 0 "
        "tests/test_docs_picture.py\n" + first_difference(committed, rendered)
    )


def test_the_picture_shows_the_pile_up():
    text = PICTURE.read_text()
    for words in ("4101 blocks 1", "waits 11406 holds 11405", "Lock:tuple", "Waiting (queue) 3"):
        assert words.replace(" ", "&#160;") in text or words in text, words


def test_normalising_keeps_every_difference_but_the_ids():
    svg = PICTURE.read_text()
    assert normalise(svg.replace("terminal-", "terminal-123-")) == normalise(svg)
    for change in (("4101", "4109"), ("#0178d4", "#0178d5"), ('width="', 'width="1')):
        assert change[0] in svg, change
        assert normalise(svg.replace(*change, 1)) != normalise(svg), change


def test_the_readme_shows_the_picture():
    assert "](docs/pile-up.svg)" in (ROOT / "README.md").read_text()
