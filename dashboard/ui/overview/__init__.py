"""The overview of every queue discovery found (one row each), and the dashboard opened
from it on one queue, with Escape back to the overview (dashboard.cli.watch_commands runs
the loop between them)."""

from dashboard.ui.overview.app import OverviewApp
from dashboard.ui.overview.drilldown import BACK, DrillDownApp

__all__ = ["BACK", "DrillDownApp", "OverviewApp"]
