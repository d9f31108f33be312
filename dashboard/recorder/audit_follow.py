"""Following the audit trail while recording, apart from the poll.

The poll is not touched: the trail is read on its own schedule (every FOLLOW_EVERY_S, by the
recorder's loop or thread, never inside a poll, and once more when recording stops) on a
monitor connection (autocommit, read-only, statement timeout): its own, or, for `queuetop
record`'s loop, which polls and follows on one thread, the poll's between two polls (one
session fewer on the server, and no connection set up for the trail). The table is read by an id
watermark (the primary key serves it); the watermark trails by SLACK_S, since an action that
took its id earlier may commit later, and re-read records are written once. A file is read
from its end back to a time watermark, SLACK_S behind the newest record seen: a record
written as pending gets its outcome line a moment later.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import psycopg
from psycopg import errors
from psycopg.rows import dict_row

import queries
from dashboard import db
from dashboard.audit import trail
from dashboard.audit.trail import AuditRecord
from dashboard.errors import UserError

FOLLOW_EVERY_S = 30.0
SLACK_S = 60.0
PAGE = 500
TIMEOUT_MS = 2000
# after a failure (no table, no grant, no server) the next try waits this long
RETRY_AFTER_S = 60.0


class AuditFollower:
    """New audit records since the recording started, from the table or an --audit-file."""

    def __init__(
        self,
        dsn: str | None,
        audit_file: str | Path | None,
        started: datetime,
        *,
        table: str | None = None,
        every_s: float = FOLLOW_EVERY_S,
        clock=time.monotonic,
    ):
        self.dsn = dsn
        self.audit_file = Path(audit_file) if audit_file else None
        if self.audit_file is not None:  # it may not exist yet (no action taken), its place must
            if self.audit_file.is_dir():
                raise UserError(f"--audit-file {self.audit_file} is a directory: give the file")
            if not self.audit_file.parent.is_dir():
                raise UserError(
                    f"no directory {self.audit_file.parent} for --audit-file {self.audit_file}"
                )
        # the actions taken while recording (none from before it started), on the queue
        # recorded (`table`, as the actions write it) or on sessions (no table)
        self.since = started
        self.table = table
        self.every_s = every_s
        self.clock = clock
        self.problem: str | None = None  # why the last read failed (said once by `record`)
        self._conn: psycopg.Connection | None = None  # its own, where it has one
        self._borrow: Callable[[], psycopg.Connection | None] | None = None
        self._next_at = 0.0
        self._after_id = 0
        self._reads: deque[tuple[float, int]] = deque()  # (when, highest id then)
        self._newest_at: datetime | None = None

    @property
    def source(self) -> str:
        return str(self.audit_file) if self.audit_file else trail.AUDIT_NAME

    def share(self, connection: Callable[[], psycopg.Connection | None]) -> None:
        """Read on the connection `connection()` returns where it is open (the caller's
        poll connection, used on the caller's thread between its polls), else on its own."""
        self._borrow = connection

    def due(self) -> bool:
        return self.clock() >= self._next_at

    def read(self) -> list[AuditRecord]:
        """The records since the watermarks; [] (and `problem` set) when it cannot read."""
        now = self.clock()
        self._next_at = now + self.every_s
        try:
            records = self._read_file() if self.audit_file else self._read_table(now)
        except (psycopg.Error, UserError, OSError) as exc:
            self._close()
            self.problem = _first_line(exc)
            self._next_at = now + RETRY_AFTER_S
            return []
        self.problem = None
        return [r for r in records if self._ours(r)]

    def _ours(self, record: AuditRecord) -> bool:
        return self.table is None or record.queue_table in (None, self.table)

    def _read_file(self) -> list[AuditRecord]:
        if not self.audit_file.exists():  # no action taken yet: nothing written
            return []
        since = self.since
        if self._newest_at is not None:
            since = max(since, self._newest_at - timedelta(seconds=SLACK_S))
        page = trail.read_file(self.audit_file, since, limit=10_000)
        if page.records:
            newest = max(r.at for r in page.records)
            self._newest_at = max(newest, self._newest_at or newest)
        return list(page.records)

    def _connection(self) -> psycopg.Connection:
        borrowed = self._borrow() if self._borrow is not None else None
        if borrowed is not None and not borrowed.closed:
            self._close()  # the one it opened while the poll's was down
            return borrowed
        if self._conn is None or self._conn.closed:
            self._conn = db.connect_monitor(self.dsn or "", timeout_ms=TIMEOUT_MS)
        return self._conn

    def _read_table(self, now: float) -> list[AuditRecord]:
        conn = self._connection()
        records: list[AuditRecord] = []
        after = self._after_id
        highest = after
        try:
            with conn.cursor(row_factory=dict_row) as cur:
                while True:
                    rows = cur.execute(
                        queries.load("recorder/get_audit_after"),
                        {"after_id": after, "since": self.since, "limit": PAGE},
                    ).fetchall()
                    records += [trail.record_of_row(r) for r in rows]
                    if rows:
                        after = highest = max(highest, rows[-1]["audit_id"])
                    if len(rows) < PAGE:
                        break
        except errors.UndefinedTable as exc:
            raise UserError(
                f"no audit table {trail.AUDIT_NAME}: actions are not recorded "
                "(queuetop init-audit creates it, or pass the actions' --audit-file)"
            ) from exc
        except errors.InsufficientPrivilege as exc:
            raise UserError(
                f"may not read {trail.AUDIT_NAME}: actions are not recorded "
                f"(GRANT SELECT ON {trail.AUDIT_NAME})"
            ) from exc
        # the next read starts from the highest id seen SLACK_S ago, not from this one
        self._reads.append((now, highest))
        while len(self._reads) > 1 and self._reads[1][0] <= now - SLACK_S:
            self._reads.popleft()
        if self._reads[0][0] <= now - SLACK_S:
            self._after_id = self._reads[0][1]
        return records

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except psycopg.Error:  # already broken
                pass

    def close(self) -> None:
        self._close()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
