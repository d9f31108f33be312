"""The sessions section of a poll: one statement, composed once per count plan, with what
the monitor carries between polls (the rows transactions were seen queued on, the last
deadlock count)."""

from __future__ import annotations

from dataclasses import replace

import psycopg
from psycopg import errors, sql

from dashboard.models import ACTIVE_ROLES, QueueSpec
from dashboard.monitor import sessions
from dashboard.monitor.plan import CountPlan
from dashboard.monitor.row_holders import SeenRows
from dashboard.monitor.sessions import SessionsRead
from dashboard.monitor.statement_bytes import StatementBytes
from dashboard.queue_sql import advisory


def active_values(plan: CountPlan | None) -> tuple[str, ...]:
    """The values whose rows are read for their holders every poll: the active ones an
    index serves (index mode); none in scan mode, where no index does."""
    if plan is None or plan.mode != "index":
        return ()
    return tuple(v.value for v in plan.exact_values if v.role in ACTIVE_ROLES)


class SessionReader:
    def __init__(
        self, spec: QueueSpec, parts: dict[str, sql.Composable], statements: StatementBytes
    ) -> None:
        self.spec = spec
        self.parts = parts
        self.seen = SeenRows()
        self._bytes = statements  # the monitor's: composing each poll cost a seventh of it
        self._multixacts = True  # off once the server refused to read one

    def _statement(self, conn: psycopg.Connection, values: tuple[str, ...] | None) -> bytes:
        multixacts = self._multixacts
        return self._bytes.get(
            conn,
            (values, multixacts),
            lambda: sessions.compose(self.spec, self.parts, values, multixacts=multixacts),
        )

    def read(
        self, conn: psycopg.Connection, plan: CountPlan | None, table_readable: bool
    ) -> SessionsRead:
        """One reading; the queue rows left out while the table is locked by someone else
        (the statement would wait for it), or when it turns out to be."""
        values = active_values(plan) if table_readable else None
        try:
            read = self._read(conn, values)
        except errors.LockNotAvailable:
            read = self._read(conn, None)
        except errors.InternalError_:
            # a multixact truncated between the range check and the read: decode none
            # from now on rather than fail every poll on a server that races like this
            self._multixacts = False
            read = self._read(conn, values)
        self.seen.update(read)
        if table_readable and self.spec.columns.advisory_lock is not None:
            read.locks = advisory.name_jobs(conn, self.spec, self.parts, read.locks)
        jobs = {pid: row.job_id for pid, row in read.queued.items()}
        read.locks = [
            replace(lk, job_id=jobs.get(lk.pid)) if lk.is_row_queue and lk.on_queue_table else lk
            for lk in read.locks
        ]
        return read

    def _read(self, conn: psycopg.Connection, values: tuple[str, ...] | None) -> SessionsRead:
        seen = self.seen.ids() if values is not None else []
        return sessions.read_sessions(conn, self.spec, self._statement(conn, values), values, seen)


class DeadlockRate:
    """pg_stat_database.deadlocks per second between two polls."""

    def __init__(self) -> None:
        self._last: tuple[float, int] | None = None

    def rate(self, total: int | None, now: float) -> float | None:
        if total is None:
            return None
        last, self._last = self._last, (now, total)
        if last is None or now <= last[0] or total < last[1]:  # first poll, or stats reset
            return None
        return (total - last[1]) / (now - last[0])
