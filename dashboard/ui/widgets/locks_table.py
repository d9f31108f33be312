"""The locks table of the main screen: what matters first, ordinary locks folded."""

from __future__ import annotations

from collections import Counter

from textual.binding import Binding

from dashboard.models import Snapshot
from dashboard.render.report import age
from dashboard.render.who_holds import (
    MEMBER_MODES,
    FoldedLocks,
    HeldRows,
    fold_ordinary,
    held_rows,
    lock_kind,
    lock_state,
    lock_target,
    row_lock_mode,
)
from dashboard.ui.widgets.columns import FIRST, LATER, QUERY, QUERY_WIDTH, R
from dashboard.ui.widgets.keyedtable import Col, KeyedTable


class LocksTable(KeyedTable):
    """Live locks, what matters first: the row locks sessions hold (in the rows, not in
    pg_locks), the waits, the places in a row's queue ('queued for job 42', never a row
    lock held), the queue table's conflicting locks, then the rest; each session's
    ordinary table locks (RowShare, RowExclusive, AccessShare, its own transaction id) fold
    into one line, which `f` unfolds.

    Queue view: the sessions that hold or await a lock on the queue table or hold its rows,
    so a worker waiting for another's row (a transactionid lock, on no relation) shows
    beside its place in the row's queue. Database view: every session.
    """

    TITLE = "Locks"
    SHORT_TITLE = "Locks"
    # one key, two bindings: the footer names what `f` does now (check_action shows one)
    BINDINGS = [
        Binding(
            "f",
            "unfold",
            "Unfold locks",
            tooltip="List every lock, each session's ordinary table locks too (f folds again)",
        ),
        Binding(
            "f",
            "fold",
            "Fold locks",
            tooltip="Fold each session's ordinary table locks into one line (f unfolds)",
        ),
    ]
    COLUMNS = (
        Col("pid", "pid", 7, R),
        Col("granted", "held", 5),
        Col("mode", "mode", 17),
        Col("type", "type", 13, **FIRST),
        Col("relation", "on", 22),
        Col("app", "application", 18, **LATER),
        Col("n", "locks", 5, R, **FIRST),
        Col("wait", "waiting", 7, R),
        Col("query", "query", QUERY_WIDTH, **QUERY),
    )

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.queue_only = True
        self.folded = True
        self._snap: Snapshot | None = None
        self._counts: Counter[tuple] = Counter()  # locks per group
        self._waits_for: dict[int, object] = {}  # pid -> the job whose row it is queued on
        self._queue_relations: set[tuple[int, str | None]] = set()

    def cell_style(self, column: str, value: object) -> str | None:
        if column == "granted" and value in ("WAIT", "first"):
            return "bold yellow"
        return None

    def describe(self, short: bool = False) -> str:
        """Which sessions the table lists (the `l` filter); `short` for a narrow tab."""
        if short:
            return "queue" if self.queue_only else "all"
        return "queue sessions" if self.queue_only else "whole db"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "unfold":
            return self.folded
        if action == "fold":
            return not self.folded
        return super().check_action(action, parameters)

    def action_unfold(self) -> None:
        self.action_toggle_fold()

    def action_fold(self) -> None:
        self.action_toggle_fold()

    def action_toggle_fold(self) -> None:
        self.folded = not self.folded
        self.refresh_bindings()
        if self._snap is not None:
            self.update_from(self._snap)
        self.notify("locks: " + ("ordinary ones folded" if self.folded else "all"), timeout=2)

    def update_from(self, snap: Snapshot) -> None:
        self._snap = snap
        self._counts = Counter()
        self._waits_for = {w.pid: w.job_id for w in snap.waiting if w.job_id is not None}
        held = held_rows(snap)
        self._queue_relations = {(lk.pid, lk.relation) for lk in snap.locks if lk.on_queue_table}
        pids = {lk.pid for lk in snap.locks if lk.on_queue_table} | set(held)
        shown = [lk for lk in snap.locks if lk.pid in pids or not self.queue_only]
        kept, folded = fold_ordinary(shown) if self.folded else (shown, [])
        groups: dict[tuple, object] = {}
        for h in held.values():  # on the queue table: in both views
            key = (h.pid, "rows", "", h.queue, True, None)
            self._counts[key] = h.rows
            groups[key] = h
        for lk in kept:
            key = (lk.pid, lk.locktype, lk.mode, lk.relation, lk.granted, lk.job_id)
            self._counts[key] += 1
            groups.setdefault(key, lk)
        for f in folded:
            key = (f.pid, "folded", "", None, True, None)
            self._counts[key] = f.count
            groups[key] = f
        self.set_rows((key, groups[key]) for key in sorted(groups, key=self._rank))

    def _rank(self, key: tuple) -> tuple:
        """Held rows, waits, row queues, the queue table's other locks, the rest, folded."""
        pid, kind, mode, relation, granted, job = key
        if kind == "rows":
            cls = 0
        elif not granted:
            cls = 1
        elif kind == "tuple":
            cls = 2
        elif kind == "folded":
            cls = 5
        elif kind == "relation" and (pid, relation) in self._queue_relations:
            cls = 3
        else:
            cls = 4
        return (cls, pid, kind, mode, relation or "", str(job or ""))

    def values(self, key: tuple, lk) -> tuple:
        n = self._counts[key]
        if isinstance(lk, HeldRows):
            held = lk.target(16)
            mode = MEMBER_MODES.get(lk.mode, lk.mode) if lk.mode else "held in the rows"
            return (lk.pid, "yes", mode, "row locks", held, lk.application_name, n, "", "")
        if isinstance(lk, FoldedLocks):
            return (
                lk.pid,
                "yes",
                lk.strongest,
                "table locks",
                lk.describe(),
                lk.application_name,
                n,
                "",
                lk.query,
            )
        # a row's queue by the row lock asked for (wants FOR UPDATE), a table lock's mode
        # without "Lock"; a lock on no relation (a transaction id, an advisory lock) says
        # what it is on
        return (
            lk.pid,
            lock_state(lk),
            row_lock_mode(lk),
            lock_kind(lk),
            lock_target(lk, self._waits_for.get(lk.pid)),
            lk.application_name,
            n,
            "" if lk.wait_s is None else age(lk.wait_s),
            lk.query,
        )
