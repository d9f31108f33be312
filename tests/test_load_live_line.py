"""`queuetop load`'s live line fits the terminal: the least needed numbers leave first, the
ones that tell the story stay, and it never reaches the last column (where it would wrap)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from ui_snapshots import fixed_load_snapshot, lost_database_load_snapshot

from dashboard.cli.load_command import live_line
from dashboard.render.fit import kept

FIRST = ("workers 3/4", "done/s 37.9", "claim p95 (10s) 12.8ms")


@pytest.mark.parametrize("width", [120, 100, 80, 60])
def test_the_live_line_fits_the_terminal_and_keeps_what_matters(width):
    line = live_line(fixed_load_snapshot(), width)
    assert len(line) <= width - 1, (width, line)
    for part in FIRST:
        assert part in line, (width, line)
    assert not line.endswith(" ")


def test_at_120_columns_lock_waits_per_second_and_crashed_stay():
    line = live_line(replace(fixed_load_snapshot(), lock_waits_per_s=2.5), 120)
    assert "lock waits/s 2.5" in line and "crashed 1" in line
    assert "lock waits total" not in line  # the running total is the first to leave


def test_without_a_terminal_the_line_has_everything():
    line = live_line(replace(fixed_load_snapshot(), lock_errors_per_s=0.5))
    for part in (
        *FIRST,
        "lock waits/s 3.5",
        "lock errors/s 0.5",
        "lock waits total 28",
        "lock errors total 3",
        "crashed 1",
        "double claims 0",
        "rescue off",
        "failed 9",
    ):
        assert part in line


def test_double_claims_are_never_dropped_once_there_are_any():
    snap = fixed_load_snapshot(double_claims=2)
    assert "double claims 2" in live_line(snap, 80)
    assert "double claims" not in live_line(fixed_load_snapshot(), 80)


def test_reconnecting_is_said_even_on_a_narrow_terminal():
    line = live_line(lost_database_load_snapshot(), 80)
    assert "RECONNECTING 4: connection failed" in line and len(line) <= 79


def test_kept_drops_the_highest_rank_rightmost_first_and_never_rank_0():
    assert kept([5, 5, 5, 5], [0, 1, 1, 2], room=19) == [0, 1, 2]
    assert kept([5, 5, 5, 5], [0, 1, 1, 2], room=12) == [0, 1]
    assert kept([50, 5], [0, 1], room=10) == [0]
