"""A snapshot with the literals of every query text replaced by `?` (record --redact-queries).

A recording holds the query text of other sessions (the locks, waits, idle transactions
and blockers it shows), and query text can hold secrets (`ALTER ROLE … PASSWORD '…'`).
Redacted, a recording still shows which statement waited on which, as pg_stat_statements
shows them, and can be shared.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dashboard.models import Snapshot
from dashboard.text.query_literals import normalised


def _each(items: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(replace(item, query=normalised(item.query)) for item in items)


def without_literals(snap: Snapshot) -> Snapshot:
    return replace(
        snap,
        locks=_each(snap.locks),
        waiting=_each(snap.waiting),
        idle_in_transaction=_each(snap.idle_in_transaction),
        blockers=_each(snap.blockers),
    )
