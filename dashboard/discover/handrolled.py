"""Tables that look like hand-rolled queues: a state column with queue-like values, claim
timestamps, a worker column. Each signal adds to the score; a table that merely has a
`status` column (orders: pending, paid, shipped) never reaches high confidence, because
a queue's states include both waiting and running values, and a queue records who
claimed a job and when."""

from __future__ import annotations

import psycopg

from dashboard.config import USUAL_NAMES
from dashboard.discover.catalog import TableInfo, state_values
from dashboard.discover.found import FoundQueue

STATE_NAMES = ("status", "state", "job_status", "job_state", "stage", "phase")
WAITING = {"pending", "queued", "ready", "available", "new", "todo", "waiting", "enqueued"}
RUNNING = {
    "running",
    "processing",
    "active",
    "in_progress",
    "in-progress",
    "claimed",
    "locked",
    "picked",
    "doing",
    "working",
    "started",
    "leased",
    "taken",
}
FINISHED = {
    "done",
    "completed",
    "complete",
    "succeeded",
    "success",
    "successful",
    "finished",
    "failed",
    "error",
    "errored",
    "dead",
    "discarded",
    "cancelled",
    "canceled",
}
# The claim's own columns: who holds the job, since when, until when, its last heartbeat.
CLAIM_KEYS = ("started_at", "lease_until", "heartbeat")
TEXTUAL = ("text", "character varying", "character", "USER-DEFINED", '"char"')


def _state_column(info: TableInfo) -> str | None:
    for name in STATE_NAMES:
        if name in info.types:
            return name
    return next(iter(info.enum_labels), None)  # an enum column stands for a state too


def _found(info: TableInfo, key: str) -> str | None:
    return next((n for n in USUAL_NAMES.get(key, ()) if n in info.types), None)


def score(conn: psycopg.Connection, info: TableInfo) -> FoundQueue | None:
    """The table as a queue, with its confidence and reasons; None without any signal."""
    why: list[str] = []
    columns: dict[str, str] = {}
    state = _state_column(info)
    kinds: set[str] = set()
    if state:
        values = {v.lower() for v in state_values(conn, info, state)}
        kinds = {
            kind
            for kind, vocab in (("waiting", WAITING), ("running", RUNNING), ("finished", FINISHED))
            if values & vocab
        }
        if kinds:
            shown = ", ".join(sorted(values)[:6])
            why.append(f"state column {state} ({shown}: {', '.join(sorted(kinds))} values)")
            columns["status"] = state
    claims = {key: col for key in CLAIM_KEYS if (col := _found(info, key))}
    worker = _found(info, "worker")
    attempts = _found(info, "attempts")
    if claims:
        why.append("claim timestamps " + ", ".join(claims.values()))
    if worker:
        why.append(f"worker column {worker}")
    if attempts:
        why.append(f"attempts column {attempts}")
    columns |= claims | ({"worker": worker} if worker else {})
    queue_states = {"waiting", "running"} <= kinds
    if queue_states and claims and worker:
        confidence = "high"
    elif (queue_states and (claims or worker or attempts)) or (kinds and claims and worker):
        confidence = "medium"
    elif kinds or (claims and worker):
        confidence = "low"
    else:
        return None
    if not state or "status" not in columns:
        return FoundQueue(info.table, "low", why=tuple(why), flags=("--table", str(info.table)))
    return FoundQueue(
        table=info.table,
        confidence=confidence,
        why=tuple(why),
        flags=_flags(info, columns),
        columns=columns,
    )


def _flags(info: TableInfo, columns: dict[str, str]) -> tuple[str, ...]:
    flags = ["--table", str(info.table)]
    if columns["status"] != "status":
        flags += ["--status-column", columns["status"]]
    return tuple(flags)  # the other columns `--table` finds by their usual names itself
