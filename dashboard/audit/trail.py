"""Reading the audit trail back: the latest records of queuetop.audit_log or of a JSON-lines
audit file, newest first, in one shape (AuditRecord).

A file is written ahead (see audit.FileAudit): each record of a change is written as
"pending" before the commit, and one line with the same action_id gives the outcome
after it. Reading joins them: a pending record whose action committed reads "changed",
one that rolled back reads "rolled back", and one without an outcome line (queuetop died
between the two) reads "no outcome": the change may or may not have happened.

Reads only: the table through a monitor connection (autocommit, read-only, statement
timeout), the file from its end, so a long file costs what the latest records cost.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import psycopg
from psycopg import errors
from psycopg.rows import dict_row

import queries
from dashboard import db
from dashboard.audit.writers import AUDIT_SCHEMA, AUDIT_TABLE
from dashboard.errors import UserError

AUDIT_NAME = f"{AUDIT_SCHEMA}.{AUDIT_TABLE}"
DEFAULT_LIMIT = 50
READ_TIMEOUT_MS = 5000
BLOCK = 64 * 1024
# a file's outcome line -> what its pending records read as
FILE_OUTCOMES = {"committed": "changed", "rolled back": "rolled back"}
NO_OUTCOME = "no outcome"


@dataclass(frozen=True)
class AuditRecord:
    """One job or session an action touched, as its audit record tells it."""

    at: datetime
    action: str
    target: str  # a job id or a backend pid, as text (the audit's column is text)
    outcome: str  # changed, skipped; from a file also rolled back, unknown: …, no outcome
    reason: str | None = None
    from_state: dict[str, Any] | None = None
    to_state: str | None = None
    db_user: str | None = None
    os_user: str | None = None
    queue_table: str | None = None
    detail: dict[str, Any] | None = None
    record_id: str = ""  # audit_id (table) or action_id (file): where to find it

    @property
    def was(self) -> str:
        """The state it was in: a job's status, a session's state."""
        state = self.from_state or {}
        return str(state.get("status") or state.get("state") or "-")

    @property
    def who(self) -> str:
        """'ops (alice)': the database role, and the OS user where it differs."""
        if self.os_user and self.os_user != self.db_user:
            return f"{self.db_user or '-'} ({self.os_user})"
        return self.db_user or "-"

    @property
    def what_happened(self) -> str:
        """The outcome, with the reason of a skip: 'skipped: completed meanwhile'."""
        return f"skipped: {self.skip_reason}" if self.skip_reason else self.outcome

    @property
    def skip_reason(self) -> str | None:
        return (self.detail or {}).get("skip_reason") if self.outcome == "skipped" else None

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape (`queuetop audit --json`): times in ISO 8601 with their offset."""
        return {
            "at": self.at.isoformat(),
            "action": self.action,
            "target": self.target,
            "outcome": self.outcome,
            "skip_reason": self.skip_reason,
            "reason": self.reason,
            "from_state": self.from_state,
            "to_state": self.to_state,
            "db_user": self.db_user,
            "os_user": self.os_user,
            "queue_table": self.queue_table,
            "detail": self.detail,
            "record_id": self.record_id,
        }


@dataclass(frozen=True)
class AuditPage:
    """The latest records of one audit trail, newest first."""

    source: str  # "queuetop.audit_log" or the file's path
    records: tuple[AuditRecord, ...] = ()
    unreadable: int = 0  # lines of a file that are not a record (e.g. cut by a crash)
    notes: tuple[str, ...] = field(default=())


def read_table(
    conn: psycopg.Connection, since: datetime | None = None, limit: int = DEFAULT_LIMIT
) -> AuditPage:
    """The latest rows of queuetop.audit_log; one clear UserError when it cannot be read."""
    try:
        with conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(
                queries.load("audit/get_latest_audit"), {"since": since, "limit": limit}
            ).fetchall()
    except errors.UndefinedTable as exc:
        raise UserError(
            f"no audit table {AUDIT_NAME} in database {conn.info.dbname}: nothing "
            "was audited there (actions may write to a file: pass --audit-file "
            "PATH; 'queuetop init-audit' creates the table)"
        ) from exc
    except errors.InsufficientPrivilege as exc:
        raise UserError(
            f"role {conn.info.user} may not read {AUDIT_NAME}: GRANT USAGE ON SCHEMA "
            f"{AUDIT_SCHEMA} TO {conn.info.user}; GRANT SELECT ON {AUDIT_NAME} TO {conn.info.user}"
        ) from exc
    except errors.QueryCanceled as exc:
        raise UserError(
            f"reading {AUDIT_NAME} timed out; pass --since or a smaller --limit"
        ) from exc
    return AuditPage(AUDIT_NAME, tuple(record_of_row(r) for r in rows))


def record_of_row(r: dict[str, Any]) -> AuditRecord:
    """One row of queuetop.audit_log (as audit/get_latest_audit.sql selects it)."""
    return AuditRecord(
        at=r["at"],
        action=r["action"],
        target=r["target"],
        outcome=r["outcome"],
        reason=r["reason"],
        from_state=r["from_state"],
        to_state=r["to_state"],
        db_user=r["db_user"],
        os_user=r["os_user"],
        queue_table=r["queue_table"],
        detail=r["detail"],
        record_id=f"audit_id {r['audit_id']}",
    )


def _lines_from_end(path: Path) -> Iterator[bytes]:
    """The lines of a file, last first, read in blocks from its end."""
    with path.open("rb") as f:
        f.seek(0, os.SEEK_END)
        end = f.tell()
        rest = b""
        while end > 0:
            start = max(0, end - BLOCK)
            f.seek(start)
            chunk = f.read(end - start) + rest
            end = start
            lines = chunk.split(b"\n")
            rest = lines.pop(0)  # may be cut: completed by the next block
            yield from reversed(lines)
        yield rest


def _parse_at(text: Any) -> datetime | None:
    try:
        at = datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return at if at.tzinfo else at.replace(tzinfo=timezone.utc)


MAX_LINE = 1_000_000  # bytes: an audit line is a few hundred; a longer one is no record
MAX_DEPTH = 32  # nesting of a record's detail: queuetop writes two levels
TEXT_FIELDS = ("reason", "db_user", "os_user", "queue_table", "to_state")
OBJECT_FIELDS = {"from_state": (dict, str), "detail": (dict,)}  # or null


def _shallow(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether `value` nests no deeper than `limit` (walked without recursion)."""
    todo = [(value, 0)]
    while todo:
        item, depth = todo.pop()
        if depth > limit:
            return False
        if isinstance(item, dict):
            todo.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            todo.extend((v, depth + 1) for v in item)
    return True


def _well_formed(line: Any) -> bool:
    """A JSON object with the fields of a record or an outcome line, of their types."""
    if not isinstance(line, dict) or not isinstance(line.get("at"), str):
        return False
    if not isinstance(line.get("action_id"), (str, int)) or isinstance(line["action_id"], bool):
        return False
    for key in ("action", "target", "outcome", *TEXT_FIELDS):
        if key in line and not (line[key] is None or isinstance(line[key], str)):
            return False
    for key, kinds in OBJECT_FIELDS.items():
        value = line.get(key)
        if value is not None and not (isinstance(value, kinds) and _shallow(value)):
            return False
    return True


def read_file(
    path: str | Path, since: datetime | None = None, limit: int = DEFAULT_LIMIT
) -> AuditPage:
    """The latest records of a JSON-lines audit file, each joined with its outcome line.

    Any file may be given: a line that is not a well-formed record (not JSON, nested deeper
    than a record is, a field of the wrong type, longer than any record) is skipped and
    counted, never a crash."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"no audit file {path}: pass the --audit-file the actions were given")
    outcomes: dict[str, str] = {}  # action_id -> its outcome line (which follows its records)
    records: list[AuditRecord] = []
    unreadable = 0
    try:
        for raw in _lines_from_end(path):
            if not raw.strip():
                continue
            try:
                if len(raw) > MAX_LINE:
                    raise ValueError("too long")
                line = json.loads(raw)
                if not _well_formed(line):
                    raise ValueError("not a record")
                at = _parse_at(line["at"])
                action_id = str(line["action_id"])
            except (ValueError, KeyError, TypeError, RecursionError):
                unreadable += 1
                continue
            if at is None:
                unreadable += 1
                continue
            if since is not None and at < since:
                break  # appended in time order: everything before is older still
            if "target" not in line:  # an outcome line
                outcomes.setdefault(action_id, str(line.get("outcome")))
                continue
            outcome = str(line.get("outcome"))
            if outcome == "pending":
                told = outcomes.get(action_id)
                outcome = FILE_OUTCOMES.get(told, told) if told else NO_OUTCOME
            records.append(
                AuditRecord(
                    at=at,
                    action=str(line.get("action")),
                    target=str(line.get("target")),
                    outcome=outcome,
                    reason=line.get("reason"),
                    from_state=line.get("from_state"),
                    to_state=line.get("to_state"),
                    db_user=line.get("db_user"),
                    os_user=line.get("os_user"),
                    queue_table=line.get("queue_table"),
                    detail=line.get("detail"),
                    record_id=f"action_id {action_id}",
                )
            )
            if len(records) >= limit:
                break
    except OSError as exc:
        raise UserError(f"cannot read audit file {path}: {exc.strerror}") from exc
    notes = (
        (f"{unreadable} line(s) of {path} are not audit records (skipped)",) if unreadable else ()
    )
    return AuditPage(str(path), tuple(records), unreadable, notes)


def read_latest(
    dsn: str | None,
    audit_file: str | Path | None,
    since: datetime | None = None,
    limit: int = DEFAULT_LIMIT,
    timeout_ms: int = READ_TIMEOUT_MS,
) -> AuditPage:
    """The latest records of the audit trail in use: the file if there is one, else the table,
    read on a monitor connection (autocommit, read-only, statement timeout)."""
    if audit_file:
        return read_file(audit_file, since, limit)
    with db.connect_monitor(dsn or "", timeout_ms=timeout_ms) as conn:
        return read_table(conn, since, limit)
