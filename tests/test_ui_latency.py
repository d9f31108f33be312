"""The latency panel and the p95 wait plot, fed fixed latency values (tests/latency_fixtures.py):
their layout at 120x40 and 80x24, what they say where the spec cannot measure, a paced or
failed read, and an SVG snapshot. The numbers of a live poll against the rows themselves
are tests/test_ui_latency_live.py's."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta

import pytest
from latency_fixtures import (
    durations,
    fixed_latency,
    grouped_spec,
    latency_history,
    unmeasured_latency,
)
from ui_snapshots import fixed_history

from dashboard.models import GroupLatency
from dashboard.ui.app import QueuetopApp
from dashboard.ui.history import History
from dashboard.ui.widgets.latency_panel import LatencyPanel
from dashboard.ui.widgets.plot_axes import runs
from dashboard.ui.widgets.plots import P95WaitPlot

BRAILLE = range(0x2801, 0x2900)


def latency_app(snapshots=None, spec=None) -> QueuetopApp:
    return QueuetopApp(
        spec or grouped_spec(),
        None,
        poll=False,
        snapshots=latency_history() if snapshots is None else snapshots,
    )


def shown(size, snapshots=None, spec=None) -> tuple[list[str], list[str], object]:
    """The panel's lines, the screen's lines, and the app's p95 plot, at `size`."""

    async def go():
        app = latency_app(snapshots, spec)
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            panel = app.query_one(LatencyPanel)
            screen = [strip.text for strip in app.screen._compositor.render_strips()]
            lines = screen[panel.region.y : panel.region.bottom]
            plot = app.query_one(P95WaitPlot)
            drawn = [plot.render_line(y).text for y in range(plot.size.height)]
            return [line.strip() for line in lines], screen, (plot.display, drawn)

    return asyncio.run(go())


def cells(lines: list[str], name: str) -> list[str]:
    return next(line.split()[1:] for line in lines if line.split()[:1] == [name])


def with_latency(latency, points: int = 12):
    return [replace(s, latency=latency) for s in fixed_history(points)]


def test_latency_screen_snapshot(snap_compare):
    assert snap_compare(latency_app(), terminal_size=(120, 40))


def test_at_120x40_the_queue_then_the_busiest_groups_with_every_number():
    lines, _, (plot_shown, drawn) = shown((120, 40))
    assert lines[0].split()[:3] == ["Latency", "5m", "wait"]
    # the last poll's values (fixed_latency(11)): p95 wait 6.0 + 0.3 * 11 = 9.3 s;
    # 1858 finished in 300 s = 371.6 a minute; 15 of 1858 failed = 0.8 %
    assert cells(lines, "queue") == [
        "0.9s",
        "9.3s",
        "1m28s",
        "0.3s",
        "2.0s",
        "2m10s",
        "372",
        "0.8%",
    ]
    names = [line.split()[0] for line in lines[2:] if line]
    assert names == ["emails", "reports", "webhooks"]  # the most jobs finished first
    assert cells(lines, "reports") == [
        "12s",
        "1m35s",
        "3m04s",
        "35s",
        "2m20s",
        "4m50s",
        "7.6",
        "7.9%",
    ]
    # no job in the window: a dash for each percentile and for the failure share, never 0s
    assert cells(lines, "webhooks") == ["-"] * 6 + ["0.0", "-"]
    assert plot_shown and any(ord(c) in BRAILLE for line in drawn for c in line)


def test_at_80x24_one_line_for_the_queue_and_the_tables_keep_their_room():
    lines, screen, (plot_shown, _) = shown((80, 24))
    assert len(lines) == 1, lines
    assert lines[0] == "Latency 5m p50/95  wait 0.9s 9.3s  run 0.3s 2.0s  372/min  failed 0.8%"
    assert not plot_shown  # the small layout keeps the two plots of the demo's story
    header = next(i for i, line in enumerate(screen) if line.split()[:2] == ["pid", "held"])
    assert len(screen) - 1 - header - 1 >= 8  # eight table rows under the column titles


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
def test_what_the_spec_cannot_measure_is_said_where_the_numbers_would_be(size):
    latency = replace(unmeasured_latency(), finished_measured=False)
    lines, _, (plot_shown, drawn) = shown(size, with_latency(latency))
    text = " ".join(lines)
    assert text.count("not measured") == 3  # wait, run, and the finished jobs
    # the sentence whole (wrapped at spaces), never a blank or a 0 in its place
    assert " ".join(latency.missing[0].split()) in " ".join(text.split())
    queue = next(line for line in lines if line.startswith(("queue", "Latency 5m p")))
    assert not {"0", "0s", "0.0s", "0.0", "0/min", "0.0/min"} & set(queue.split()), queue
    if plot_shown:  # the plot says it in words, no line at 0
        words = " ".join(" ".join(drawn).split())
        assert "not measured" in words and not any(ord(c) in BRAILLE for c in words)


def test_a_paced_read_says_how_often_and_how_old():
    paced = "read every 30s, paced: no index serves the window's range on finished_at"
    snaps = [
        replace(
            s,
            latency=replace(
                fixed_latency(), paced=paced, read_at=s.taken_at - timedelta(seconds=40)
            ),
        )
        for s in fixed_history()
    ]
    lines, _, _ = shown((120, 40), snaps)
    text = " ".join(" ".join(lines).split())
    assert f"40s old, {paced}" in text
    assert cells(lines, "queue")[:2] == ["0.9s", "6.0s"]  # the last numbers still shown


def test_a_failed_read_keeps_the_last_numbers_and_says_why():
    error = "canceling statement due to statement timeout"
    snaps = [
        replace(
            s,
            latency=replace(
                fixed_latency(), error=error, read_at=s.taken_at - timedelta(seconds=12)
            ),
        )
        for s in fixed_history()
    ]
    lines, _, _ = shown((120, 40), snaps)
    assert f"! {error}; numbers 12s old" in " ".join(" ".join(lines).split())
    assert cells(lines, "queue")[1] == "6.0s"


def test_before_the_first_read_it_says_so():
    never = replace(fixed_latency(), error="not read yet", read_at=None)
    lines, _, (_, drawn) = shown((120, 40), with_latency(never))
    assert lines[0] == "Latency 5m: not read yet"
    assert "latency not read yet" in " ".join(" ".join(drawn).split())
    lines, _, _ = shown((120, 40), fixed_history())  # a snapshot with no latency at all
    assert lines == ["Latency: not in this snapshot"]


def test_more_groups_than_lines_are_counted_never_cut_silently():
    groups = tuple(
        GroupLatency(f"q{i}", durations(1.0, 2.0, 3.0), durations(1.0, 2.0, 3.0), 100 - i, 0)
        for i in range(8)
    )
    lines, _, _ = shown((120, 40), with_latency(replace(fixed_latency(), groups=groups)))
    assert [line.split()[0] for line in lines[2:4]] == ["q0", "q1"]
    assert lines[4].startswith("… 6 more groups")


def test_a_hostile_group_name_is_shown_escaped():
    evil = GroupLatency("\x1b[2Jmail", durations(1.0, 2.0, 3.0), None, 5, 0)
    lines, _, _ = shown((120, 40), with_latency(replace(fixed_latency(), groups=(evil,))))
    assert not any("\x1b" in line for line in lines)
    assert any(line.startswith("\\x1b[2Jmail") for line in lines), lines


def test_a_gap_in_the_p95_series_is_drawn_as_a_gap_never_as_zero():
    xs = [0.0, 2.0, 4.0, 6.0, 8.0]
    assert runs(xs, [1.0, None, None, 3.0, 4.0]) == [([0.0], [1.0]), ([6.0, 8.0], [3.0, 4.0])]
    assert runs(xs, [None] * 5) == []
    snaps = latency_history()
    snaps[5] = replace(snaps[5], latency=None)  # a poll that did not read it
    history = History()
    for snap in snaps:
        history.add(snap)
    assert [v is None for v in history.p95_wait_s] == [False] * 5 + [True] + [False] * 6
