"""The dashboard's compositor sends the terminal what Textual's full render shows.

A model terminal (cells written where the cursor is moved) is given every update the main
screen's compositor produces while snapshots change rows, counts, plots and the header and
while tabs are switched; after each repaint its cells must equal a full render of the
screen, cell by cell (character and style). It starts from a full render, so a line the
partial update should have sent and did not shows as a stale cell.
"""

from __future__ import annotations

import asyncio

from rich.cells import cell_len
from rich.segment import ControlType, Segment
from ui_snapshots import demo_spec, fixed_snapshot

from dashboard.ui.app import QueuetopApp
from dashboard.ui.forks import switched_off
from dashboard.ui.forks.line_compositor import LineCompositor


class ModelTerminal:
    """Cells of a screen, written by segments as a terminal would be."""

    def __init__(self, width: int, height: int) -> None:
        self.cells = [[(" ", None)] * width for _ in range(height)]
        self.x = self.y = 0

    def write(self, segments) -> None:
        for segment in segments:
            if segment.control:
                for code in segment.control:
                    if code[0] == ControlType.CURSOR_MOVE_TO:
                        self.x, self.y = code[1], code[2]
                continue
            for char in segment.text:
                if char == "\n":
                    self.x, self.y = 0, self.y + 1
                    continue
                self.cells[self.y][self.x] = (char, segment.style)
                self.x += max(cell_len(char), 1)


def cells_of(strips, width: int) -> list[list[tuple[str, object]]]:
    rows = []
    for strip in strips:
        row = [(char, seg.style) for seg in strip for char in seg.text]
        rows.append((row + [(" ", None)] * width)[:width])
    return rows


def differences(model: ModelTerminal, expected) -> list[str]:
    return [
        f"line {y} column {x}: sent {got!r}, full render {want!r}"
        for y, (got_row, want_row) in enumerate(zip(model.cells, expected, strict=True))
        for x, (got, want) in enumerate(zip(got_row, want_row, strict=True))
        if got != want
    ]


def test_partial_updates_leave_the_terminal_as_a_full_render_would():
    app = QueuetopApp(demo_spec(), None, poll=False, snapshots=[fixed_snapshot(0, rows=3)])
    width, height = 160, 45
    sent: list = []

    async def go():
        async with app.run_test(size=(width, height)) as pilot:
            await pilot.pause()
            screen = app.screen
            compositor = screen._compositor
            # QUEUETOP_STOCK_UI (the compositor piece off): Textual's own, held to the same bar
            assert isinstance(compositor, LineCompositor) != switched_off("compositor")
            render_update = compositor.render_update

            def captured(*args, **kwargs):
                update = render_update(*args, **kwargs)
                if update is not None:
                    sent.append(update)
                return update

            compositor.render_update = captured
            model = ModelTerminal(width, height)
            model.cells = cells_of(compositor.render_strips(), width)
            console = app.console
            partial = 0
            steps = [(1, 3), (2, 6), (3, 6), (4, 30), (5, 2), (6, 2), (7, 12), (8, 12)]
            for index, (step, rows) in enumerate(steps):
                if index in (2, 5):  # another tab: a different table in the lower half
                    await pilot.press(str(index))
                app.apply_snapshot(fixed_snapshot(step, rows=rows))
                await pilot.pause()
                await pilot.pause()
                for update in sent:
                    partial += type(update).__name__ == "ChopsUpdate"
                    model.write(update.__rich_console__(console, console.options))
                sent.clear()
                expected = cells_of(compositor.render_strips(), width)
                wrong = differences(model, expected)
                assert not wrong, f"after step {step}: {len(wrong)} cells differ, " + "; ".join(
                    wrong[:5]
                )
            assert partial >= len(steps) // 2  # the partial path was the one exercised

    asyncio.run(go())


def test_the_model_terminal_sees_a_line_left_out():
    """The check above can fail: a partial update that drops a changed line leaves cells
    that differ from the full render."""
    model = ModelTerminal(4, 2)
    model.write([Segment("abcd"), Segment("\n"), Segment("efgh")])
    expected = [[(c, None) for c in "abcd"], [(c, None) for c in "efgX"]]
    assert differences(model, expected) == [
        "line 1 column 3: sent ('h', None), full render ('X', None)"
    ]
