"""Where the dashboard's browser reads: the database, on monitor connections.

Each read opens a monitor connection (autocommit, read-only, statement and lock
timeouts) and closes it: a page is read on demand, so no connection idles between
pages, and a read left behind by a closed dashboard ends within its timeout.
"""

from __future__ import annotations

from contextlib import closing

from dashboard import db
from dashboard.browse.pages import BrowsedJob, BrowseQuery, Page, PageReader, PageStart
from dashboard.browse.rows import JobRow, read_row
from dashboard.models import QueueSpec

READ_TIMEOUT_MS = 5000  # a page read through an index takes milliseconds; a filter may scan


class DatabaseSource:
    """Pages and whole rows of one queue, read from `dsn`."""

    def __init__(self, dsn: str | None, spec: QueueSpec, timeout_ms: int = READ_TIMEOUT_MS):
        self.dsn = dsn or ""
        self.reader = PageReader(spec)
        self.timeout_ms = timeout_ms

    def page(self, query: BrowseQuery, start: PageStart | None = None) -> Page:
        with closing(db.connect_monitor(self.dsn, timeout_ms=self.timeout_ms)) as conn:
            return self.reader.read(conn, query, start)

    def row(self, job: BrowsedJob) -> JobRow:
        with closing(db.connect_monitor(self.dsn, timeout_ms=self.timeout_ms)) as conn:
            return read_row(conn, self.reader, job.id, job.source)
