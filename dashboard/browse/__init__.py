"""The job browser's reads: keyset pages of a role's jobs and a job's whole row.

Reads only, on a monitor connection (read-only, statement timeout); nothing here
imports textual, so `queuetop` and the tests use it headless.
"""

from dashboard.browse.pages import (
    BROWSE_ROLES,
    DEAD_TABLE,
    PAGE_ROWS,
    QUEUE,
    BrowsedJob,
    BrowseQuery,
    Page,
    PageReader,
    PageStart,
    browse_roles,
    dead_table,
)
from dashboard.browse.rows import JobRow, RowField, read_row

__all__ = [
    "BROWSE_ROLES",
    "DEAD_TABLE",
    "PAGE_ROWS",
    "QUEUE",
    "BrowseQuery",
    "BrowsedJob",
    "JobRow",
    "Page",
    "PageReader",
    "PageStart",
    "RowField",
    "browse_roles",
    "dead_table",
    "read_row",
]
