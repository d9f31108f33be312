"""Which keys the footer shows for the terminal's width: all of them where they fit; on a
narrow terminal the ones a newcomer needs, the others in help (?) and the palette (^p).

A compact footer does not wrap: keys past its width scroll out of sight (at 80 columns it
read `1234b Pane▏^p palette`), so a narrow one leaves out what it cannot show whole.
"""

from __future__ import annotations

from dataclasses import replace

from textual.app import App

from dashboard.ui.forks.bindings import binding_table
from dashboard.ui.loadgen_controls import LOADGEN_ACTIONS
from dashboard.ui.widgets.fitting_footer import LEFT_OUT

NARROW_BELOW = 110  # columns: the main screen's compact layout starts here too
# in the footer only where there is room for them
OPTIONAL = {
    "refresh_now",
    "exact_counts",
    "faster",
    "slower",
    "lookup_jobs",
    "show_audit",
    "open_lab",
    *LOADGEN_ACTIONS,
    # a replay's (and the rewind's) speed and go-to: its step keys and Escape come first
    "replay('speed', 1)",
    "replay('speed', -1)",
    "replay('goto')",
    # h, the rewind: where there is room, and only when it is on (--rewind 0: help lists h,
    # which then says the rewind is off)
    "rewind('open')",
}
# on a narrow screen (where the palette key leaves the footer: ^p still opens it, and help
# lists it): the job lookup, the audit and the lab, with the refresh speed; in the demo the
# two knobs of its story (s, t) take the speed's place
NARROW_ALWAYS = {"lookup_jobs", "show_audit", "open_lab"}
NARROW = {"faster", "slower"} | NARROW_ALWAYS
NARROW_DEMO = {"cycle_strategy", "toggle_hold_tx"} | NARROW_ALWAYS


# below this width the demo's footer leaves out the poll-now and exact-count keys, so that
# its load keys and j, A, L fit beside the rest
DEMO_FULL_FROM = 140


def footer_keys(width: int, demo: bool, replaying: bool = False, rewind: bool = False) -> set[str]:
    """The optional actions the footer shows at `width` columns (`replaying`: a replay or
    the rewind shows, whose keys take the narrow footer; `rewind`: the rewind is on)."""
    if width < NARROW_BELOW:
        if replaying:
            return set()
        return set(NARROW_DEMO) if demo else set(NARROW)
    shown = set(OPTIONAL)
    if demo and width < DEMO_FULL_FROM:
        shown -= {"refresh_now", "exact_counts"}
    if not rewind:
        shown.discard("rewind('open')")
    return shown


def fit_footer(app: App, width: int, demo: bool) -> None:
    """Show the footer keys that fit `width` columns (see footer_keys).

    Binding.show is fixed per binding, so the app's own binding map is edited (the
    `bindings` piece, forks/bindings.py); with the piece off, or if a Textual release moves
    the map, the footer leaves the keys out itself (FittingFooter, by action).
    """
    replaying = getattr(app, "replay", None) is not None
    rewind = getattr(getattr(app, "rewind", None), "buffer", None) is not None
    shown = footer_keys(width, demo, replaying, rewind)
    table = binding_table(app)
    if table is None:  # the footer leaves them out itself (widgets/fitting_footer.py)
        left_out = frozenset(OPTIONAL - shown)
        if getattr(app, LEFT_OUT, None) != left_out:
            setattr(app, LEFT_OUT, left_out)
            app.refresh_bindings()
        return
    changed = False
    for items in table.values():
        for i, b in enumerate(items):
            if b.action in OPTIONAL and b.show != (b.action in shown):
                items[i] = replace(b, show=b.action in shown)
                changed = True
    if changed:
        app.refresh_bindings()
