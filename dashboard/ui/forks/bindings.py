"""The `bindings` piece: the app's own binding map, which the footer's fitting edits.

Binding.show is fixed per binding, so ui/footer_fit.py shows or hides a key by replacing
the binding in the app's map (`App._bindings.key_to_bindings`). Off, every key stays in
the footer (as stock Textual shows them), and the footer cuts those past its width.
"""

from __future__ import annotations

from textual.app import App
from textual.binding import Binding

from dashboard.ui.forks import use


def probe(app: App | None = None) -> dict:
    """The app's binding map; without an app (forks.stock, before one exists) nothing can
    be checked (the map is an instance's): it is, at first use."""
    if app is None:
        return {}
    table = app._bindings.key_to_bindings
    if not isinstance(table, dict):
        raise AttributeError("App._bindings.key_to_bindings is not a dict")
    return table


def binding_table(app: App) -> dict[str, list[Binding]] | None:
    """key -> its bindings, editable in place; None when the piece is off."""
    return use("bindings", lambda: probe(app))
