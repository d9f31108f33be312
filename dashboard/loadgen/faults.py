"""Simulated work, injected faults, and dying with the parent."""

from __future__ import annotations

import ctypes
import math
import os
import random
import signal
import sys

CRASH_EXIT_CODE = 70  # an injected crash; the pool replaces the worker
ERROR_EXIT_CODE = 2  # its statements fail (not a lost connection); replaced after a pause
WORK_SIGMA = 0.5  # spread of the lognormal work time
_PR_SET_PDEATHSIG = 1


def work_seconds(rng: random.Random, mean_ms: float) -> float:
    """A lognormal work time whose mean is `mean_ms`: mostly near it, with a tail."""
    if mean_ms <= 0:
        return 0.0
    mu = math.log(mean_ms) - WORK_SIGMA**2 / 2
    return rng.lognormvariate(mu, WORK_SIGMA) / 1000.0


def happens(rng: random.Random, rate: float) -> bool:
    return rate > 0 and rng.random() < rate


def die_with_parent(parent_pid: int) -> None:
    """Ask Linux to SIGKILL this process when its parent thread dies; exit if it already has.

    Elsewhere the worker loop's `parent_alive` check is the only guard.
    """
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # no prctl: the polling check still applies
    if not parent_alive(parent_pid):
        os._exit(0)


def parent_alive(parent_pid: int) -> bool:
    return os.getppid() == parent_pid


def crash_now() -> None:
    """Exit hard: no rollback, no goodbye to the server, no finally blocks."""
    os._exit(CRASH_EXIT_CODE)
