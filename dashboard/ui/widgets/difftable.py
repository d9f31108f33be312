"""A DataTable keyed by pid or job id and diffed on refresh, so the cursor survives."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.widgets import DataTable
from textual.widgets.data_table import CellKey, RowKey

try:  # remove_row rebuilds this index once per row; _remove_rows rebuilds it once
    from textual._two_way_dict import TwoWayDict
except ImportError:  # pragma: no cover - a Textual without it: fall back to remove_row
    TwoWayDict = None

from dashboard.report import one_line

_PLAIN = Style()


@dataclass(frozen=True)
class Col:
    key: str
    label: str
    width: int


def _moved(lines: list, old_base: Style, new_base: Style, old_row: int, new_row: int,
           column: int) -> list | None:
    """A cell's rendering at a new row position, or None if it must be rendered again.

    The meta (row, column) is what a mouse click reads, so it must say where the cell is
    now. A new row style (zebra stripe) can only be swapped in for a plain cell: one
    whose every segment has exactly the old row style, as our unstyled Text cells do.
    """
    meta = Style.from_meta({"row": new_row, "column": column})
    if old_base == new_base:
        return [[Segment(seg.text, (seg.style or _PLAIN) + meta, seg.control) for seg in line]
                for line in lines]
    old = old_base + Style.from_meta({"row": old_row, "column": column})
    if any(seg.style != old or seg.control for line in lines for seg in line):
        return None
    new = new_base + meta
    return [[Segment(seg.text, new) for seg in line] for line in lines]


class KeyedText(Text):
    """The first cell of a row: carries its row key so sort() can order rows by key."""

    def __init__(self, text: str, row_key: str, style: str = "") -> None:
        super().__init__(text, style=style, no_wrap=True, overflow="ellipsis")
        self.row_key = row_key


def fit(value: Any, width: int) -> str:
    """One line, cut with an ellipsis to the column width."""
    text = "" if value is None else str(value)
    if len(text) <= width and text.isprintable() and "  " not in text:
        return text
    return one_line(text, width)


class DiffTable(DataTable):
    """Rows are replaced by diff: cells updated, rows added or removed, never cleared.

    Subclasses define COLUMNS and turn a snapshot into ordered (key, item, cells).
    """

    COLUMNS: tuple[Col, ...] = ()
    TITLE = ""
    SHORT_TITLE = ""
    # A table in a hidden tab keeps its items current and diffs its rows when shown.
    DEFER_HIDDEN = True
    _pending: Sequence | None = None
    _batching = False  # class defaults: DataTable.__init__ refreshes before ours runs
    _batched_layout = False
    _cells: LRUCache | None = None

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.items: dict[str, Any] = {}
        self._raw: dict[str, tuple] = {}  # the values behind each row, before formatting
        self._order: dict[str, int] = {}
        # (cell position and look) -> (value, rendering): see _render_cell
        self._cells = LRUCache(10000)
        for col in self.COLUMNS:
            self.add_column(col.label, width=col.width, key=col.key)

    def cursor_key(self) -> str | None:
        """The row key under the cursor, if any."""
        if not self.row_count:
            return None
        try:
            return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        except Exception:  # noqa: BLE001 - an out-of-range cursor just means no row
            return None

    def cursor_item(self) -> Any:
        key = self.cursor_key()
        return self.items.get(key) if key is not None else None

    def refresh(self, *regions, repaint: bool = True, layout: bool = False,
                recompose: bool = False):
        """While a diff is applied, the many per-cell refreshes become one at the end."""
        if self._batching and not recompose:
            self._batched_layout |= layout
            return self
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def _render_cell(self, row_index: int, column_index: int, base_style, width: int,
                     cursor: bool = False, hover: bool = False):
        """A cell keeps its rendering until its own value changes.

        DataTable keys its cell cache on one counter that every update_cell bumps, so a
        single ticking age re-renders every visible cell. _diff replaces a cell's value
        object only when the value changed, so the object itself tells a cached rendering
        from a stale one; the rest of what shapes the cell is in the key. A row that only
        moved (a row above it left) keeps its text: its segments get the new position
        (the meta a mouse click reads) and, if it changed stripe, the new row style.
        """
        render = super()._render_cell
        cells = self._cells
        row_key = self._row_locations.get_key(row_index) if row_index >= 0 else None
        row = self.rows.get(row_key) if row_key is not None else None
        if cells is None or row is None or column_index < 0:
            return render(row_index, column_index, base_style, width, cursor, hover)
        column_key = self._column_locations.get_key(column_index)
        value = self._data[row_key].get(column_key)
        key = (row_key, column_key, column_index, row.height, width, cursor, hover,
               self.show_cursor, self._show_hover_cursor, self._pseudo_class_state)
        hit = cells.get(key)
        lines = None
        if hit is not None and hit[0] is value:
            _, old_index, old_base, old_lines = hit
            if old_index == row_index and old_base == base_style:
                return old_lines
            lines = _moved(old_lines, old_base, base_style, old_index, row_index, column_index)
        if lines is None:
            lines = render(row_index, column_index, base_style, width, cursor, hover)
        cells[key] = (value, row_index, base_style, lines)
        return lines

    def _clear_caches(self) -> None:
        super()._clear_caches()
        if self._cells is not None:
            self._cells.clear()

    def shown(self) -> bool:
        """False while the table sits in a hidden tab (or is otherwise not displayed)."""
        node = self
        while node is not None and hasattr(node, "display"):
            if not node.display:
                return False
            node = node.parent
        return True

    def set_rows(self, rows: Sequence[tuple[str, Any, Sequence[Any]]]) -> None:
        """Diff to `rows`: (key, item, cells) in display order. Keys must be unique."""
        if self.DEFER_HIDDEN and not self.shown():
            self.items = {key: item for key, item, _ in rows}
            self._pending = rows
            return
        self._pending = None
        self._batching, self._batched_layout = True, False
        try:
            self._diff(rows)
        finally:
            self._batching = False
            self._settle_dimensions()
            super().refresh(layout=self._batched_layout)

    def _settle_dimensions(self) -> None:
        """Size the table for its new rows now, not on the next idle.

        DataTable does this on idle and then repaints every visible row a second time;
        done here, the one repaint that follows the diff already has the right size.
        """
        if getattr(self, "_require_update_dimensions", False) and hasattr(self, "_new_rows"):
            self._require_update_dimensions = False
            new_rows = self._new_rows.copy()
            self._new_rows.clear()
            # it measures every cell of a new row to widen auto-width columns; ours have
            # fixed widths, one-line rows and no labels, so only the table's size is left
            if not any(c.auto_width for c in self.columns.values()):
                new_rows = set()
            self._update_dimensions(new_rows)

    def flush(self) -> None:
        """Apply the rows that arrived while the table was hidden."""
        if self._pending is not None:
            self.set_rows(self._pending)

    def _remove_rows(self, keys: list[str]) -> None:
        """remove_row for many rows: one pass over the row index instead of one per row.

        Mirrors DataTable.remove_row on its internals; falls back to it if they change.
        """
        internals = ("_row_locations", "_data", "_updated_cells", "_update_count")
        if len(keys) < 4 or TwoWayDict is None or not all(hasattr(self, a) for a in internals):
            for key in keys:
                self.remove_row(key)
            return
        gone = {RowKey(k) for k in keys}
        kept = sorted((self._row_locations.get(rk), rk.value) for rk in self._row_locations
                      if rk not in gone)
        self._row_locations = TwoWayDict({RowKey(k): i for i, (_, k) in enumerate(kept)})
        for rk in gone:
            for ck in self._data.get(rk, {}):
                self._updated_cells.discard(CellKey(rk, ck))
            del self.rows[rk]
            del self._data[rk]
        self._require_update_dimensions = True
        self._update_count += 1
        self.cursor_coordinate = self.cursor_coordinate
        self.hover_coordinate = self.hover_coordinate
        self.check_idle()
        self.refresh(layout=True)

    def _cell(self, index: int, value: Any, key: str) -> Any:
        if index == 0:
            return KeyedText(str(value), key)
        # Text, not str: DataTable parses str cells as markup, and queries contain brackets
        return Text(fit(value, self.COLUMNS[index].width), no_wrap=True)

    def _diff(self, rows: Sequence[tuple[str, Any, Sequence[Any]]]) -> None:
        keep = self.cursor_key()
        keep_index = self.cursor_row
        wanted = {key for key, _, _ in rows}
        gone = [k for k in self._raw if k not in wanted]
        self._remove_rows(gone)
        for key in gone:
            del self._raw[key]
        columns = [c.key for c in self.COLUMNS]
        order: dict[str, int] = {}
        items: dict[str, Any] = {}
        for index, (key, item, raw) in enumerate(rows):
            raw = tuple(raw)
            order[key] = index
            items[key] = item
            old = self._raw.get(key)
            if old is None:
                self.add_row(*(self._cell(i, v, key) for i, v in enumerate(raw)), key=key)
            elif old != raw:  # most rows of a big table do not change between polls
                for i, (before, after) in enumerate(zip(old, raw, strict=True)):
                    if before != after:
                        self.update_cell(key, columns[i], self._cell(i, after, key))
            self._raw[key] = raw
        self.items = items
        # rows kept stay in their old order and new rows come last; sort only if that is wrong
        current = [k for k in self._order if k in wanted]
        current += [k for k in order if k not in self._order]
        self._order = order
        if current != list(order):
            self.sort(key=lambda values: order[values[0].row_key])
        self._restore_cursor(keep, keep_index)

    def _restore_cursor(self, key: str | None, index: int) -> None:
        if not self.row_count:
            return
        if key is not None and key in self._order:
            row = self.get_row_index(key)
        else:
            row = min(index, self.row_count - 1)
        if row != self.cursor_row:
            self.move_cursor(row=row, animate=False, scroll=False)
