"""The job browser tab (key b): its widget, table and dialogs."""

from dashboard.ui.browser.table import BrowserTable
from dashboard.ui.browser.widget import JobBrowser

__all__ = ["BrowserTable", "JobBrowser"]
