"""The tables of the main screen: waiting sessions, idle transactions, stale leases (and the
locks table, from locks_table.py)."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding

from dashboard.models import (
    IdleTransaction,
    QueueSpec,
    SessionInfo,
    Snapshot,
    StaleLease,
    Threshold,
    WaitingSession,
    id_text,
)
from dashboard.render.report import age
from dashboard.render.who_holds import (
    HeldRows,
    held_rows,
    jobs_text,
)
from dashboard.text.untrusted import escape_controls, shown
from dashboard.ui.widgets.columns import FIRST, LATER, QUERY, QUERY_WIDTH, R
from dashboard.ui.widgets.keyedtable import Col, KeyedTable
from dashboard.ui.widgets.locks_table import LocksTable

__all__ = ["IdleTable", "LocksTable", "StaleLeaseTable", "WaitingTable", "session_bindings"]

ALIVE = {True: "yes", False: "NO", None: "?"}
JOBS_COLUMN = 23  # the waiting table's: 'waits 11406 holds 11405'


def _dash(value: object) -> object:
    return "-" if value is None else value


def session_bindings(table_id: str) -> list[Binding]:
    """Cancel / terminate the session under the cursor (guarded by pid + backend start)."""
    return [
        Binding(
            "C",
            f"app.signal_session('cancel', '{table_id}')",
            "Cancel query",
            tooltip="Cancel the current query of the session under the cursor",
        ),
        Binding(
            "T",
            f"app.signal_session('terminate', '{table_id}')",
            "Terminate",
            tooltip="End the session under the cursor (its transaction rolls back)",
        ),
    ]


class QueueScoped:
    """A sessions table with the locks tab's `l` filter: the sessions that concern the queue
    (Snapshot.queue_pids), or the whole database. The tab label says which."""

    queue_only = True

    def describe(self, short: bool = False) -> str:
        if short:
            return "queue" if self.queue_only else "all"
        return "queue sessions" if self.queue_only else "whole db"

    def in_scope(self, snap: Snapshot) -> frozenset[int] | None:
        """The pids shown, or None for every session."""
        return snap.queue_pids if self.queue_only else None


class WaitingTable(QueueScoped, KeyedTable):
    """Waiting sessions as blocker -> waiters: each root blocker, its waiters indented below."""

    TITLE = "Waiting sessions"
    SHORT_TITLE = "Waiting"
    BINDINGS = session_bindings("waiting")
    COLUMNS = (
        Col("session", "blocker -> waiters", 19),
        Col("age", "xact/wait", 9, R),
        Col("what", "state / wait event", 19),
        Col("jobs", "jobs", JOBS_COLUMN),
        # the query fills what is left: 2 cells under the others' least, for the jobs
        Col("app", "application", 18, **LATER),
        Col("query", "query", QUERY_WIDTH - 2, **QUERY),
    )

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._label: dict[str, str] = {}  # the first column: who blocks how many, or depth
        self._held: dict[int, HeldRows] = {}  # pid -> the queue rows it holds row-locked

    def update_from(self, snap: Snapshot) -> None:
        children: dict[int, list[WaitingSession]] = {}
        scope = self.in_scope(snap)
        waiting = [w for w in snap.waiting if scope is None or w.pid in scope]
        waiters = {w.pid: w for w in waiting}
        roots: list[int] = []
        for w in sorted(waiting, key=lambda w: (-(w.wait_s or 0.0), w.pid)):
            chain = w.chain or (w.blocked_by[0] if w.blocked_by else w.pid, w.pid)
            parent = chain[-2] if len(chain) > 1 else None
            if parent is None or parent == w.pid:
                roots.append(w.pid)
                continue
            children.setdefault(parent, []).append(w)
            if chain[0] not in waiters and chain[0] not in roots:
                roots.append(chain[0])
        blockers = {b.pid: b for b in snap.blockers}
        self._held = held_rows(snap)
        rows: list[tuple[str, object]] = []
        self._label.clear()
        seen: set[int] = set()

        def visit(pid: int, depth: int) -> None:
            if pid in seen:
                return
            seen.add(pid)
            key = f"s{pid}"
            if depth == 0 and pid not in waiters:
                rows.append((key, blockers.get(pid)))
                self._label[key] = f"{pid} blocks {len(children.get(pid, []))}"
            elif depth == 0:
                # waiting, yet no session blocks it any more: the lock is being granted
                # (read a moment after pg_locks said it waited); never shown as a blocker
                rows.append((key, waiters[pid]))
                self._label[key] = f"{pid} (blocker left)"
            else:
                rows.append((key, waiters[pid]))
                self._label[key] = "  " * (depth - 1) + "└ " + str(pid)
            for child in children.get(pid, []):
                visit(child.pid, depth + 1)

        for root in roots:
            visit(root, 0)
        for pid in waiters:  # cycles: show what the walk did not reach
            visit(pid, 1)
        self.set_rows(rows)

    def count(self) -> int:
        """Sessions waiting; their blockers are rows too, but not waiting ones."""
        return sum(isinstance(item, WaitingSession) for item in self.items.values())

    def jobs(self, pid: int, waits_for: object = None) -> str:
        """'waits 7' (the job whose row it is queued on), 'holds 1,2 +3' (row-locked), or
        both: a waiter whose first row was finished by its holder keeps its lock on that
        row and queues for the next one."""
        held = self._held.get(pid)
        if waits_for is None:
            return f"holds {jobs_text(held.job_ids, held.rows, 8)}" if held else ""
        text = f"waits {waits_for}"
        if held:
            room = max(JOBS_COLUMN - len(text) - len(" holds "), 1)
            text += f" holds {jobs_text(held.job_ids, held.rows, room)}"
        return text

    def values(self, key: str, item: SessionInfo | WaitingSession | None) -> tuple:
        label = self._label[key]
        if isinstance(item, WaitingSession):
            return (
                label,
                age(item.wait_s),
                item.wait_event,
                self.jobs(item.pid, item.job_id),
                item.application_name,
                item.query,
            )
        if item is None:  # a blocker whose session the snapshot did not catch
            pid = int(key[1:])
            return (label, "-", "?", self.jobs(pid), "?", "")
        return (
            label,
            age(item.xact_age_s),
            item.state,
            self.jobs(item.pid),
            item.application_name,
            item.query,
        )


class IdleTable(QueueScoped, KeyedTable):
    """Sessions idle in a transaction, oldest transaction first, with their xmin age."""

    TITLE = "Idle in transaction"
    SHORT_TITLE = "Idle"
    BINDINGS = session_bindings("idle")
    COLUMNS = (
        Col("pid", "pid", 7, R),
        Col("xact", "xact age", 8, R),
        Col("idle", "idle", 8, R),
        Col("xmin", "xmin age (xids)", 15, R),
        Col("locks", "locks", 5, R, **FIRST),
        Col("jobs", "holds jobs", 12),
        Col("app", "application", 18, **LATER),
        Col("user", "user", 10, **FIRST),
        Col("query", "last query", QUERY_WIDTH, **QUERY),
    )

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._held: dict[int, HeldRows] = {}  # pid -> the queue rows it holds row-locked

    def update_from(self, snap: Snapshot) -> None:
        # pg_stat_activity is not read atomically: xact_start can be NULL for a moment
        scope = self.in_scope(snap)
        idle = sorted(
            (i for i in snap.idle_in_transaction if scope is None or i.pid in scope),
            key=lambda i: (-(i.xact_age_s or 0.0), i.pid),
        )
        self._held = held_rows(snap)
        self.set_rows((f"p{i.pid}", i) for i in idle)

    def values(self, key: str, i: IdleTransaction) -> tuple:
        held = self._held.get(i.pid)
        return (
            i.pid,
            age(i.xact_age_s),
            age(i.idle_s),
            _dash(i.xmin_age),
            i.locks_held,
            jobs_text(i.job_ids, i.rows_held)
            if i.job_ids
            else (jobs_text(held.job_ids, held.rows) if held else ""),
            i.application_name,
            i.user,
            i.query,
        )


class StaleLeaseTable(KeyedTable):
    """Stale leases, most overdue first; the operator marks rows with space for recovery."""

    # the top line names the threshold in force (stale_threshold_text)
    DEFAULT_CSS = """
    StaleLeaseTable { border-top: solid $primary-darken-2; border-title-align: left; }
    """

    TITLE = "Stale leases"
    SHORT_TITLE = "Stale"
    BINDINGS = [
        Binding("space", "toggle_mark", "Mark", tooltip="Mark or unmark the stale lease"),
        Binding("a", "mark_all", "Mark all", tooltip="Mark every stale lease shown"),
        Binding("u", "clear_marks", "Unmark all", tooltip="Clear every mark"),
        Binding(
            "R",
            "app.requeue_stale",
            "Requeue",
            tooltip="Requeue the marked stale leases (or the one under the cursor)",
        ),
        Binding(
            "D",
            "app.dead_letter_stale",
            "Dead-letter",
            tooltip="Dead-letter the marked stale leases (or the one under the cursor)",
        ),
    ]
    COLUMNS = (
        Col("id", "job id", 9, R),
        Col("mark", "✓", 1),
        Col("overdue", "overdue", 7, R),
        Col("worker", "worker", 18, fill=True),
        Col("alive", "alive", 5),
        Col("token", "token", 5, R),
        Col("attempts", "tries", 5, R, **FIRST),
        Col("started", "started at", 10, **LATER),
        Col("status", "status", 8),
    )

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.marked: set[str] = set()
        # the load generator's crashes: job id -> "! crash" (the `!` key) or "random crash"
        self.crash_causes: dict[str, str] = {}
        self._title: str | None = None  # the threshold line shown

    def set_crash_causes(self, causes: dict[str, str]) -> None:
        if causes != self.crash_causes:
            self.crash_causes = causes
            self.refresh()  # the worker column reads them when a line is painted

    def cell_style(self, column: str, value: object) -> str | None:
        # a worker that still has a session may still be working on the job
        return "bold yellow" if column == "alive" and value == ALIVE[True] else None

    def update_from(self, snap: Snapshot) -> None:
        title = stale_threshold_text(snap.threshold)
        if title != self._title:  # setting a title repaints, hidden or not: only a change
            self._title = title
            self.border_title = title
        leases = sorted(snap.stale_leases, key=lambda s: (-(s.overdue_s or 0.0), id_text(s.id)))
        # a job that is no longer stale loses its mark: it must not be recovered by surprise
        self.marked &= {id_text(s.id) for s in leases}
        self.set_rows((id_text(s.id), s) for s in leases)

    def values(self, key: str, s: StaleLease) -> tuple:
        # a clock time, not an age: it does not change on every poll (the detail has the date)
        started = f"{s.started_at:%H:%M:%S}" if s.started_at else "-"
        cause = self.crash_causes.get(key)
        worker = f"{_dash(s.worker)} ({cause})" if cause else _dash(s.worker)
        return (
            key,  # the id as typed: a composite key as its JSON array
            "●" if key in self.marked else "",
            age(s.overdue_s),
            worker,
            ALIVE[s.worker_alive],
            _dash(s.lease_token),
            _dash(s.attempts),
            started,
            s.status,
        )

    def selected_job_ids(self) -> list:
        """The ids of the marked stale leases, in table order."""
        return [self.items[k].id for k in self.items if k in self.marked]

    def selected_leases(self) -> list[StaleLease]:
        """The marked leases as observed (state, token): what a guarded action needs."""
        return [self.items[k] for k in self.items if k in self.marked]

    def _refresh_marks(self) -> None:
        self.refresh()  # the mark column reads self.marked when a line is painted

    def action_toggle_mark(self) -> None:
        key = self.cursor_key()
        if key is None:
            return
        self.marked ^= {key}
        self._refresh_marks()
        self.move_cursor(self.cursor_row + 1)

    def action_mark_all(self) -> None:
        self.marked = set(self.items)
        self._refresh_marks()

    def action_clear_marks(self) -> None:
        self.marked.clear()
        self._refresh_marks()


def stale_unknown_text(spec: QueueSpec) -> Text:
    """What the stale-lease tab says, in full, when the spec cannot tell a stale lease."""
    cols = spec.columns
    named = {c for c in (cols.created_at, cols.scheduled_at, cols.heartbeat) if c}
    candidates = [
        c
        for c, kind in spec.column_types.items()
        if kind.startswith("timestamp") and c not in named
    ]
    text = Text()
    table = shown(spec.table)  # names from the spec and the catalog: escaped
    text.append(f"STALE LEASES CANNOT BE COMPUTED for {table}\n", style="bold black on yellow")
    text.append(
        "The queue spec names no lease_until, started_at, heartbeat or workers table, so "
        "no running job can be told stale: this tab stays empty whatever happens.\n"
    )
    text.append("Pass ", style="")
    text.append("--started-at-column COLUMN", style="bold")
    text.append(" (stale after ")
    text.append("--stale-after DURATION", style="bold")
    text.append(f", now {spec.policy.stale_after_s:g}s) or ")
    text.append("--lease-until-column COLUMN", style="bold")
    text.append(", or set started_at / lease_until in the queue TOML.")
    if candidates:
        text.append(f"\nTimestamp columns of {table}: {shown(', '.join(candidates))}", style="dim")
    return text


def stale_threshold_text(threshold: Threshold | None) -> Text | None:
    """The stale tab's top line: when a running job counts as stale, and who said so (the
    preset's default, the spec, --stale-after). Names come from the spec: escaped, no markup."""
    if threshold is None:
        return None
    return Text(escape_controls(threshold.describe()), no_wrap=True, overflow="ellipsis")
