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
}
# on a narrow screen: the refresh speed, and in the demo the two knobs of its story (s, t)
NARROW = {"faster", "slower"}
NARROW_DEMO = {"cycle_strategy", "toggle_hold_tx"}


def footer_keys(narrow: bool, demo: bool) -> set[str]:
    """The optional actions the footer shows."""
    if not narrow:
        return set(OPTIONAL)
    return NARROW | NARROW_DEMO if demo else set(NARROW)


def fit_footer(app: App, width: int, demo: bool) -> None:
    """Show the footer keys that fit `width` columns (see footer_keys).

    Binding.show is fixed per binding, so the app's own binding map is edited (the
    `bindings` piece, forks/bindings.py); with the piece off, or if a Textual release moves
    the map, the footer leaves the keys out itself (FittingFooter, by action).
    """
    shown = footer_keys(width < NARROW_BELOW, demo)
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
