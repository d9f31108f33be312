"""What `queuetop demo` runs and what it tells the person watching it.

The two knobs the demo is about are independent: the claim strategy (`s`)
and whether the claim transaction is held through the work (`t`). One
sentence per combination says what it does and where on screen to look;
the UI shows it under the load strip, always, and the first-run hint until
the first `s`.
"""

from __future__ import annotations

from dataclasses import replace

from dashboard.loadgen.settings import DEMO_SETTINGS, LoadSettings

DEMO_WORKERS = 4
DEMO_FAIL_RATE = 0.02
# Random crashes (each leaves a stale lease) bury the one `!` makes: off unless asked for
# (`queuetop demo --chaos`, or the UI's chaos key: LoadGenerator.set_random_crashes).
RANDOM_CRASH_RATE = 0.001

# one line of an 80-column screen: at 80x24 it was cut before `t`
FIRST_RUN_HINT = "new here? s changes how the workers claim, t holds their claim transaction"

# at most ~150 characters each: two lines of an 80-column screen
_SENTENCES: dict[tuple[str, bool], str] = {
    ("skip-locked", False): (
        "skip-locked, claim committed at once: each worker takes the next free row; nobody "
        "waits. t holds the claim transaction, s tries another strategy"
    ),
    ("skip-locked", True): (
        "skip-locked, claim transaction held: each worker keeps its row locked while it "
        "works, the others skip it; nobody waits (tab 1: a row lock each)"
    ),
    ("for-update", False): (
        "for-update, claim committed at once: a claim waits on the first ready row only for "
        "a moment, as fast as skip-locked. t holds it: the pile-up"
    ),
    ("for-update", True): (
        "for-update, claim transaction held: workers queue behind the one holding the first "
        "ready row; uncommitted claims still read ready, not running (tab 2; waiting)"
    ),
    ("nowait", False): (
        "nowait, claim committed at once: a claim that meets a locked first row fails at once "
        "and retries; rare with short claims (lock errors/s)"
    ),
    ("nowait", True): (
        "nowait, claim transaction held: the first ready row stays locked while its worker "
        "works; the other claims fail at once and retry (lock errors/s; tab 2 empty)"
    ),
}


def describe(strategy: str, hold_tx: bool) -> str:
    """The persistent sentence for the current combination of the two knobs."""
    try:
        return _SENTENCES[(strategy, bool(hold_tx))]
    except KeyError:
        return f"{strategy}, claim transaction {'held' if hold_tx else 'committed at once'}"


def demo_settings(
    workers: int | None = None, strategy: str | None = None, chaos: bool = False
) -> LoadSettings:
    """The demo's knobs: a steady flow, a few failures, random crashes only with chaos."""
    return replace(
        DEMO_SETTINGS,
        fail_rate=DEMO_FAIL_RATE,
        crash_rate=RANDOM_CRASH_RATE if chaos else 0.0,
        workers=DEMO_WORKERS if workers is None else workers,
        strategy=strategy or DEMO_SETTINGS.strategy,
    )
