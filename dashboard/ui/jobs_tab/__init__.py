"""The job browser tab (key b): its widget, table and dialogs."""

from dashboard.ui.jobs_tab.table import BrowserTable
from dashboard.ui.jobs_tab.widget import JobBrowser

__all__ = ["BrowserTable", "JobBrowser"]
