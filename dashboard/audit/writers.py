"""Audit sinks: the audit table (same transaction as the change) or a JSON-lines file.

Every action calls `sink.record(conn, ...)` inside its transaction, before it
commits (or, for a backend signal, before it signals), then `sink.finish(outcome)`
once the transaction is over.

- TableAudit inserts into queuetop.audit_log in the action's transaction: the
  change and its record commit or roll back together.
- FileAudit cannot share the transaction, so it writes ahead: the records go to
  the file with outcome "pending" and are fsynced *before* the commit; after the
  commit (or rollback) one more line gives the real outcome for that action_id.
  A crash in between leaves a "pending" record with no outcome: the change may
  or may not have happened, but nothing can have changed without a record.
"""

from __future__ import annotations

import errno
import getpass
import json
import os
import stat
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

import queries
from dashboard.errors import UserError

AUDIT_SCHEMA, AUDIT_TABLE = "queuetop", "audit_log"
ENABLE_HINT = "run 'queuetop init-audit' (needs CREATE on the database) or pass --audit-file PATH"


def os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (containers)
        return str(os.getuid()) if hasattr(os, "getuid") else "unknown"


@dataclass(frozen=True)
class AuditEntry:
    """One job or session an action touched."""

    target: str
    from_state: dict[str, Any] | None
    to_state: str | None
    outcome: str  # "changed" or "skipped"
    detail: dict[str, Any] | None = None


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


class AuditSink(Protocol):
    def record(
        self,
        conn: psycopg.Connection,
        action: str,
        queue_table: str | None,
        reason: str | None,
        entries: list[AuditEntry],
    ) -> None: ...

    def finish(self, outcome: str) -> None: ...


class TableAudit:
    """queuetop.audit_log, written in the action's own transaction."""

    def record(
        self,
        conn: psycopg.Connection,
        action: str,
        queue_table: str | None,
        reason: str | None,
        entries: list[AuditEntry],
    ) -> None:
        if not entries:
            return
        rows = [
            {
                "target": e.target,
                "from_state": _jsonable(e.from_state),
                "to_state": e.to_state,
                "outcome": e.outcome,
                "detail": _jsonable(e.detail),
            }
            for e in entries
        ]
        conn.execute(
            queries.load("actions/insert_audit"),
            {
                "os_user": os_user(),
                "action": action,
                "queue_table": queue_table,
                "reason": reason,
                "entries": Jsonb(rows),
            },
        )

    def finish(self, outcome: str) -> None:
        """Nothing to do: the rows committed or rolled back with the change."""


class FileAudit:
    """JSON lines, written ahead of the commit and fsynced; then one outcome line."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.action_id: str | None = None
        os.close(self._open())  # fail before touching the database, not before the commit

    def _open(self) -> int:
        """The file for appending: never through a symlink, created 0600, ours alone.

        A symlink planted at the path would send the records (and their appends) into
        another file; a file someone else owns could be read or rewritten by them.
        """
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(self.path, flags, 0o600)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UserError(
                    f"audit file {self.path} is a symbolic link; queuetop does not follow "
                    "one: pass the real file's path as --audit-file"
                ) from None
            raise UserError(
                f"cannot write audit file {self.path}: {exc.strerror}; "
                "pass a writable --audit-file path"
            ) from exc
        info = os.fstat(fd)
        why = None
        if not stat.S_ISREG(info.st_mode):
            why = "is not a regular file"
        elif info.st_uid != os.geteuid():
            why = f"belongs to another user (uid {info.st_uid})"
        if why is not None:
            os.close(fd)
            raise UserError(
                f"audit file {self.path} {why}; pass a file of your own as --audit-file"
            )
        return fd

    def _append(self, lines: list[dict[str, Any]]) -> None:
        with os.fdopen(self._open(), "a", encoding="utf-8") as f:
            for line in lines:
                f.write(json.dumps(_jsonable(line), sort_keys=True) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def record(
        self,
        conn: psycopg.Connection,
        action: str,
        queue_table: str | None,
        reason: str | None,
        entries: list[AuditEntry],
    ) -> None:
        self.action_id = str(uuid.uuid4())
        at = datetime.now(timezone.utc).isoformat()
        base = {
            "action_id": self.action_id,
            "at": at,
            "db_user": conn.info.user,
            "os_user": os_user(),
            "action": action,
            "queue_table": queue_table,
            "reason": reason,
        }
        self._append(
            [
                {
                    **base,
                    "target": e.target,
                    "from_state": e.from_state,
                    "to_state": e.to_state,
                    "outcome": "pending" if e.outcome == "changed" else e.outcome,
                    "detail": e.detail,
                }
                for e in entries
            ]
        )

    def finish(self, outcome: str) -> None:
        if self.action_id is None:
            return
        self._append(
            [
                {
                    "action_id": self.action_id,
                    "at": datetime.now(timezone.utc).isoformat(),
                    "outcome": outcome,
                }
            ]
        )
        self.action_id = None


def commit(conn: psycopg.Connection, sink: AuditSink) -> None:
    """Commit and give the sink the outcome; a failed COMMIT leaves the outcome unknown
    (the connection may have died after the server committed)."""
    try:
        conn.commit()
    except psycopg.Error as exc:
        sink.finish(f"unknown: commit failed ({type(exc).__name__}); check the queue table")
        raise
    sink.finish("committed")


def table_privileges(
    conn: psycopg.Connection, schema: str | None, table: str
) -> dict[str, Any] | None:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            queries.load("actions/check_table_privileges"),
            {"schema": schema or "public", "table": table},
        ).fetchone()


def choose_sink(conn: psycopg.Connection, audit_file: str | Path | None) -> AuditSink:
    """--audit-file if given, else the audit table if this role may append to it, else refuse."""
    if audit_file:
        return FileAudit(audit_file)
    privs = table_privileges(conn, AUDIT_SCHEMA, AUDIT_TABLE)
    if privs is None:
        raise UserError(
            f"no audit trail: the table {AUDIT_SCHEMA}.{AUDIT_TABLE} does not exist; {ENABLE_HINT}"
        )
    if not (privs["can_use_schema"] and privs["can_insert"]):
        raise UserError(
            f"no audit trail: role {privs['role']} may not append to {AUDIT_SCHEMA}.{AUDIT_TABLE}; "
            f"GRANT USAGE ON SCHEMA {AUDIT_SCHEMA} TO {privs['role']}; "
            f"GRANT INSERT ON {AUDIT_SCHEMA}.{AUDIT_TABLE} TO {privs['role']}; or pass --audit-file"
        )
    return TableAudit()
