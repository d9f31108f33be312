"""Monitor: one poll after another, each section read as often as its cost allows.

    monitor = Monitor(spec, interval=1.0)
    snap = monitor.poll(conn)      # conn from db.connect_monitor
    monitor.request_exact()        # the next poll counts every state exactly

The sections reading the queue table (counts, stale leases, finished states, or the
one pass that replaces them where no index serves) each have their own timeout; a
table locked by someone else degrades them alone, with the blocker named, while
locks, waits and idle sessions keep refreshing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import psycopg
from psycopg import errors

import queries
from dashboard import db
from dashboard.config import versions
from dashboard.errors import UserError
from dashboard.models import (
    Latency,
    QueueSpec,
    ServerInfo,
    Snapshot,
)
from dashboard.monitor import access, assemble, finished, server_versions, sessions
from dashboard.monitor import counts as counting
from dashboard.monitor.budget import (
    FINISHED_FLOOR_S,
    FINISHED_SHARE,
    PACE_FLOOR_S,
    SHARE,
    DbTimer,
    LoadMeter,
    Section,
)
from dashboard.monitor.latency import LatencyReader
from dashboard.monitor.plan import CountPlan, plan_counts
from dashboard.monitor.session_reader import DeadlockRate, SessionReader
from dashboard.monitor.sessions import SessionsRead
from dashboard.monitor.stale import read_stale
from dashboard.monitor.statement_bytes import StatementBytes
from dashboard.queue_sql.parts import queue_parts

TABLE_SECTIONS = ("counts", "stale", "finished", "scan")
LATENCY_READS_PER_WINDOW = 60  # a costly latency read: at most this many per window
LATENCY_MANY_JOBS = 2000  # a window holding fewer jobs is read on every poll


def jobs_in(latency: Latency) -> int:
    """The jobs the latency read counted (started and finished in its window)."""
    queue = latency.queue
    return sum(d.count for d in (queue.wait, queue.run) if d is not None)


SESSION_SECTIONS = ("locks", "waits", "idle")
FIRST_SCAN_TIMEOUT_MS = 10_000
MAX_SCAN_TIMEOUT_MS = 30_000


class TableBlocked(Exception):
    """A read of the queue table waited past lock_timeout: someone holds it exclusively."""


class Monitor:
    """The monitor of one queue: section clocks, the count plan, and the last data."""

    def __init__(
        self,
        spec: QueueSpec,
        interval: float = 2.0,
        *,
        exact: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.spec = spec
        self.interval = interval
        self.parts = queue_parts(spec)
        self.sections = {n: Section(n) for n in TABLE_SECTIONS + SESSION_SECTIONS}
        self.sections["finished"] = Section(
            "finished", share=FINISHED_SHARE, floor_s=FINISHED_FLOOR_S
        )
        self.sections["latency"] = Section("latency")  # paced like `finished` where no index serves
        self.latency = LatencyReader(spec, self.parts)
        self.plan: CountPlan | None = None
        self.clock = clock  # the sections' clocks (a test steps it; costs are measured)
        self.meter = LoadMeter(started=clock())
        self._exact = exact
        # per connection: its server, and the statement_timeout last set on it
        self._server: tuple[psycopg.Connection, ServerInfo] | None = None
        self._timeout: tuple[psycopg.Connection, int] | None = None
        self.unreadable = access.Unreadable()  # what this connection's role may not read
        self.notes: list[str] = []
        self._schema = versions.SchemaWatch(spec)  # the library's marker, re-read now and then
        self.statements = StatementBytes()  # composed once per connection, not each poll
        self.session_reader = SessionReader(spec, self.parts, self.statements)
        self.deadlocks = DeadlockRate()
        self.deadlocks_per_s: float | None = None

    def request_exact(self) -> None:
        """Count every state exactly on the next poll, whatever the table's size."""
        self._exact = True

    # --- one poll -----------------------------------------------------------------------

    def poll(self, conn: psycopg.Connection) -> Snapshot:
        timer = DbTimer()
        self.notes = []
        if self._server is not None and self._server[0] is not conn:
            for section in self.sections.values():  # back after an outage: read it all
                section.tried_at = None
        fresh = self._server is None or self._server[0] is not conn
        before = self._server[1] if self._server is not None else None
        server = self._server_info(conn)
        if fresh:
            self._check_access(conn)
            if before is not None and before.address != server.address:  # a host list moved on
                self.notes.append(
                    f"reconnected to another server: now on {server.address} "
                    f"(PostgreSQL {server.version}), was {before.address}"
                )
        if server.in_recovery:
            self.notes.append(f"{server.address} is a standby (in recovery): actions refuse there")
        blocked: str | None = None
        try:
            self._schema.check(conn, self.clock())
            self._table_sections(conn)
        except TableBlocked as exc:
            blocked = str(exc)
            main = self.sections["scan" if self.plan and self.plan.mode == "scan" else "counts"]
            if main.error != blocked:  # the plan itself could not be made
                main.failed(blocked, 0.0, self.clock(), self.interval, back_off=False)
        except errors.InsufficientPrivilege as exc:
            raise UserError(
                f"no read access to {self.spec.table}: {str(exc).splitlines()[0]}; "
                f"GRANT SELECT ON {self.spec.table} TO {conn.info.user}"
            ) from exc
        except versions.SCHEMA_ERRORS as exc:  # e.g. a library upgraded mid-watch
            raise self._schema.explain(conn, exc) from None
        # locks, waits and idle sessions: one statement, one moment (one section's clock)
        reader = self.session_reader
        if self._runs_here("locks", server):
            self._read(
                "locks", conn, lambda: reader.read(conn, self.plan, blocked is None), optional=True
            )
        read = self.sections["locks"]
        for name in ("waits", "idle"):
            self.sections[name] = replace(read, name=name)
        elapsed = timer.wall_s()
        now = self.clock()
        data = read.data if isinstance(read.data, SessionsRead) else None
        if data is not None and data.hidden_note:  # other roles' sessions hidden from us
            self.notes.append(data.hidden_note)
        if data is not None and read.read_at is not None and read.read_at == read.tried_at:
            self.deadlocks_per_s = self.deadlocks.rate(data.deadlocks, now)
        self.meter.add(timer.db_s(), now)
        return self._snapshot(server, elapsed, blocked, now)

    def _check_access(self, conn: psycopg.Connection) -> None:
        """On a new connection: which auxiliary tables its role may not read (each then
        degrades what it serves alone); the statements' parts follow."""
        unreadable = access.check(conn, self.spec)
        if unreadable.workers != self.unreadable.workers:
            parts = queue_parts(self.spec)
            self.parts = access.without_workers(parts) if unreadable.workers else parts
            self.plan = None  # its statements are composed from the parts
            self.statements = StatementBytes()  # so are these
            self.session_reader = SessionReader(self.spec, self.parts, self.statements)
        if unreadable.workers != self.unreadable.workers or unreadable.history:
            self.latency = LatencyReader(self.spec, self.parts, unreadable.history)
        self.unreadable = unreadable

    def _runs_here(self, name: str, server: ServerInfo) -> bool:
        line = server_versions.unavailable(name, server)
        if line is not None:  # left empty, the line saying which version it needs
            self.notes.append(line)
            self.sections[name].succeeded((), 0.0, self.clock(), self.interval)
        return line is None

    def _table_sections(self, conn: psycopg.Connection) -> None:
        now = self.clock()
        if any(s.error and "locked by" in s.error for s in self.sections.values()):
            table = self.spec.table  # still locked? say so without waiting lock_timeout
            who = sessions.table_blockers(conn, table.schema, table.name, held_only=True)
            if who:
                raise TableBlocked(f"{table} is locked by {who}")
        if self.plan is None or self.plan.stale(now):
            self.plan = self._guarded(conn, lambda: plan_counts(conn, self.spec, self.parts))
        exact, self._exact = self._exact, False
        if self.plan.mode == "scan":
            if self._due("scan", now) or exact:
                self._read(
                    "scan",
                    conn,
                    lambda: counting.count_in_one_pass(
                        conn, self.spec, self.parts, counting.xact_holders(conn), self.statements
                    ),
                    table=True,
                )
                self._refresh_stale(conn, now, force=True)
        else:
            if self._due("counts", now):
                self._read(
                    "counts",
                    conn,
                    # who holds which rows: the sessions statement, in its own moment
                    lambda: counting.count_through_indexes(
                        conn, self.spec, self.parts, self.plan, self.statements
                    ),
                    table=True,
                )
            self._refresh_stale(conn, now)
        if self.shown("finished") and (self._due("finished", now) or exact):
            self._read("finished", conn, lambda: self._finished(conn, exact), table=True)
        if self.shown("latency") and self._due("latency", now) and self._latency_due(now):
            self._read("latency", conn, lambda: self._latency(conn), table=True)

    def _latency_due(self, now: float) -> bool:
        """Percentiles over a window move little in a sixtieth of it: where the window
        holds many jobs (LATENCY_MANY_JOBS: its read sorts them all), it is read at most
        every window/60, 5 s for 5 minutes (every poll where the interval is longer). The
        demo at a 1 s refresh (12,000 jobs in its window) spent 1.8 % of a core of the
        server on the monitor, against 0.17 % for pg_activity's whole poll, mostly on
        numbers that barely changed between two reads. Decided by the jobs counted, not by
        a measured time: the same data is read as often on a loaded machine."""
        section = self.sections["latency"]
        last = section.data
        if not isinstance(last, Latency) or jobs_in(last) < LATENCY_MANY_JOBS:
            return True
        every = self.spec.policy.latency_window_s / LATENCY_READS_PER_WINDOW
        return now - (section.tried_at or 0.0) >= every - 0.5 * min(self.interval, 1.0)

    def _refresh_stale(self, conn: psycopg.Connection, now: float, force: bool = False) -> None:
        source = self.sections["scan" if self.plan.mode == "scan" else "counts"].data
        if source is None or not self.spec.can_find_stale() or self.unreadable.workers:
            return
        if source.stale == 0:
            self.sections["stale"].succeeded([], 0.0, now, self.interval)
        elif force or (self.plan.mode == "index" and self._due("stale", now)):
            # the count found them: read those rows through the primary key (a count that
            # names none, an adapter's own statement, leaves the running rows to filter)
            ids = source.stale_ids or None
            self._read(
                "stale",
                conn,
                lambda: read_stale(conn, self.spec, self.parts, self.statements, ids),
                table=True,
            )

    def _finished(self, conn: psycopg.Connection, exact: bool) -> finished.FinishedRead:
        """Finished values exactly, or the statistics to estimate them at snapshot time; and
        the rows of a dead-letter table."""
        spec, limit = self.spec, self.spec.policy.exact_count_limit
        read = finished.FinishedRead()
        if spec.history and self.unreadable.history:
            pass  # finished jobs live there alone; the snapshot says which grant is missing
        elif spec.history:
            stats = finished.read_statistics(conn, spec.history.table, spec.history.status)
            if exact or finished.table_rows(stats) < limit:
                self._set_timeout(conn, self._timeout_for("finished", full_read=True))
                read.values = ("exact", finished.count_history(conn, spec, self.parts))
            else:
                read.values = ("stats", stats)
        elif self.plan is not None and self.plan.mode == "index":
            column = spec.columns.real("status") or ""
            stats = finished.read_statistics(conn, spec.table, column)
            if exact or finished.table_rows(stats) < limit:
                self._set_timeout(conn, self._timeout_for("finished", full_read=True))
                read.values = ("exact", finished.count_exactly(conn, spec, self.parts))
            else:
                read.values = ("stats", stats)
        dead = spec.policy.dead_letter
        if dead and dead.kind == "table" and dead.table and not self.unreadable.dead_table:
            read.dead_rows, read.dead_estimated = finished.count_dead_table(
                conn, dead.table, limit, exact, self.statements
            )
        return read

    def _latency(self, conn: psycopg.Connection):
        """Wait and run times over the window; where no index serves its range (the plan
        says so), a read of whole tables: paced as the finished counts are, with their
        longer timeout."""
        reader, section = self.latency, self.sections["latency"]
        reader.plan(conn, self.clock())
        if reader.unserved:
            section.share, section.floor_s = FINISHED_SHARE, FINISHED_FLOOR_S
            self._set_timeout(conn, self._timeout_for("latency", full_read=True))
        else:
            section.share, section.floor_s = SHARE, PACE_FLOOR_S
        return reader.read(conn, self.statements)

    # --- running a section ---------------------------------------------------------------

    def _due(self, name: str, now: float) -> bool:
        section = self.sections[name]
        if not section.due(now, self.interval):
            return False
        # a costly read (one its cost paces) also waits for room in the last minute's budget
        return section.every_s <= self.interval or self.meter.room_for(section.cost_s, now)

    def _timeout_for(self, name: str, *, full_read: bool = False) -> int:
        """The interval's timeout, longer for a read of a whole table (the one pass, an
        exact count of the finished states): the statistics read before an exact count
        needs no more, and a poll then sets the timeout once, not three times."""
        base = db.monitor_timeout_ms(self.interval)
        if name != "scan" and not full_read:
            return base
        section = self.sections[name]
        # its cost so far measured a whole read only if the last one was (not the statistics)
        measured = name in ("scan", "latency") or (
            section.data is not None
            and section.data.values is not None
            and section.data.values[0] == "exact"
        )
        if section.read_at is None or not measured:
            return max(base, FIRST_SCAN_TIMEOUT_MS)
        return max(base, min(MAX_SCAN_TIMEOUT_MS, int(section.cost_s * 3000)))

    def _set_timeout(self, conn: psycopg.Connection, ms: int) -> None:
        if self._timeout is None or self._timeout[0] is not conn or self._timeout[1] != ms:
            conn.execute(queries.load("monitor/set_statement_timeout"), {"ms": str(ms)})
            self._timeout = (conn, ms)

    def _guarded(self, conn: psycopg.Connection, fn: Callable[[], Any]) -> Any:
        """A read of the queue table that names the blocker when the table is locked."""
        try:
            return fn()
        except errors.LockNotAvailable:
            table = self.spec.table
            who = sessions.table_blockers(conn, table.schema, table.name)
            raise TableBlocked(f"{table} is locked by {who}") from None

    def _read(
        self,
        name: str,
        conn: psycopg.Connection,
        fn: Callable[[], Any],
        *,
        table: bool = False,
        optional: bool = False,
    ) -> None:
        section = self.sections[name]
        self._set_timeout(conn, self._timeout_for(name))
        timer = DbTimer()
        try:
            data = self._guarded(conn, fn) if table else fn()
        except TableBlocked as exc:
            section.failed(str(exc), 0.0, self.clock(), self.interval, back_off=False)
            raise
        except errors.QueryCanceled:
            cost = timer.db_s()
            ms = self._timeout[1] if self._timeout else self._timeout_for(name)
            section.failed(
                f"timed out (statement_timeout {ms} ms)", cost, self.clock(), self.interval
            )
            return
        except errors.InsufficientPrivilege as exc:
            if not optional:
                raise
            self.notes.append(f"{name} unavailable: {str(exc).splitlines()[0]}")
            data = ()
        section.succeeded(data, timer.db_s(), self.clock(), self.interval)

    def _server_info(self, conn: psycopg.Connection) -> ServerInfo:
        # a standby's state is read again each poll: it may be promoted under us
        if self._server is None or self._server[0] is not conn or self._server[1].in_recovery:
            row = conn.execute(queries.load("monitor/get_server_info")).fetchone()
            address = db.describe_address(conn)  # a new connection may be on another host
            self._server = (conn, ServerInfo(row[0], row[1], row[2], address, row[3], row[4]))
        return self._server[1]

    # --- the snapshot --------------------------------------------------------------------

    def _snapshot(
        self, server: ServerInfo, elapsed: float, blocked: str | None, now: float
    ) -> Snapshot:
        return assemble.snapshot(self, server, elapsed, now)

    def age(self, name: str, now: float) -> float:
        read_at = self.sections[name].read_at
        return 0.0 if read_at is None else max(now - read_at, 0.0)

    def shown(self, name: str) -> bool:
        mode = self.plan.mode if self.plan else "index"
        if name == "scan":
            return mode == "scan"
        if name == "counts":
            return mode == "index"
        if name == "latency":
            return self.latency.measures
        if name == "finished":
            dead = self.spec.policy.dead_letter
            return (
                mode == "index"
                or self.spec.history is not None
                or bool(dead and dead.kind == "table")
            )
        return True


def collect(
    conn: psycopg.Connection, spec: QueueSpec, *, exact: bool = False, interval: float = 2.0
) -> Snapshot:
    """One snapshot of the queue and of the sessions around it (every section read once)."""
    return Monitor(spec, interval, exact=exact).poll(conn)
