"""The load generator's SQL, composed once per process from the queue spec.

Each statement lives in queries/loadgen/; this module only fills its
`{placeholders}` with identifiers and fixed SQL fragments. Columns the spec
does not name are left out of the SET lists, so a table without a lease
token still works, with weaker fencing (worker name, or none).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from psycopg import sql

import queries
from dashboard.errors import UserError
from dashboard.models import Derived, QueueSpec
from dashboard.queue_sql.parts import queue_parts

STRATEGIES: dict[str, str] = {
    "skip-locked": "loadgen/claim_skip_locked",
    "for-update": "loadgen/claim_for_update",
    "nowait": "loadgen/claim_nowait",
}
# Columns the demo table has beyond the spec's vocabulary; used when present.
PRIORITY_COLUMN = "priority"
FINISHED_COLUMN = "finished_at"
PAYLOAD_COLUMN = "payload"
_TEXT_TYPES = ("text", "character varying", "varchar")
_JSON_TYPES = ("json", "jsonb")


def check_strategy(name: str) -> str:
    if name not in STRATEGIES:
        raise UserError(f"unknown strategy {name!r}; choose one of: {', '.join(STRATEGIES)}")
    return name


def _assign(column: str, value: sql.Composable) -> sql.Composable:
    return sql.SQL(", {} = {}").format(sql.Identifier(column), value)


@dataclass(frozen=True)
class QueueSql:
    """Every statement a worker or the producer runs against one queue table."""

    claims: dict[str, sql.Composed]
    complete: sql.Composed
    fail: sql.Composed
    release: sql.Composed
    renew: sql.Composed | None
    enqueue: sql.Composed
    last_worker_number: sql.Composed
    # the rescuer (rescuer.py): observe and lock expired leases, then the guarded requeue;
    # None without lease_until or started_at (nothing tells that a lease expired)
    expired_leases: sql.Composed | None
    rescue: sql.Composed | None
    values: dict[str, Any]  # the raw state values every statement takes as parameters
    fenced_by: str  # "lease_token", "worker" or "nothing"

    def params(self, **extra: Any) -> dict[str, Any]:
        return {**self.values, **extra}

    def rendered(self, context: Any) -> QueueSql:
        """The same statements as bytes for `context` (a connection): composed once, not per
        execution, and eligible for psycopg's query cache; a hot loop needs that."""

        def render(stmt: Any) -> Any:
            return stmt.as_bytes(context) if isinstance(stmt, sql.Composable) else stmt

        return replace(
            self,
            claims={name: render(stmt) for name, stmt in self.claims.items()},
            **{
                f.name: render(getattr(self, f.name))
                for f in fields(self)
                if f.name not in ("claims", "values", "fenced_by")
            },
        )


def _state_values(spec: QueueSpec) -> dict[str, Any]:
    def first(*roles: str) -> str | None:
        for role in roles:
            if spec.values(role):
                return spec.values(role)[0]
        return None

    values = {
        "ready": first("ready"),
        "running": first("running"),
        "done": first("done"),
        "terminal": first("dead", "failed"),
    }
    missing = [role for role, value in values.items() if value is None]
    if missing:
        raise UserError(
            f"the queue spec of {spec.table} has no value for {', '.join(missing)}; "
            "the load generator needs ready, running, done and dead (or failed) states"
        )
    values["running_values"] = list(spec.values("running"))
    values["max_attempts"] = spec.policy.max_attempts or 3
    return values


def build(spec: QueueSpec) -> QueueSql:
    """Compose the statements for `spec` (validated, so column_types is filled)."""
    cols, types = spec.columns, spec.column_types
    derived = [f.name for f in fields(cols) if isinstance(getattr(cols, f.name), Derived)]
    if spec.adapter or derived or spec.worker_element:
        raise UserError(
            f"the load generator drives tables whose state and lease are plain "
            f"columns; {spec.table} belongs to {spec.adapter or 'a library'}: "
            "run that library's own workers against it"
        )
    parts = queue_parts(spec)
    ident = sql.Identifier

    order = (
        sql.SQL("t.{} DESC, t.{}").format(ident(PRIORITY_COLUMN), ident(cols.id))
        if PRIORITY_COLUMN in types
        else sql.SQL("t.{}").format(ident(cols.id))
    )

    lease: list[sql.Composable] = []
    if cols.worker:
        lease.append(_assign(cols.worker, sql.SQL("%(worker)s")))
    if cols.worker_pid:  # the claiming backend: liveness needs this pid, not the name alone
        lease.append(_assign(cols.worker_pid, sql.SQL("pg_backend_pid()")))
    if cols.lease_until:
        expiry = sql.SQL("now() + make_interval(secs => %(lease_s)s)")
        lease.append(_assign(cols.lease_until, expiry))
    if cols.lease_token:
        lease.append(_assign(cols.lease_token, sql.SQL("t.{} + 1").format(ident(cols.lease_token))))
    if cols.attempts:
        lease.append(_assign(cols.attempts, sql.SQL("t.{} + 1").format(ident(cols.attempts))))
    if cols.started_at:
        lease.append(_assign(cols.started_at, sql.SQL("now()")))

    null = sql.SQL("NULL")
    finish = [_assign(FINISHED_COLUMN, sql.SQL("now()"))] if FINISHED_COLUMN in types else []
    # a terminal failure ends the job too (its latency counts it failed); a retry does not
    ended = sql.SQL("CASE WHEN coalesce({}, %(max_attempts)s) >= %(max_attempts)s THEN now() END")
    fail_finish = (
        [_assign(FINISHED_COLUMN, ended.format(parts["attempts"]))]
        if FINISHED_COLUMN in types
        else []
    )
    unlease = [_assign(cols.lease_until, null)] if cols.lease_until else []
    unowned = [_assign(c, null) for c in (cols.worker, cols.worker_pid) if c]
    error = [_assign(cols.last_error, sql.SQL("%(error)s"))] if cols.last_error else []

    advance = (
        [_assign(cols.lease_token, sql.SQL("t.{} + 1").format(ident(cols.lease_token)))]
        if cols.lease_token
        else []
    )
    if cols.lease_token:
        guard = sql.SQL("t.{} = %(token)s").format(ident(cols.lease_token))
        fenced_by = "lease_token"
    elif cols.worker:
        guard, fenced_by = sql.SQL("t.{} = %(worker)s").format(ident(cols.worker)), "worker"
    else:
        guard, fenced_by = sql.SQL("TRUE"), "nothing"

    payload_col: sql.Composable = sql.SQL("")
    payload_value: sql.Composable = sql.SQL("")
    payload_type = types.get(PAYLOAD_COLUMN, "")
    if payload_type in _TEXT_TYPES or payload_type.startswith("character varying"):
        payload_col = sql.SQL(", {}").format(ident(PAYLOAD_COLUMN))
        payload_value = sql.SQL(", repeat('x', %(payload_bytes)s)")
    elif payload_type in _JSON_TYPES:
        payload_col = sql.SQL(", {}").format(ident(PAYLOAD_COLUMN))
        payload_value = sql.SQL(
            ", json_build_object('data', repeat('x', %(payload_bytes)s))::{}"
        ).format(sql.SQL(payload_type))

    def compose(name: str, **more: sql.Composable) -> sql.Composed:
        return queries.get(name, **{**parts, **more})

    joined = sql.SQL("").join
    expires = bool(cols.lease_until or cols.started_at)
    return QueueSql(
        claims={s: compose(q, order=order, lease_set=joined(lease)) for s, q in STRATEGIES.items()},
        complete=compose("loadgen/complete_job", finish_set=joined(finish + unlease), guard=guard),
        fail=compose(
            "loadgen/fail_job",
            fail_set=joined(error + unlease + unowned + fail_finish),
            guard=guard,
        ),
        release=compose("loadgen/release_job", release_set=joined(unlease + unowned), guard=guard),
        renew=compose("loadgen/renew_lease", lease_until_col=ident(cols.lease_until), guard=guard)
        if cols.lease_until
        else None,
        enqueue=compose(
            "loadgen/enqueue_jobs", payload_col=payload_col, payload_value=payload_value
        ),
        last_worker_number=compose("loadgen/get_last_worker_number"),
        expired_leases=compose("loadgen/lock_expired_leases") if expires else None,
        rescue=compose(
            "loadgen/rescue_expired_leases", requeue_set=joined(unlease + unowned + advance)
        )
        if expires
        else None,
        values=_state_values(spec),
        fenced_by=fenced_by,
    )
