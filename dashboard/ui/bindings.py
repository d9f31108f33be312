"""The main screen's key bindings: BINDINGS + action_* on QueuetopApp, nothing else.

Kept apart from the app so that it reads as what the keys are; the help screen, the
footer and the command palette are generated from these.
"""

from __future__ import annotations

from textual.binding import Binding

from dashboard.ui.loadgen_controls import LOADGEN_BINDINGS
from dashboard.ui.replay.keys import REPLAY_BINDINGS, REWIND_BACK, REWIND_OPEN, REWIND_SAVE

PANEL_KEYS = Binding.Group("Panels", compact=True)
SPEED_KEYS = Binding.Group("Speed")
# refresh intervals the + and - keys step through (the CLI's fastest is the first)
INTERVALS = (0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0)

APP_BINDINGS = [
    Binding("q", "quit", "Quit", tooltip="Quit queuetop"),
    # like top and pg_activity, from anywhere (a dialog's input would copy instead)
    Binding(
        "ctrl+c",
        "quit",
        "Quit",
        show=False,
        priority=True,
        tooltip="Quit queuetop, from any screen or dialog",
    ),
    Binding("question_mark,f1", "help", "Help", key_display="?", tooltip="Show every key binding"),
    REWIND_BACK,  # Escape, only while the rewind shows (check_action), as is its s
    Binding("p", "toggle_pause", "Pause", tooltip="Pause or resume polling"),
    Binding("r", "refresh_now", "Poll", tooltip="Poll now"),
    Binding(
        "e",
        "exact_counts",
        "Exact",
        tooltip="Count every state exactly on the next "
        "poll (above exact_count_limit finished states are estimates, marked ~)",
    ),
    Binding(
        "plus,equals_sign",
        "faster",
        "Faster",
        key_display="+",
        tooltip="Refresh more often",
        group=SPEED_KEYS,
    ),
    Binding(
        "minus",
        "slower",
        "Slower",
        key_display="-",
        tooltip="Refresh less often",
        group=SPEED_KEYS,
    ),
    Binding(
        "l",
        "toggle_lock_filter",
        "Filter",
        tooltip="Locks, waiting and idle tabs: the sessions of the queue / the whole database",
    ),
    Binding("1", "show_panel('locks')", "Locks", tooltip="Focus the locks table", group=PANEL_KEYS),
    Binding(
        "2",
        "show_panel('waiting')",
        "Waiting",
        tooltip="Focus the waiting sessions",
        group=PANEL_KEYS,
    ),
    Binding(
        "3",
        "show_panel('idle')",
        "Idle",
        tooltip="Focus idle-in-transaction sessions",
        group=PANEL_KEYS,
    ),
    Binding(
        "4", "show_panel('stale')", "Stale", tooltip="Focus the stale leases", group=PANEL_KEYS
    ),
    Binding(
        "b",
        "show_browser",
        "Jobs",
        group=PANEL_KEYS,
        tooltip="The job browser: failed, dead, ready, scheduled, running or done jobs, a "
        "page at a time, to look at and act on",
    ),
    # hidden by check_action unless a load generator runs; before j, A and L so that a
    # footer too narrow for all leaves those out (help lists them), never the demo's s, t
    *LOADGEN_BINDINGS,
    REWIND_SAVE,
    # priority: handled as it arrives, before the keys typed after it are sent on to
    # the table in focus (see RecoveryController.look_up); in a dialog it skips
    Binding(
        "j",
        "lookup_jobs",
        "Job id",
        priority=True,
        tooltip="Look up any job by id, then requeue or dead-letter it",
    ),
    Binding(
        "A",
        "show_audit",
        "Audit",
        tooltip="The latest actions from the audit trail (the table, or --audit-file)",
    ),
    Binding(
        "L",
        "open_lab",
        "Lab",
        tooltip="The contention lab: each claim strategy short and held, a deadlock and a "
        "lock_timeout, measured one after another on a scratch table (needs CREATE)",
    ),
    *REPLAY_BINDINGS,  # hidden by check_action unless replaying (they take p + - A then)
    REWIND_OPEN,  # h: the rewind (in the footer where there is room; help lists it)
]
