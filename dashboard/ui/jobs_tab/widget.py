"""The job browser tab: a role's jobs a page at a time, filters, the whole row, and the
guarded actions on the jobs marked.

It owns its state (the query, the pages read so far, the marks) and reads in a thread
worker, never on the UI thread; a read that a newer one replaced is dropped when it
lands. It asks the app to act by posting ActionChosen: the app confirms, runs the
action and then calls `after_action`, which reads the page again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import psycopg
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static

from dashboard.actions import ObservedJob, Skipped, foresee
from dashboard.browse import BrowsedJob, BrowseQuery, JobRow, Page, PageStart, browse_roles
from dashboard.browse.pages import first_role_with_jobs
from dashboard.errors import UserError
from dashboard.models import QueueSpec
from dashboard.queue_sql.dead_table import ALREADY_DEAD, dead_table
from dashboard.ui.jobs_tab.screens import FilterInputScreen, JobRowScreen
from dashboard.ui.jobs_tab.status_line import role_text, status_line
from dashboard.ui.jobs_tab.table import BrowserTable
from dashboard.ui.screens.job_lookup import skipped_text
from dashboard.ui.widgets.keyedtable import KeyedTable

NOT_DEAD = "not in the dead-letter table"
ACT = {"requeue": "requeue", "dead-letter": "dead-letter", "retry-dead": "retry"}


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class JobBrowser(Vertical):
    """`source` reads pages and rows (DatabaseSource, or fixed ones in tests); `groups` names
    the groups the last snapshot saw (a hint for the group filter)."""

    BINDINGS = [
        Binding(
            "v",
            "next_role",
            "Role",
            tooltip="Browse the next role: failed, dead, ready, scheduled, running, done",
        ),
        Binding("o", "toggle_order", "Order", tooltip="Newest first (highest id) or oldest first"),
        Binding(
            "slash",
            "ask_text",
            "Filter",
            key_display="/",
            tooltip="Filter by text: id, last error, worker, payload, group",
        ),
        Binding(
            "g",
            "ask_group",
            "Group",
            tooltip="Only the jobs of one group (the spec's group column, e.g. a queue)",
        ),
        Binding(
            "right_square_bracket",
            "next_page",
            "Next",
            key_display="]",
            tooltip="The next page (read from just past its last row: never OFFSET)",
        ),
        Binding(
            "left_square_bracket",
            "previous_page",
            "Prev",
            key_display="[",
            tooltip="The page before",
        ),
        Binding("r", "reload", "Reload", tooltip="Read this page again"),
        Binding(
            "space", "mark('toggle')", "Mark", tooltip="Mark or unmark the job under the cursor"
        ),
        Binding("a", "mark('all')", "Mark page", tooltip="Mark every job of this page"),
        Binding("u", "mark('none')", "Unmark", tooltip="Clear every mark"),
        Binding(
            "R",
            "act('requeue')",
            "Requeue",
            tooltip="Requeue the marked jobs (or the one under the cursor)",
        ),
        Binding(
            "F",
            "act('requeue', True)",
            "Force requeue",
            tooltip="Requeue even running jobs whose lease has not expired",
        ),
        Binding(
            "D",
            "act('dead-letter')",
            "Dead-letter",
            tooltip="Dead-letter the marked jobs (or the one under the cursor)",
        ),
        Binding(
            "Y",
            "act('retry-dead')",
            "Retry dead",
            tooltip="Move the marked jobs back from the dead-letter table as ready",
        ),
    ]

    class ActionChosen(Message):
        """Act on `jobs` (as observed on the page); `left_out` were chosen but would be
        skipped, each with its reason."""

        def __init__(
            self, action: str, jobs: list[ObservedJob], force: bool, left_out: list[Skipped]
        ) -> None:
            super().__init__()
            self.action = action
            self.jobs = jobs
            self.force = force
            self.left_out = left_out

    class PageLoaded(Message):
        def __init__(self, seq: int, page: Page | None, error: str = "") -> None:
            super().__init__()
            self.seq = seq
            self.page = page
            self.error = error

    class RowLoaded(Message):
        def __init__(self, job: BrowsedJob, row: JobRow | None, error: str = "") -> None:
            super().__init__()
            self.job = job
            self.row = row
            self.error = error

    def __init__(
        self,
        spec: QueueSpec,
        source,
        groups: Callable[[], Sequence[str]] = tuple,
        counts: Callable[[], Mapping[str, int]] = dict,  # rows per role, from the last poll
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.spec = spec
        self.source = source
        self.groups = groups
        self.counts = counts
        self.roles = browse_roles(spec)
        self.query = BrowseQuery(role=self.roles[0] if self.roles else "ready")
        self.starts: list[PageStart | None] = [None]  # where each page read so far began
        self.page: Page | None = None
        self.seq = 0  # the read whose result is awaited; older ones are dropped
        self.loading = False
        self.error = ""
        self.loads = 0  # pages shown (tests wait on it)

    def compose(self) -> ComposeResult:
        yield Static(id="browser-status")
        yield BrowserTable(groups=bool(self.spec.columns.group), id="browser-table")

    def on_mount(self) -> None:
        self._show_status()

    @property
    def table(self) -> BrowserTable:
        return self.query_one(BrowserTable)

    # --- reading ---------------------------------------------------------------------------

    def ensure_loaded(self) -> None:
        """The first page, the first time the tab is shown: of the first role with jobs
        (failed, where it has none, would open on an empty page), unless `v` chose one."""
        if self.page is None and not self.loading:
            if self.seq == 0:  # no page read yet, none asked for
                role = first_role_with_jobs(self.roles, self.counts())
                self.query = replace(self.query, role=role or self.query.role)
            self.reload()

    def reload(self) -> None:
        self._load()

    def after_action(self) -> None:
        """An action ran: read the page again (what changed leaves the role)."""
        if self.page is not None:
            self.reload()

    def _new_query(self, **changes) -> None:
        self.query = replace(self.query, **changes)
        self.starts = [None]
        self.table.marked.clear()
        self._load()

    def _load(self) -> None:
        if self.source is None:
            self.error = "no database: the dashboard shows fixed snapshots"
            self._show_status()
            return
        self.seq += 1
        self.loading = True
        self._show_status()
        self._read(self.seq, self.query, self.starts[-1])

    @work(thread=True, exclusive=True, group="browser", exit_on_error=False)
    def _read(self, seq: int, query: BrowseQuery, start: PageStart | None) -> None:
        try:
            page = self.source.page(query, start)
        except (psycopg.Error, UserError, OSError) as exc:
            self.post_message(self.PageLoaded(seq, None, _first_line(exc)))
            return
        self.post_message(self.PageLoaded(seq, page))

    def on_job_browser_page_loaded(self, message: PageLoaded) -> None:
        message.stop()
        if message.seq != self.seq:
            return  # a newer read is under way
        self.loading = False
        self.error = message.error
        if message.page is not None:
            self.page = message.page
            self.table.show(message.page)
            self.loads += 1
        self._show_status()

    # --- the status line ------------------------------------------------------------------

    def describe_role(self) -> str:
        return role_text(self.spec, self.query.role)

    def _show_status(self) -> None:
        line = status_line(
            self.spec,
            self.query,
            self.page,
            len(self.starts),
            marked=len(self.table.marked),
            loading=self.loading,
            error=self.error,
        )
        self.query_one("#browser-status", Static).update(line)

    # --- keys --------------------------------------------------------------------------------

    def action_next_role(self) -> None:
        if not self.roles:
            return
        here = self.roles.index(self.query.role) if self.query.role in self.roles else -1
        self._new_query(role=self.roles[(here + 1) % len(self.roles)])

    def action_toggle_order(self) -> None:
        self._new_query(newest_first=not self.query.newest_first)

    def action_ask_text(self) -> None:
        def apply(text: str | None) -> None:
            if text is not None and text != self.query.text:
                self._new_query(text=text)

        self.app.push_screen(
            FilterInputScreen(
                "Filter jobs by text",
                self.query.text,
                "matches the id exactly, or appears in the last error, worker, payload or group "
                "(case ignored); empty: no filter",
            ),
            apply,
        )

    def action_ask_group(self) -> None:
        if not self.spec.columns.group:
            self.notify(
                "the spec names no group column: pass --group-column COLUMN (e.g. "
                "queue) or set group in the queue TOML",
                severity="warning",
                timeout=8,
            )
            return

        def apply(group: str | None) -> None:
            if group is not None and (group or None) != self.query.group:
                self._new_query(group=group or None)

        known = ", ".join(list(self.groups())[:20]) or "none seen yet"
        self.app.push_screen(
            FilterInputScreen(
                f"Only one group ({self.spec.columns.group})",
                self.query.group or "",
                f"groups with active jobs: {known}; empty: every group",
            ),
            apply,
        )

    def action_next_page(self) -> None:
        start = self.page.next_start if self.page is not None else None
        if start is None:
            self.notify("this is the last page", timeout=3)
            return
        self.starts.append(start)
        self._load()

    def action_previous_page(self) -> None:
        if len(self.starts) == 1:
            self.notify("this is the first page", timeout=3)
            return
        self.starts.pop()
        self._load()

    def action_reload(self) -> None:
        self.reload()

    def action_mark(self, which: str) -> None:
        table = self.table
        {"toggle": table.toggle_mark, "all": table.mark_all, "none": table.clear_marks}[which]()
        self._show_status()

    def action_act(self, action: str, force: bool = False) -> None:
        jobs = self.table.chosen()
        if not jobs:
            self.notify(
                "no job: mark rows with Space (a marks the page) or put the cursor on one",
                severity="warning",
            )
            return
        change, left_out = self.split(jobs, action, force)
        if not change:
            self.notify(
                skipped_text(left_out, action, force),
                severity="warning",
                timeout=8,
                title=f"{'force ' if force else ''}{ACT[action]}: nothing to change",
            )
            return
        self.post_message(self.ActionChosen(action, change, force, left_out))

    def split(
        self, jobs: list[BrowsedJob], action: str, force: bool
    ) -> tuple[list[ObservedJob], list[Skipped]]:
        """What `action` would change as observed, and the others with their reason: a job in
        the dead-letter table is only retried, a job in the queue never."""
        if action == "retry-dead":
            return (
                [j.observed() for j in jobs if j.in_dead_table],
                [Skipped(j.id, NOT_DEAD) for j in jobs if not j.in_dead_table],
            )
        moved = [Skipped(j.id, f"{ALREADY_DEAD} (Y retries it)") for j in jobs if j.in_dead_table]
        change, skip = foresee(
            self.spec, [j.observed() for j in jobs if not j.in_dead_table], action, force
        )
        return change, moved + skip

    # --- the whole row -----------------------------------------------------------------------

    def on_keyed_table_row_selected(self, event: KeyedTable.RowSelected) -> None:
        event.stop()  # the app's detail of a snapshot row is not for a page's row
        if self.source is not None and event.item is not None:
            self._read_row(event.item)

    @work(thread=True, group="browser-row", exit_on_error=False)
    def _read_row(self, job: BrowsedJob) -> None:
        try:
            row = self.source.row(job)
        except (psycopg.Error, UserError, OSError) as exc:
            self.post_message(self.RowLoaded(job, None, _first_line(exc)))
            return
        self.post_message(self.RowLoaded(job, row))

    def on_job_browser_row_loaded(self, message: RowLoaded) -> None:
        message.stop()
        job, where = message.job, str(self.spec.table)
        if job.in_dead_table:
            where = str(dead_table(self.spec))
        if message.row is None:
            self.notify(message.error, title=f"job {job.id}: cannot read it", severity="error")
        elif not message.row.found:
            self.notify(
                f"job {job.id} is no longer in {where}: r reads the page again",
                severity="warning",
                timeout=6,
            )
        else:
            self.app.push_screen(JobRowScreen(job, message.row, where))
