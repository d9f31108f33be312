"""The replay's keys, bound on the app like the load generator's and hidden unless replaying.

While replaying, the live dashboard's polling keys are off, and p + - are the replay's:
play or pause, and its speed.
"""

from __future__ import annotations

from typing import Any

from textual.binding import Binding

REPLAY_KEYS = Binding.Group("Replay")
REPLAY_BINDINGS = [
    Binding(
        "comma",
        "replay('step', -1)",
        "Prev",
        key_display=",",
        tooltip="Replay: the frame before",
        group=REPLAY_KEYS,
    ),
    Binding(
        "full_stop",
        "replay('step', 1)",
        "Next",
        key_display=".",
        tooltip="Replay: the next frame",
        group=REPLAY_KEYS,
    ),
    Binding(
        "less_than_sign",
        "replay('jump', -60)",
        "-1m",
        key_display="<",
        tooltip="Replay: a minute earlier",
        group=REPLAY_KEYS,
    ),
    Binding(
        "greater_than_sign",
        "replay('jump', 60)",
        "+1m",
        key_display=">",
        tooltip="Replay: a minute later",
        group=REPLAY_KEYS,
    ),
    Binding("g", "replay('goto')", "Go to", tooltip="Replay: go to a time (03:07, +5m, end)"),
    Binding("p", "replay('play')", "Play", tooltip="Replay: play or pause"),
    Binding(
        "plus,equals_sign",
        "replay('speed', 1)",
        "Faster",
        key_display="+",
        tooltip="Replay: play faster (1x, 10x, 60x)",
    ),
    Binding(
        "minus",
        "replay('speed', -1)",
        "Slower",
        key_display="-",
        tooltip="Replay: play slower (60x, 10x, 1x)",
    ),
    Binding(
        "A",
        "replay('audit')",
        "Audit",
        tooltip="The recorded audit trail, up to the time of the frame shown",
    ),
]
# The rewind (the live dashboard's last minutes, ui/replay/rewind.py): h opens it in the
# replay view, whose keys then move it; Escape and s are its own while it shows. Bound apart
# (bindings.py): Escape early, so that a narrow footer shows it first; s beside the demo's
# s, so that its place in the footer stays the demo's.
REWIND_OPEN = Binding(
    "h",
    "rewind('open')",
    "Rewind",
    tooltip="Rewind: the last minutes the dashboard kept (--rewind), opened at now in the "
    "replay view: , steps back, < a minute back, p plays, s saves it, Escape returns to live",
)
REWIND_BACK = Binding(
    "escape",
    "rewind('back')",
    "Live",
    key_display="Esc",
    tooltip="Rewind: back to the live dashboard (it kept polling meanwhile)",
)
REWIND_SAVE = Binding(
    "s",
    "rewind('save')",
    "Save",
    tooltip="Rewind: save it as a recording file (queuetop replay FILE opens it)",
)
# the live dashboard's actions that make no sense on a recording: off while replaying
LIVE_ONLY = frozenset(("toggle_pause", "refresh_now", "exact_counts", "faster", "slower"))


def replay_allows(replay: Any, action: str) -> bool | None:
    """For the app's check_action: False for the replay's keys in a live dashboard and for
    the live keys in a replay; None where the replay has no say. (`action` is a name, or a
    binding's whole action: replay('step', 1).)"""
    action = action.split("(", 1)[0]
    if action == "replay":
        return replay is not None
    if replay is not None and action in LIVE_ONLY:
        return False
    return None
