"""The state panel: the scheduled role, per-group lines, and a short panel keeping every
role's number (the column titles give way first)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from ui_snapshots import demo_spec, fixed_snapshot

from dashboard.models import ROLES, GroupStats
from dashboard.ui.app import QueuetopApp
from dashboard.ui.widgets.state_panel import StatePanel


def with_groups(snap):
    groups = (
        GroupStats("emails", 900, 12, 5, 2, 42.0, 0),
        GroupStats("reports", 340, 0, 3, 0, 8.0, 2),
    )
    counts = {**snap.counts, "scheduled": 12}
    return replace(snap, groups=groups, roles=ROLES, counts=counts)


def panel_text(size) -> str:
    async def go():
        app = QueuetopApp(demo_spec(), None, poll=False, snapshots=[with_groups(fixed_snapshot())])
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            return str(app.query_one(StatePanel).render())

    return asyncio.run(go())


def test_groups_and_the_scheduled_role_on_a_tall_panel():
    text = panel_text((120, 40))
    lines = text.splitlines()
    assert lines[0].startswith("role")
    assert any(line.startswith("schedul") and " 12 " in line for line in lines)
    group_rows = [line for line in lines if line.startswith(("emails", "reports"))]
    # the busiest first; the group with stale leases says so
    assert [row.split()[0] for row in group_rows] == ["emails", "reports"]
    assert group_rows[1].split()[1:5] == ["340", "0", "3", "2"]


def test_a_short_panel_keeps_all_six_roles_and_the_oldest_age():
    text = panel_text((80, 24))
    lines = text.splitlines()
    assert [line.split()[0][:7] for line in lines[:6]] == [r[:7] for r in ROLES]
    assert any(line.startswith("oldest ready") for line in lines)
