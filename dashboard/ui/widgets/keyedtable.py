"""A table of one-line rows keyed by pid or job id, drawn line by line.

A refresh only replaces the table's rows (key, item) in display order: nothing is
formatted then. A line is rendered when it is painted, from the values its item gives
then, and kept until those values change; rows out of sight cost nothing, so a table of
thousands of rows refreshes in the time a screenful takes. The cursor follows its key.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from dashboard.ui.widgets.columns import Col, fit, fit_columns, justify

__all__ = ["Col", "KeyedTable", "fit", "fit_columns"]

BLANK = (-1, None, False)  # what a line past the rows was painted with


def _runs(lines: list[int]) -> list[tuple[int, int]]:
    """Ascending line numbers as (first, count) runs of consecutive lines."""
    runs: list[tuple[int, int]] = []
    for y in lines:
        if runs and runs[-1][0] + runs[-1][1] == y:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((y, 1))
    return runs


class KeyedTable(ScrollView, can_focus=True):
    """Rows replaced wholesale by set_rows; cursor and scroll position survive.

    Subclasses define COLUMNS, turn a snapshot into ordered (key, item) and say in
    `values` what each column shows for an item; `cell_style` may colour a cell.
    """

    COLUMNS: tuple[Col, ...] = ()
    TITLE = ""
    SHORT_TITLE = ""
    PADDING = 1  # cells on each side of a column

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Details", show=False),
        Binding("up", "cursor_up", "Up", show=False),
        Binding("down", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "first_row", "First row", show=False),
        Binding("end", "last_row", "Last row", show=False),
        Binding("left", "scroll_left", "Scroll left", show=False),
        Binding("right", "scroll_right", "Scroll right", show=False),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "keyedtable--header",
        "keyedtable--cursor",
        "keyedtable--even-row",
    }
    DEFAULT_CSS = """
    KeyedTable {
        background: $surface;
        color: $foreground;
        &:focus {
            background-tint: $foreground 5%;
            & > .keyedtable--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
        }
        & > .keyedtable--header {
            text-style: bold;
            background: $panel;
            color: $foreground;
        }
        & > .keyedtable--even-row {
            background: $surface-lighten-1 50%;
        }
        &:dark > .keyedtable--even-row {
            background: $surface-darken-1 40%;
        }
        & > .keyedtable--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
    }
    """

    class RowSelected(Message):
        """Enter (or a click on the cursor row): show the whole row."""

        def __init__(self, table: KeyedTable, key: str, item: Any) -> None:
            super().__init__()
            self.table = table
            self.key = key
            self.item = item

        @property
        def control(self) -> KeyedTable:
            return self.table

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.items: dict[str, Any] = {}
        self._keys: list[str] = []  # display order
        self._index: dict[str, int] = {}
        self._lines: dict[str, tuple[tuple, Strip]] = {}  # key -> (raw, rendered line)
        # line in view -> (row index, its key, painted as the cursor); BLANK past the rows
        self._painted: dict[int, tuple[int, Hashable, bool]] = {}
        self.cursor_row = 0
        self._styles: tuple[Style, Style, Style, Style] | None = None
        self._layout: list[tuple[int, int]] = []
        self._set_layout(sum(c.width + 2 * self.PADDING for c in self.COLUMNS))

    def _set_layout(self, room: int) -> None:
        """Choose the columns for `room` cells; lines drawn for other columns are dropped."""
        layout = fit_columns(self.COLUMNS, room, self.PADDING)
        if layout == self._layout:
            return
        self._layout = layout
        pad = " " * self.PADDING
        self._width = sum(w + 2 * self.PADDING for _, w in layout)
        self._header = Strip(
            [
                Segment(pad + justify(fit(self.COLUMNS[i].label, w), self.COLUMNS[i], w) + pad)
                for i, w in layout
            ],
            self._width,
        )
        self._lines.clear()
        self.virtual_size = self._lines_size()
        self.refresh()

    def _lines_size(self) -> Size:
        """The table's virtual size: its header and rows, but never fewer lines than a page
        of rows. A new virtual size lays the whole screen out again (7-9 ms of the
        client's CPU each, timed in `queuetop watch`); the demo's locks table went from 1
        row to 3 and back several times a minute. While the rows fit, a row more or less
        changes nothing outside the table; past its view the size is exact (the
        scrollbar). (A page, not the whole view: at the view's own size Textual would not
        look at the scrollbar again when the rows shrink back into view.)"""
        return Size(self._width, max(len(self._keys) + 1, self.page_rows))

    def on_resize(self) -> None:
        # the vertical scrollbar's columns are kept free: rows coming and going must not
        # change which columns show
        self._set_layout(self.size.width - self.styles.scrollbar_size_vertical)
        size = self._lines_size()
        if size != self.virtual_size:
            self.virtual_size = size

    def shown_columns(self) -> list[str]:
        return [self.COLUMNS[i].key for i, _ in self._layout]

    # --- reading ------------------------------------------------------------------------------

    @property
    def shown(self) -> bool:
        """Displayed, it and every container above it (an inactive tab's table is not)."""
        return all(node.display for node in self.ancestors_with_self)

    @property
    def row_count(self) -> int:
        return len(self._keys)

    def count(self) -> int:
        """What the tab label counts: the rows, unless a table says otherwise."""
        return len(self._keys)

    def cursor_key(self) -> str | None:
        """The row key under the cursor, if any."""
        return self._keys[self.cursor_row] if self._keys else None

    def cursor_item(self) -> Any:
        key = self.cursor_key()
        return self.items.get(key) if key is not None else None

    def get_row_index(self, key: str) -> int:
        return self._index[key]

    def row_texts(self, index: int) -> list[str]:
        """The cells of a row as shown (cut to their columns, unpadded)."""
        key = self._keys[index]
        values = self.values(key, self.items[key])
        return [fit(v, c.width, c.middle) for c, v in zip(self.COLUMNS, values, strict=True)]

    def cell_text(self, key: str, column: str) -> str:
        """One cell as shown."""
        index = next(i for i, c in enumerate(self.COLUMNS) if c.key == column)
        return self.row_texts(self._index[key])[index]

    # --- changing -----------------------------------------------------------------------------

    def set_rows(self, rows: Iterable[tuple[Hashable, Any]]) -> None:
        """Replace the rows: (key, item) in display order, keys unique (any hashable:
        a pid, a job id, a lock group)."""
        items = dict(rows)
        if not items and not self._keys:  # empty and still empty (most tables, most polls)
            return
        keep, keep_index = self.cursor_key(), self.cursor_row
        was_visible = self._row_visible(keep_index)
        self.items = items
        self._keys = list(self.items)
        self._index = {key: i for i, key in enumerate(self._keys)}
        for key in [k for k in self._lines if k not in self._index]:
            del self._lines[key]
        keys = self._keys
        if keep is not None and keep in self._index:
            self.cursor_row = self._index[keep]
        else:
            self.cursor_row = max(0, min(keep_index, len(keys) - 1))
        shown = self.shown
        size = self._lines_size()
        if size != self.virtual_size:
            # as Textual's own widgets set it (a fork that skipped the screen's layout here
            # bought nothing measurable: 0.97x with it off, bench/vs_pg_activity.py --pieces)
            self.virtual_size = size
        if was_visible and not self._row_visible(self.cursor_row):
            self._scroll_to_cursor()
        if not shown:
            return  # a hidden table is painted whole when it is shown
        self._refresh_changed_lines()

    def _refresh_changed_lines(self) -> None:
        """Repaint only the lines in view that would show something else than they were
        painted with: another row (or none), the cursor coming or going, new values. A
        table whose rows did not change paints nothing; a row that comes or goes repaints
        the lines from it down to the last row, not the blank lines under them (the
        demo's locks table, its rows coming and going every few seconds, sent its whole
        page of blank lines to the terminal each time)."""
        top = round(self.scroll_y)
        cursor = self.cursor_row if self.show_cursor else -1
        changed: list[int] = []  # lines of the view, from 1 (0 is the header)
        for y in range(1, self.page_rows + 1):
            index = top + y - 1
            if index >= len(self._keys):
                if self._painted.get(y) != BLANK:
                    changed.append(y)
                continue
            key = self._keys[index]
            hit = self._lines.get(key)
            if (
                self._painted.get(y) != (index, key, index == cursor)
                or hit is None
                or hit[0] != tuple(self.values(key, self.items[key]))
            ):
                changed.append(y)
        for first, count in _runs(changed):  # one region per run of lines
            self.refresh_lines(top + first, count)

    def move_cursor(self, row: int) -> None:
        if not self._keys:
            return
        row = max(0, min(row, len(self._keys) - 1))
        if row != self.cursor_row:
            old, self.cursor_row = self.cursor_row, row
            self._refresh_row(old)
            self._refresh_row(row)
        self._scroll_to_cursor()

    # --- what a row shows ----------------------------------------------------------------------

    def values(self, key: str, item: Any) -> Sequence[Any]:
        """What each column shows for the row's item (formatted when painted)."""
        raise NotImplementedError

    def cell_style(self, column: str, value: Any) -> str | None:
        """A Rich style for a cell, by column and value; None for the row's own style."""
        return None

    # --- rendering ----------------------------------------------------------------------------

    def _row_line(self, key: str) -> Strip:
        """A row's full-width line, unstyled but for its cells' own styles; kept until its
        values change."""
        raw = tuple(self.values(key, self.items[key]))
        hit = self._lines.get(key)
        if hit is not None and hit[0] == raw:
            return hit[1]
        pad = " " * self.PADDING
        segments = []
        for index, width in self._layout:
            col, value = self.COLUMNS[index], raw[index]
            text = justify(fit(value, width, col.middle), col, width)
            style = self.cell_style(col.key, value)
            segments.append(Segment(pad + text + pad, Style.parse(style) if style else None))
        line = Strip(segments, self._width)
        self._lines[key] = (raw, line)
        return line

    def render_lines(self, crop):
        # the looks of header, stripes and cursor depend on focus: read them once per paint
        self._styles = (
            self.rich_style,
            self.get_component_rich_style("keyedtable--header"),
            self.get_component_rich_style("keyedtable--even-row"),
            self.get_component_rich_style("keyedtable--cursor"),
        )
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        base, header, even, cursor = self._styles or (self.rich_style,) * 4
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        if y == 0:
            line, style = self._header, base + header
        else:
            index = scroll_y + y - 1
            if index >= len(self._keys):
                self._painted[y] = BLANK
                return Strip.blank(width, base)
            key = self._keys[index]
            line = self._row_line(key)
            self._painted[y] = (index, key, index == self.cursor_row and self.show_cursor)
            if index == self.cursor_row and self.show_cursor:
                style = base + cursor
            elif index % 2:
                style = base + even
            else:
                style = base
        return line.crop_extend(scroll_x, scroll_x + width, style).apply_style(style)

    @property
    def show_cursor(self) -> bool:
        return bool(self._keys)

    # --- cursor and scrolling -------------------------------------------------------------------

    @property
    def page_rows(self) -> int:
        """Rows in view below the header."""
        return max(1, self.scrollable_content_region.height - 1)

    def _row_visible(self, index: int) -> bool:
        top = round(self.scroll_y)
        return top <= index < top + self.page_rows

    def _refresh_row(self, index: int) -> None:
        self.refresh_line(index + 1)  # the header is line 0

    def _scroll_to_cursor(self) -> None:
        top = round(self.scroll_y)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True)
        elif self.cursor_row >= top + self.page_rows:
            self.scroll_to(y=self.cursor_row - self.page_rows + 1, animate=False, immediate=True)

    def action_cursor_up(self) -> None:
        self.move_cursor(self.cursor_row - 1)

    def action_cursor_down(self) -> None:
        self.move_cursor(self.cursor_row + 1)

    def action_page_up(self) -> None:
        self.move_cursor(self.cursor_row - self.page_rows)

    def action_page_down(self) -> None:
        self.move_cursor(self.cursor_row + self.page_rows)

    def action_first_row(self) -> None:
        self.move_cursor(0)

    def action_last_row(self) -> None:
        self.move_cursor(len(self._keys) - 1)

    def action_select_cursor(self) -> None:
        key = self.cursor_key()
        if key is not None:
            self.post_message(self.RowSelected(self, key, self.items[key]))

    def on_click(self, event: events.Click) -> None:
        # Widget's own click handling (its text selection on a double click) stays off, as
        # when this overrode it
        event.prevent_default()
        offset = event.get_content_offset(self)
        if offset is None or offset.y < 1:
            return
        index = offset.y - 1 + round(self.scroll_y)
        if index >= len(self._keys):
            return
        if index == self.cursor_row:  # a click on the cursor row opens it, as Enter does
            self.action_select_cursor()
        else:
            self.move_cursor(index)
