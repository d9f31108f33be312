"""Small helpers shared by the tests: waiting for a condition on a real server."""

from __future__ import annotations

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
