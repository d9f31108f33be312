"""The pieces of every statement about the queue table, composed from its spec.

A statement names what it needs as `{placeholders}`: the table and id column as
identifiers, the state and every optional column as an expression over the row `t`
(a column, a derived expression from the adapter's SQL, or a typed NULL), and the
composites built from them: when a job's lease expires and whether its worker lives.
Used by the monitor, the actions and the load generator alike.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from psycopg import sql

import queries
from dashboard.models import Columns, Derived, QueueSpec
from dashboard.queue_sql import advisory, roles

# What an optional column reads as when the spec has no such column: a typed NULL.
ABSENT = {
    "created_at": "NULL::timestamptz",
    "scheduled_at": "NULL::timestamptz",
    "started_at": "NULL::timestamptz",
    "finished_at": "NULL::timestamptz",
    "worker": "NULL::text",
    "worker_pid": "NULL::int",
    "attempts": "NULL::int",
    "max_attempts": "NULL::int",
    "lease_until": "NULL::timestamptz",
    "lease_token": "NULL::bigint",
    "heartbeat": "NULL::timestamptz",
    "last_error": "NULL::text",
    "group": "NULL::text",
    "payload": "NULL::text",
    "advisory_lock": "NULL::bigint",
    "requeue_refusal": "NULL::text",
    "dead_letter_refusal": "NULL::text",
    "worker_alive": "NULL::boolean",
}
NAIVE_TIMESTAMP = "timestamp without time zone"


def statement(spec: QueueSpec, name: str, **parts: sql.Composable) -> sql.Composed:
    """Statement `name` (the adapter's own version where it has one) with its parts."""
    return queries.get(queries.resolve(name, spec.adapter), **parts)


def _interval(seconds: float) -> sql.Composable:
    return sql.SQL("make_interval(secs => {})").format(sql.Literal(float(seconds)))


def _timestamp(expr: sql.Composable, kind: str, zone: str | None) -> sql.Composable:
    """Timestamps without time zone read in the spec's zone (else the session's), so that
    every timestamp the monitor compares or returns carries its zone."""
    if not kind.startswith(NAIVE_TIMESTAMP):
        return expr
    if zone:
        return sql.SQL("({} AT TIME ZONE {})").format(expr, sql.Literal(zone))
    return sql.SQL("({})::timestamptz").format(expr)


def _column(spec: QueueSpec, key: str, base: dict[str, sql.Composable]) -> sql.Composable:
    value = getattr(spec.columns, key)
    if value is None:
        return sql.SQL(ABSENT.get(key, "NULL"))
    if isinstance(value, Derived):
        return queries.expression(queries.adapter_path(spec.adapter, value.name)).format(**base)
    expr: sql.Composable = sql.SQL("t.{}").format(sql.Identifier(value))
    kind = spec.column_types.get(value, "")
    if key == "worker" and spec.worker_element:
        return sql.SQL("({})[{}]").format(expr, sql.Literal(spec.worker_element))
    return _timestamp(expr, kind, spec.time_zone)


def _worker_seen(spec: QueueSpec, worker: sql.Composable) -> sql.Composable:
    """The last heartbeat of the job's worker in the workers table (NULL: no such worker)."""
    workers = spec.workers
    if workers is None:
        return sql.SQL("NULL::timestamptz")
    seen = _timestamp(
        sql.SQL("w.{}").format(sql.Identifier(workers.last_seen)),
        spec.workers_types.get(workers.last_seen, ""),
        spec.time_zone,
    )
    return sql.SQL(
        "(SELECT max({seen}) FROM {table} AS w WHERE w.{key}::text = ({worker})::text)"
    ).format(
        seen=seen,
        table=sql.Identifier(*workers.table.parts()),
        key=sql.Identifier(workers.key),
        worker=worker,
    )


def _session_alive(
    spec: QueueSpec, worker: sql.Composable, pid: sql.Composable, kind: str
) -> sql.Composable:
    """Whether the job's worker still has a session: one named as the worker column says
    (or whose pid it holds). Any role may give its session any application_name, so where
    the spec has a worker_pid column (the claiming backend's pid) the session must have
    that pid too: a session merely named like a dead worker keeps nothing alive. A job
    claimed before that column was filled (its pid NULL) reads as unknown."""
    match = sql.SQL("a.pid::text" if kind == "pid" else "a.application_name")
    if spec.columns.worker_pid is None:
        return sql.SQL(
            "CASE WHEN ({worker}) IS NULL THEN NULL ELSE EXISTS ("
            "SELECT 1 FROM pg_stat_activity AS a "
            "WHERE {match} = ({worker})::text) END"
        ).format(worker=worker, match=match)
    return sql.SQL(
        "CASE WHEN ({worker}) IS NULL OR ({pid}) IS NULL THEN NULL ELSE EXISTS ("
        "SELECT 1 FROM pg_stat_activity AS a "
        "WHERE a.pid = ({pid})::int AND {match} = ({worker})::text) END"
    ).format(worker=worker, pid=pid, match=match)


def liveness_parts(spec: QueueSpec, cols: dict[str, sql.Composable]) -> dict[str, sql.Composable]:
    """`expires_at` (when a running job's lease ran out) and `worker_alive` (true, false, or
    NULL when unknown), from the lease, the heartbeats, and the start time."""
    worker, kind = cols["worker"], spec.liveness
    seen = _worker_seen(spec, worker)
    if kind == "heartbeat":
        timeout = _interval(spec.policy.heartbeat_timeout_s)
        live_expiry = sql.SQL("{} + {}").format(cols["heartbeat"], timeout)
        alive = sql.SQL("coalesce({} > now() - {}, false)").format(cols["heartbeat"], timeout)
    elif kind == "workers":
        timeout = _interval(spec.workers.timeout_s)
        # a job whose worker left the table (or never had one) ran out when it started
        live_expiry = sql.SQL("coalesce({seen} + {timeout}, {started}, {created}, now())").format(
            seen=seen, timeout=timeout, started=cols["started_at"], created=cols["created_at"]
        )
        alive = sql.SQL("coalesce({} > now() - {}, false)").format(seen, timeout)
    else:
        live_expiry = sql.SQL("NULL::timestamptz")
        if kind == "none":
            alive = sql.SQL("NULL::boolean")
        else:
            alive = _session_alive(spec, worker, cols["worker_pid"], kind)
    if spec.columns.worker_alive:
        # the adapter's own liveness; a job whose worker is known dead has run out, as one
        # whose worker left the workers table has
        alive = cols["worker_alive"]
        live_expiry = sql.SQL("CASE WHEN {} = false THEN coalesce({}, now()) END").format(
            alive, cols["started_at"]
        )
    live_expiry, alive = advisory.liveness(spec, cols, live_expiry, alive)
    stale_after = sql.SQL("{} + {}").format(
        cols["started_at"], _interval(spec.policy.stale_after_s)
    )
    expires = sql.SQL("coalesce(least({lease}, {live}), {stale_after})").format(
        lease=cols["lease_until"], live=live_expiry, stale_after=stale_after
    )
    return {
        "expires_at": expires,
        "worker_alive": alive,
        "worker_seen": seen,
        "is_stale": sql.SQL("({} <= now())").format(expires),
    }


def read_column(spec: QueueSpec) -> Any:
    """`name -> t.name` for conditions: a timestamp without time zone in the spec's zone."""

    def column(name: str) -> sql.Composable:
        expr = sql.SQL("t.{}").format(sql.Identifier(name))
        return _timestamp(expr, spec.column_types.get(name, ""), spec.time_zone)

    return column


def key_parts(spec: QueueSpec) -> dict[str, sql.Composable]:
    """`{job_id}`, the job's key over the row t, and `{id_type}`, what a given id is cast to:
    the column and its type, or for a composite key the JSON array of its columns (an id is
    then given as that array: ["send-email", "42"])."""
    key = spec.columns.key
    if len(key) == 1:
        return {
            "id": sql.Identifier(key[0]),
            "job_id": sql.SQL("t.{}").format(sql.Identifier(key[0])),
            "id_type": sql.SQL(spec.column_types.get(key[0], "text")),
        }
    return {
        # statements that name the key column itself (the dead-letter table's) refuse it
        "id": sql.Identifier(key[0]),
        "job_id": sql.SQL("jsonb_build_array({})").format(
            sql.SQL(", ").join(sql.SQL("t.{}").format(sql.Identifier(c)) for c in key)
        ),
        "id_type": sql.SQL("jsonb"),
    }


def table_query(spec: QueueSpec) -> str | None:
    """The adapter's own `table.sql` where its jobs are not the rows of one table (awa's
    queue storage spreads a job over a ring of append-only tables): a query whose rows are
    the jobs, with the table's columns (and any of its own). None: the table itself."""
    path = queries.adapter_path(spec.adapter, "table") if spec.adapter else None
    return path if path and queries.exists(path) else None


def _table(spec: QueueSpec) -> sql.Composable:
    """`{table}`: the queue table, or the adapter's table_query, which every statement
    reading `{table} AS t` then reads. A query cannot be written or row-locked: such an
    adapter writes its own actions/lock_jobs and do_* statements."""
    path = table_query(spec)
    if path is None:
        return sql.Identifier(*spec.table.parts())
    return queries.expression(path).format(schema=sql.Identifier(spec.table.schema or "public"))


def queue_parts(spec: QueueSpec) -> dict[str, sql.Composable]:
    """The `{placeholders}` of a queue statement: identifiers, expressions, composites."""
    cols = spec.columns
    base: dict[str, Any] = {
        "table": _table(spec),
        **key_parts(spec),
        # for adapters' SQL reading the library's other tables
        "schema": sql.Identifier(spec.table.schema or "public"),
        # what a preset's table pattern left open (pgmq.q_*): the queue's name, for the
        # library's functions its SQL calls (NULL where the table is no pattern's)
        "table_match": sql.SQL("{}::text").format(sql.Literal(spec.table_match)),
        # the library's other tables of this queue ([queue.tables]), resolved by validation
        **{f"{name}_table": sql.Identifier(*t.parts()) for name, t in spec.tables.items()},
    }
    base |= advisory.lock_parts(spec, _column(spec, "advisory_lock", base))
    if spec.rules:
        state = roles.state_case(spec, read_column(spec))
        status, status_type = state, sql.SQL("text")
    elif isinstance(cols.status, Derived):
        state = queries.expression(queries.adapter_path(spec.adapter, cols.status.name)).format(
            **base
        )
        status, status_type = state, sql.SQL("text")
    else:
        status = sql.Identifier(cols.status)
        state = sql.SQL("t.{}").format(status)
        status_type = sql.SQL(spec.column_types.get(cols.status, "text"))
    exprs = {
        f.name: _column(spec, f.name, base)
        for f in fields(Columns)
        if f.name not in ("id", "status")
    }
    ready_since = sql.SQL("coalesce({}, {})").format(exprs["scheduled_at"], exprs["created_at"])
    return {
        **base,
        "status": status,
        "state": state,
        "status_type": status_type,
        "ready_since": ready_since,
        **exprs,
        **liveness_parts(spec, {**base, **exprs}),
        **history_parts(spec),
    }


def value_rows(
    spec: QueueSpec, parts: dict[str, sql.Composable], value: str, placeholder: sql.Composable
) -> sql.Composable:
    """The rows in state `value`: `state = placeholder` (an index on the value serves it),
    or where roles are rules, that rule's own conditions (an index on them serves it)."""
    if spec.rules:
        rows = roles.rows_of_label(spec, value, read_column(spec))
        if rows is not None:
            return rows
    return sql.SQL("{} = {}").format(parts["state"], placeholder)


def history_parts(spec: QueueSpec) -> dict[str, sql.Composable]:
    """`{history_table}` and `{history_status}` where the spec has a history table: an
    adapter's statements may log there as the library does (pgqueuer_log)."""
    if spec.history is None:
        return {}
    return {
        "history_table": sql.Identifier(*spec.history.table.parts()),
        "history_status": sql.Identifier(spec.history.status),
    }


def value_placeholders(
    spec: QueueSpec, roles: tuple[str, ...], prefix: str = "v"
) -> tuple[list[tuple[str, sql.Composable]], dict]:
    """One named parameter per raw value of `roles`: [(value, placeholder)], params."""
    values = spec.values_of(roles)
    holders = [(v, sql.Placeholder(f"{prefix}{i}")) for i, v in enumerate(values)]
    return holders, {f"{prefix}{i}": v for i, v in enumerate(values)}


def state_in(
    spec: QueueSpec, roles: tuple[str, ...], parts: dict[str, sql.Composable], prefix: str = "s"
) -> tuple[sql.Composable, dict]:
    """`(state = %(s0)s OR state = %(s1)s …)`: an OR of equalities, which partial indexes
    on each value can serve (a bitmap OR), unlike `state = ANY(array)`; where roles are
    rules, an OR of their rows."""
    holders, params = value_placeholders(spec, roles, prefix)
    if not holders:
        return sql.SQL("false"), {}
    return sql.SQL("({})").format(
        sql.SQL(" OR ").join(value_rows(spec, parts, v, p) for v, p in holders)
    ), params
