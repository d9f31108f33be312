"""The spec against the live catalog: tables, columns, types, adapters' SQL, warnings."""

from __future__ import annotations

import re
from dataclasses import fields, replace

import psycopg
from psycopg import errors
from psycopg.rows import dict_row

import queries
from dashboard.config import thresholds, versions
from dashboard.config.row_security import check_rows_visible
from dashboard.config.understood import understood
from dashboard.config.value_types import check_values
from dashboard.errors import UserError
from dashboard.models import Columns, Derived, QueueSpec, TableName

# With `--table` alone, the usual names of each optional column, tried in this order.
USUAL_NAMES: dict[str, tuple[str, ...]] = {
    "created_at": ("created_at", "inserted_at", "enqueued_at", "queued_at", "created"),
    "scheduled_at": ("scheduled_at", "run_at", "run_after", "scheduled_for", "available_at"),
    "started_at": (
        "started_at",
        "attempted_at",
        "picked_at",
        "claimed_at",
        "locked_at",
        "started_on",
    ),
    "finished_at": (
        "finished_at",
        "completed_at",
        "completed_on",
        "finalized_at",
        "done_at",
        "ended_at",
        "processed_at",
    ),
    "worker": ("worker", "worker_id", "locked_by", "claimed_by", "owner"),
    "worker_pid": ("worker_pid",),
    "attempts": ("attempts", "attempt", "tries", "attempt_count", "retry_count"),
    "max_attempts": ("max_attempts",),
    "lease_until": ("lease_until", "leased_until", "locked_until", "lease_expires_at"),
    "lease_token": ("lease_token", "lease_version", "fencing_token"),
    "heartbeat": ("heartbeat", "heartbeat_at", "last_heartbeat", "heartbeated_at"),
    "last_error": ("last_error", "error_message", "error"),
    "group": ("queue", "queue_name"),
    "payload": ("payload", "args", "data", "body"),
}


def resolve_table(conn: psycopg.Connection, table: TableName) -> tuple[TableName, int] | None:
    """The schema-qualified table and its oid, or None if it does not exist."""
    row = conn.execute(
        queries.load("config/find_table"), {"schema": table.schema, "name": table.name}
    ).fetchone()
    return (TableName(row[1], row[0]), row[2]) if row else None


def _column_types(conn: psycopg.Connection, oid: int) -> dict[str, str]:
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(queries.load("config/get_columns"), {"oid": oid}).fetchall()
    return {r["name"]: r["type"] for r in rows}


def _existing(conn: psycopg.Connection, table: TableName, what: str) -> tuple[TableName, int]:
    found = resolve_table(conn, table)
    if found is None:
        existing = [r[0] for r in conn.execute(queries.load("config/list_tables")).fetchall()]
        listing = ", ".join(existing[:30]) + (" …" if len(existing) > 30 else "") or "none"
        raise UserError(
            f"{what} {table} not found in database {conn.info.dbname}; "
            f"tables there: {listing}. Fix the queue spec or --table"
        )
    return found


def pattern_tables(conn: psycopg.Connection, pattern: TableName) -> list[TableName]:
    """The tables of a pattern (`pgmq.q_*`: one per queue), by name, partitions left out."""
    head, _, tail = pattern.name.partition("*")
    like = "%".join(re.sub(r"([\\%_])", r"\\\1", part) for part in (head, tail))
    rows = conn.execute(
        queries.load("config/list_pattern_tables"), {"like": like, "schema": pattern.schema}
    ).fetchall()
    found = [TableName(name, schema) for schema, name in rows]
    return [t for t in found if pattern.match(t) is not None]


def _pick_one(conn: psycopg.Connection, spec: QueueSpec, table: TableName | None = None) -> str:
    """Why a pattern needs `--table` (or why the table given is none of its tables)."""
    pattern = spec.table_pattern or spec.table
    found = pattern_tables(conn, pattern)
    listing = ", ".join(map(str, found[:30])) + (" …" if len(found) > 30 else "")
    where = f"in database {conn.info.dbname}"
    have = f"the queues {where}: {listing}" if found else f"none is {where}"
    who = spec.source if spec.table_pattern else "--table"  # a '*' typed in --table itself
    if table is None:
        return f"{who} names one table per queue ({pattern}): pick one with --table; {have}"
    return f"{table} is not one of the queue tables of {who} ({pattern}); {have}"


def _need_columns(table: TableName, types: dict[str, str], wanted: dict[str, str]) -> None:
    for key, column in wanted.items():
        if column not in types:
            raise UserError(
                f"column {column!r} ({key}) not found in table {table}; "
                f"its columns: {', '.join(types)}. Fix the queue spec"
            )


def _need_time(table: TableName, key: str, column: str, kind: str) -> None:
    if not kind.startswith("timestamp"):
        raise UserError(
            f"column {column!r} ({key}) of {table} is {kind}, not a timestamp; name a "
            "timestamp column (or leave it out: the run times are then not measured)"
        )


def detect_columns(spec: QueueSpec, types: dict[str, str]) -> QueueSpec:
    """Fill unset optional columns with the usual names the table has (`--table` alone)."""
    found = {}
    for key, names in USUAL_NAMES.items():
        if getattr(spec.columns, key) is None:
            taken = {getattr(spec.columns, f.name) for f in fields(Columns)} | set(found.values())
            match = next((n for n in names if n in types and n not in taken), None)
            if match:
                found[key] = match
    return replace(spec, columns=replace(spec.columns, **found)) if found else spec


def _named_columns(spec: QueueSpec) -> dict[str, str]:
    """Every column the spec names: the key's, the state's, the optional ones, the rules'."""
    named = {
        f.name: getattr(spec.columns, f.name)
        for f in fields(Columns)
        if isinstance(getattr(spec.columns, f.name), str)
    }
    key = spec.columns.key
    if len(key) > 1:
        named.update({f"id ({i + 1} of {len(key)})": c for i, c in enumerate(key)})
    for rule in spec.rules:
        for cond in rule.conditions:
            named[f"{rule.role} condition"] = cond.column
    return named


def adapter_sql_missing(spec: QueueSpec) -> list[str]:
    """Derived names whose SQL file the adapter lacks."""
    missing = []
    for f in fields(Columns):
        value = getattr(spec.columns, f.name)
        path = queries.adapter_path(spec.adapter, value.name) if isinstance(value, Derived) else ""
        if path and not queries.exists(path):
            missing.append(f"{f.name} (queries/presets/{spec.adapter}/{value.name}.sql)")
    return missing


def validate(conn: psycopg.Connection, spec: QueueSpec) -> QueueSpec:
    """Check the spec against the catalog; return it schema-qualified, with column types.

    Raises UserError naming what is missing and listing what exists.
    """
    if spec.table.is_pattern:
        raise UserError(_pick_one(conn, spec))
    table, oid = _existing(conn, spec.table, "table")
    if spec.table_pattern and spec.table_pattern.match(table) is None:
        raise UserError(_pick_one(conn, spec, table))
    check_rows_visible(conn, table, oid)
    # the library's version first: a schema it does not know fails here, in its words
    spec = versions.check(conn, replace(spec, table=table), oid)
    types = _column_types(conn, oid)
    spec = check_values(conn, spec, types)  # what was given, before anything reads with it
    if spec.understand:
        given = {k: c for k, c in _named_columns(spec).items() if k.split(" ")[0] in spec.given}
        given |= {f"{r.role} condition": c.column for r in spec.rules for c in r.conditions}
        _need_columns(table, types, given)  # the flags' own names, before any inference
        spec = understood(conn, spec, oid)
    elif spec.source == "flags":
        spec = detect_columns(spec, types)
    _need_columns(table, types, _named_columns(spec))
    finished = spec.columns.real("finished_at")
    if finished:  # run times subtract it from the start time
        _need_time(table, "finished_at", finished, types[finished])
    spec = check_values(conn, spec, types)  # and what understanding or detection added
    missing_sql = adapter_sql_missing(spec)
    if missing_sql:
        raise UserError(
            f"adapter {spec.adapter} has no SQL for {', '.join(missing_sql)}; "
            "check the adapter name in the queue spec"
        )
    worker = spec.columns.real("worker")
    if spec.worker_element and worker and not types[worker].endswith("[]"):
        raise UserError(
            f"worker_element is set but column {worker!r} of {table} is "
            f"{types[worker]}, not an array; remove worker_element"
        )
    if spec.time_zone:
        try:
            with conn.transaction():
                conn.execute("SELECT now() AT TIME ZONE %s", (spec.time_zone,))
        except errors.InvalidParameterValue:
            raise UserError(
                f"bad time_zone {spec.time_zone!r}: the server knows no such zone; "
                "use a name such as 'UTC' or 'Europe/Paris'"
            ) from None
    spec = replace(spec, table=table, column_types=types)
    if spec.tables:  # the library's other tables of this queue: `*` as the queue table's
        match = spec.table_match or ""
        spec = replace(
            spec,
            tables={
                name: _existing(
                    conn, TableName(t.name.replace("*", match), t.schema), f"{name} table"
                )[0]
                for name, t in spec.tables.items()
            },
        )
    if spec.workers:
        wt, woid = _existing(conn, spec.workers.table, "workers table")
        wtypes = _column_types(conn, woid)
        _need_columns(
            wt,
            wtypes,
            {"workers.key": spec.workers.key, "workers.last_seen": spec.workers.last_seen},
        )
        spec = replace(spec, workers=replace(spec.workers, table=wt), workers_types=wtypes)
    if spec.history:
        ht, hoid = _existing(conn, spec.history.table, "history table")
        htypes = _column_types(conn, hoid)
        named = {"history.status": spec.history.status}
        for key in ("started_at", "finished_at", "group"):
            if getattr(spec.history, key):
                named[f"history.{key}"] = getattr(spec.history, key)
        _need_columns(ht, htypes, named)
        for key in ("history.started_at", "history.finished_at"):
            if key in named:
                _need_time(ht, key, named[key], htypes[named[key]])
        spec = replace(spec, history=replace(spec.history, table=ht), history_types=htypes)
    dead_letter = spec.policy.dead_letter
    if dead_letter and dead_letter.kind == "table" and dead_letter.table:
        dl = resolve_table(conn, dead_letter.table)
        if dl is None:
            raise UserError(
                f"dead-letter table {dead_letter.table} not found; create it "
                "(queuetop init-demo does for the demo) or change policy.dead_letter"
            )
        dead_letter = replace(dead_letter, table=dl[0])
        spec = replace(spec, policy=replace(spec.policy, dead_letter=dead_letter))
    return thresholds.apply(spec)  # again: the columns found may change the signal


def state_warnings(spec: QueueSpec, by_status: dict[str, int]) -> tuple[str, ...]:
    """Raw values present in the table that no role claims: rows the dashboard cannot place."""
    return tuple(
        f"status value {raw!r} ({n} rows) is not mapped to any role in the queue spec"
        for raw, n in by_status.items()
        if spec.role_of(raw) is None
    )


# Roles whose spec values should match some row of a working queue. An empty failed or
# dead state is the healthy case, so those never warn.
EXPECTED_ROLES = ("ready", "running", "done")


def unmatched_values(spec: QueueSpec, by_status: dict[str, int]) -> str | None:
    """One warning naming the ready/running/done values that match no row right now, or None.

    Only while some rows carry a value no role claims: then a spec value matching
    nothing is likely the typo behind them. Without such rows a quiet queue may simply
    have nothing running, and says nothing. Not an error, not repeated on every poll.
    """
    if not by_status or spec.source == "flags" or not state_warnings(spec, by_status):
        return None
    missing = [
        f"{role}={value!r}"
        for role in EXPECTED_ROLES
        for value in spec.values(role)
        if value not in by_status
    ]
    if not missing:
        return None
    return (
        f"no rows in {spec.table} with {', '.join(missing)}; "
        "if such rows should exist, check [queue.states]"
    )
