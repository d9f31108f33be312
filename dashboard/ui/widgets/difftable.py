"""A DataTable keyed by pid or job id and diffed on refresh, so the cursor survives."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from dashboard.report import one_line


@dataclass(frozen=True)
class Col:
    key: str
    label: str
    width: int


class KeyedText(Text):
    """The first cell of a row: carries its row key so sort() can order rows by key."""

    def __init__(self, text: str, row_key: str, style: str = "") -> None:
        super().__init__(text, style=style, no_wrap=True, overflow="ellipsis")
        self.row_key = row_key


def fit(value: Any, width: int) -> str:
    """One line, cut with an ellipsis to the column width."""
    return one_line("" if value is None else str(value), width)


class DiffTable(DataTable):
    """Rows are replaced by diff: cells updated, rows added or removed, never cleared.

    Subclasses define COLUMNS and turn a snapshot into ordered (key, item, cells).
    """

    COLUMNS: tuple[Col, ...] = ()
    TITLE = ""
    SHORT_TITLE = ""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.items: dict[str, Any] = {}
        self._cells: dict[str, tuple] = {}
        self._order: dict[str, int] = {}
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

    def set_rows(self, rows: Sequence[tuple[str, Any, Sequence[Any]]]) -> None:
        """Diff to `rows`: (key, item, cells) in display order. Keys must be unique."""
        keep = self.cursor_key()
        keep_index = self.cursor_row
        wanted = {key for key, _, _ in rows}
        for key in [k for k in self._cells if k not in wanted]:
            self.remove_row(key)
            del self._cells[key]
        columns = [c.key for c in self.COLUMNS]
        order: dict[str, int] = {}
        for index, (key, item, raw) in enumerate(rows):
            cells = (KeyedText(str(raw[0]), key),
                     *(fit(v, c.width) for v, c in zip(raw[1:], self.COLUMNS[1:], strict=True)))
            order[key] = index
            self.items[key] = item
            old = self._cells.get(key)
            if old is None:
                self.add_row(*cells, key=key)
            else:
                for col, before, after in zip(columns, old, cells, strict=True):
                    if str(before) != str(after) or getattr(before, "style", "") != getattr(
                        after, "style", ""
                    ):
                        self.update_cell(key, col, after)
            self._cells[key] = cells
        self.items = {k: self.items[k] for k in order}
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
