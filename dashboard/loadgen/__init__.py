"""The built-in load generator: competing worker processes against a queue table.

`LoadGenerator` (pool.py) is the controller the CLI and the TUI drive;
`LoadSettings` holds its knobs; `LoadSnapshot` is what `stats()` returns.
"""

from dashboard.loadgen.pool import WORKER_PREFIX, LoadGenerator
from dashboard.loadgen.settings import DEMO_SETTINGS, LIVE_KNOBS, LoadSettings
from dashboard.loadgen.stats import LoadSnapshot, WorkerStats, summary
from dashboard.loadgen.strategies import STRATEGIES

__all__ = [
    "DEMO_SETTINGS",
    "LIVE_KNOBS",
    "STRATEGIES",
    "WORKER_PREFIX",
    "LoadGenerator",
    "LoadSettings",
    "LoadSnapshot",
    "WorkerStats",
    "summary",
]
