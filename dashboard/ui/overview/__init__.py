"""The overview of every queue discovery found (one row each) or of every queue of several
named targets, and the dashboard opened from it on one queue, with Escape back to the
overview (dashboard.cli.watch_overview runs the loop between them)."""

from dashboard.ui.overview.app import OverviewApp
from dashboard.ui.overview.drilldown import BACK, DrillDownApp
from dashboard.ui.overview.fleet_app import FleetOverviewApp

__all__ = ["BACK", "DrillDownApp", "FleetOverviewApp", "OverviewApp"]
