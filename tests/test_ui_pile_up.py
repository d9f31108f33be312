"""The main screen during a for-update pile-up (a fixed snapshot): the locks tab puts the
rows held, the waits and the places in the row's queue first, the ordinary table locks
folded; the waiting tab reads as a tree whose waiter that moved on is holder and waiter."""

from __future__ import annotations

import asyncio

import pytest
from pile_up import pile_up_snapshot
from ui_snapshots import demo_spec

from dashboard.ui.app import QueuetopApp


def pile_up_app() -> QueuetopApp:
    return QueuetopApp(demo_spec(), None, poll=False, snapshots=[pile_up_snapshot()])


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
@pytest.mark.parametrize("tab", ["1", "2"])
def test_pile_up_snapshot(snap_compare, size, tab):
    assert snap_compare(pile_up_app(), terminal_size=size, press=[tab])


def footer_says(app, key: str) -> str:
    """What the footer offers for `key` now (the enabled binding's description)."""
    [active] = [a for k, a in app.screen.active_bindings.items() if k == key and a.enabled]
    return active.binding.description


def cells(table, index: int) -> dict[str, str]:
    return dict(zip([c.key for c in table.COLUMNS], table.row_texts(index), strict=True))


def test_pile_up_tables_read_as_the_sessions_are():
    async def go():
        app = pile_up_app()
        async with app.run_test(size=(160, 40)) as pilot:
            await pilot.pause()
            locks = app.table("locks")
            rows = [cells(locks, i) for i in range(locks.row_count)]
            kinds = [(r["pid"].strip(), r["granted"].strip(), r["type"].strip()) for r in rows]
            assert kinds[:2] == [("4101", "yes", "row locks"), ("4102", "yes", "row locks")]
            assert [k[1] for k in kinds[2:5]] == ["WAIT"] * 3
            assert kinds[5] == ("4102", "first", "row queue")
            assert [k[2] for k in kinds[6:]] == ["table locks"] * 4  # one per session
            await pilot.press("1")
            assert footer_says(app, "f") == "Unfold locks"
            await pilot.press("f")  # every lock, one per line
            assert locks.row_count == 6 + 4 * 3 + 2 * 2
            assert footer_says(app, "f") == "Fold locks"  # it said Fold locks unfolded too
            await pilot.press("f")
            assert locks.row_count == 10
            assert footer_says(app, "f") == "Unfold locks"
            waiting = app.table("waiting")
            jobs = {
                cells(waiting, i)["session"].strip(): cells(waiting, i)["jobs"].strip()
                for i in range(waiting.row_count)
            }
            assert jobs == {
                "4101 blocks 1": "holds 11406",
                "└ 4102": "waits 11406 holds 11405",
                "└ 4103": "waits 11406",
                "└ 4104": "waits 11406",
            }

    asyncio.run(go())
