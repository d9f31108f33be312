"""Every reach into Textual's and textual-serve's internals.

A private module, an underscore name or a copied method of the toolkit lives here and
nowhere else in `dashboard/` (tests/test_private_reach.py walks the AST to say so). Each
piece is one switch: `use(piece, load)` returns what `load()` finds (the private name, or
the fork built on it), or None when the piece is off, and its caller then takes the stock
path of Textual or plotext. A piece is off when

- `QUEUETOP_STOCK_UI` turns it off: `1` (or `all`, `true`, `yes`) every piece, a comma
  list of piece names only those (`QUEUETOP_STOCK_UI=compositor,driver`);
- its private name is gone (`load()` raised ImportError or AttributeError: a Textual or
  plotext release moved it).

Why a piece is off is logged once, at debug level, on the `queuetop.forks` logger
(`queuetop --debug` prints it on stderr). The pieces:

compositor   forks/compositor.py: partial updates rendered line by line
driver       forks/driver.py: the terminal's input thread asleep between keys
bindings     forks/bindings.py: the footer's keys chosen by width (the app's binding map)
tab_label    forks/tab_label.py: a tab's count redrawn in place

textual-serve's `Server._make_app` (forks/serve.py) is not a switch: queuetop serve's
guard depends on it, and without it serve refuses to start rather than run unguarded.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TypeVar

log = logging.getLogger("queuetop.forks")

ENV = "QUEUETOP_STOCK_UI"
PIECES = (
    "compositor",
    "driver",
    "bindings",
    "tab_label",
)
ALL = ("1", "all", "true", "yes", "on")

T = TypeVar("T")

_told: set[tuple[str, str]] = set()


def switched_off(piece: str) -> bool:
    """True when QUEUETOP_STOCK_UI turns `piece` off (see the module docstring)."""
    value = os.environ.get(ENV, "").strip().lower()
    if not value or value in ("0", "false", "no", "off"):
        return False
    if value in ALL:
        return True
    return piece in {name.strip() for name in value.split(",")}


def off(piece: str, reason: str) -> None:
    """Log once why `piece` runs on the stock path."""
    if (piece, reason) not in _told:
        _told.add((piece, reason))
        log.debug("queuetop: %s on Textual's/plotext's stock path: %s", piece, reason)


def use(piece: str, load: Callable[[], T]) -> T | None:
    """`load()` if `piece` is on and its private names are there; else None (the stock
    path), the reason logged once."""
    if piece not in PIECES:  # pragma: no cover - a typo in a caller
        raise ValueError(f"unknown piece {piece!r}")
    if switched_off(piece):
        off(piece, f"{ENV}={os.environ.get(ENV)}")
        return None
    try:
        return load()
    except (ImportError, AttributeError) as exc:
        off(piece, f"{type(exc).__name__}: {exc}")
        return None


def stock() -> list[str]:
    """The pieces on the stock path now (each tried once; for --debug and the tests)."""
    from dashboard.ui.forks import bindings, compositor, driver, tab_label

    probes = {
        "compositor": compositor.probe,
        "driver": driver.probe,
        "bindings": bindings.probe,
        "tab_label": tab_label.probe,
    }
    return [piece for piece, probe in probes.items() if use(piece, probe) is None]
