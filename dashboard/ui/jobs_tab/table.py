"""The job browser's table: one page of jobs, marks, and the keys that act on them."""

from __future__ import annotations

from dashboard.browse import BrowsedJob, Page
from dashboard.render.report import age
from dashboard.ui.widgets.keyedtable import Col, KeyedTable

R = "right"


class BrowserTable(KeyedTable):
    """One page of jobs, keyed by source and id; marks survive a reload of the page."""

    TITLE = "Job"
    COLUMNS = (
        Col("mark", "✓", 1),
        Col("id", "job id", 9, R),
        Col("state", "state", 11),
        Col("tries", "tries", 5, R, drop=2),
        # wide enough for the demo's queuetop-worker-K; a longer name keeps its tail
        Col("worker", "worker", 18, drop=3, middle=True),
        Col("age", "age", 7, R),
        Col("group", "group", 10, drop=4),
        Col("error", "last error", 24, fill=True, drop=1),
    )

    def __init__(self, groups: bool = True, **kwargs) -> None:
        if not groups:  # the spec has no group column: no column of dashes
            self.COLUMNS = tuple(c for c in self.COLUMNS if c.key != "group")
        super().__init__(**kwargs)
        self.marked: set[str] = set()

    def show(self, page: Page) -> None:
        self.marked &= {r.key for r in page.rows}
        self.set_rows((r.key, r) for r in page.rows)

    def values(self, key: str, job: BrowsedJob) -> tuple:
        state = "dead-letter" if job.in_dead_table else job.status
        error = job.dead_reason if job.in_dead_table and job.dead_reason else job.last_error
        values = (
            "●" if key in self.marked else "",
            job.id,
            state,
            "-" if job.attempts is None else job.attempts,
            job.worker or "-",
            age(job.age_s),
            job.group or "-",
            error or "",
        )
        return values if len(self.COLUMNS) == len(values) else values[:6] + values[7:]

    def cell_style(self, column: str, value: object) -> str | None:
        return "bold red" if column == "state" and value == "dead-letter" else None

    def chosen(self) -> list[BrowsedJob]:
        """The marked jobs in page order, else the one under the cursor."""
        marked = [self.items[k] for k in self.items if k in self.marked]
        if marked:
            return marked
        item = self.cursor_item()
        return [item] if item is not None else []

    def toggle_mark(self) -> None:
        key = self.cursor_key()
        if key is None:
            return
        self.marked ^= {key}
        self.refresh()  # the mark column reads self.marked when a line is painted
        self.move_cursor(self.cursor_row + 1)

    def mark_all(self) -> None:
        self.marked = set(self.items)
        self.refresh()

    def clear_marks(self) -> None:
        self.marked.clear()
        self.refresh()
