"""The queue spec: presets, TOML files, flag overrides, and catalog validation."""

from __future__ import annotations

import math
import re
import sys
from dataclasses import fields, replace
from importlib import resources
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import dict_row

import queries
from dashboard.errors import UserError
from dashboard.models import (
    OPTIONAL_COLUMNS,
    ROLES,
    Columns,
    DeadLetter,
    Policy,
    QueueSpec,
    TableName,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEFAULT_PRESET = "demo"
QUEUE_KEYS = {"table", "schema", "id", "status", "states", "policy", *OPTIONAL_COLUMNS}
POLICY_KEYS = {"stale_after", "max_attempts", "dead_letter", "worker_session", "exact_count_limit"}
# What `--table` alone assumes: common names, refined by the warnings of the first poll.
GENERIC_STATES = {
    "ready": ("pending", "queued", "ready", "available", "new"),
    "running": ("running", "processing", "active", "in_progress"),
    "done": ("done", "completed", "succeeded", "finished"),
    "failed": ("failed", "error", "errored"),
    "dead": ("dead", "discarded", "cancelled"),
}

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$")
_UNITS = {
    "": 1, "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hour": 3600, "hours": 3600, "d": 86400, "day": 86400, "days": 86400,
}


def parse_duration(text: str | int | float, what: str = "duration") -> float:
    """'10 minutes', '30s', '1h' or a number of seconds -> seconds, above zero."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = float(text)
    else:
        match = _DURATION.match(str(text).lower())
        if not match or match.group(2) not in _UNITS:
            raise UserError(f"bad {what} {text!r}: use a number of seconds or e.g. '10 minutes'")
        seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if not (math.isfinite(seconds) and seconds > 0):  # 0 would call every running job stale
        raise UserError(f"bad {what} {text!r}: use a duration above zero, e.g. '10 minutes'")
    return seconds


def parse_table_name(text: str) -> TableName:
    """'jobs', 'app.jobs' or '"My Schema"."my.table"' -> TableName."""
    parts: list[str] = []
    i, text = 0, text.strip()
    while i < len(text):
        if text[i] == '"':
            j, buf = i + 1, []
            while True:
                k = text.find('"', j)
                if k < 0:
                    raise UserError(f"bad table name {text!r}: unclosed double quote")
                buf.append(text[j:k])
                if text[k + 1 : k + 2] == '"':
                    buf.append('"')
                    j = k + 2
                    continue
                break
            parts.append("".join(buf))
            i = k + 1
        else:
            k = text.find(".", i)
            k = len(text) if k < 0 else k
            parts.append(text[i:k].strip())
            i = k
        if i < len(text):
            if text[i] != ".":
                raise UserError(f"bad table name {text!r}: expected '.' after a quoted name")
            i += 1
    if not parts or any(p == "" for p in parts) or len(parts) > 2:
        raise UserError(f"bad table name {text!r}: use 'table' or 'schema.table'")
    return TableName(parts[-1], parts[0] if len(parts) == 2 else None)


def _as_values(role: str, value: Any) -> tuple[str, ...]:
    values = value if isinstance(value, list) else [value]
    if not all(isinstance(v, (str, int)) for v in values):
        raise UserError(f"bad queue spec: states.{role} must be a string or a list of strings")
    return tuple(str(v) for v in values)


def _parse_dead_letter(text: str) -> DeadLetter:
    kind, _, target = str(text).partition(":")
    if kind == "status" and target:
        return DeadLetter("status", status=target)
    if kind == "table" and target:
        return DeadLetter("table", table=parse_table_name(target))
    raise UserError(f"bad dead_letter {text!r}: use 'status:VALUE' or 'table:schema.name'")


def spec_from_dict(data: dict[str, Any], source: str) -> QueueSpec:
    """Build a spec from the `[queue]` table of a TOML document."""
    queue = data.get("queue")
    if not isinstance(queue, dict):
        raise UserError(f"bad queue spec {source}: it needs a [queue] table with at least 'table'")
    unknown = set(queue) - QUEUE_KEYS
    if unknown:
        raise UserError(
            f"bad queue spec {source}: unknown key(s) {', '.join(sorted(unknown))}; "
            f"known: {', '.join(sorted(QUEUE_KEYS))}"
        )
    if not isinstance(queue.get("table"), str):
        raise UserError(f"bad queue spec {source}: [queue] needs table = \"schema.table\"")
    table = parse_table_name(queue["table"])
    if queue.get("schema"):
        table = TableName(table.name, str(queue["schema"]))
    cols = {k: queue[k] for k in ("id", "status", *OPTIONAL_COLUMNS) if k in queue}
    for key, value in cols.items():
        if not isinstance(value, str) or not value:
            raise UserError(f"bad queue spec {source}: {key} must be a column name")
    states_raw = queue.get("states", {})
    bad_roles = set(states_raw) - set(ROLES)
    if bad_roles:
        raise UserError(
            f"bad queue spec {source}: unknown role(s) {', '.join(sorted(bad_roles))} "
            f"in [queue.states]; roles are {', '.join(ROLES)}"
        )
    states = {role: _as_values(role, states_raw.get(role, [])) for role in ROLES}
    if not states["ready"] or not states["running"]:
        raise UserError(f"bad queue spec {source}: [queue.states] needs ready and running values")
    return QueueSpec(
        table=table,
        columns=Columns(**cols),
        states=states,
        policy=_parse_policy(queue.get("policy", {}), source),
        source=source,
    )


def _parse_policy(raw: dict[str, Any], source: str) -> Policy:
    unknown = set(raw) - POLICY_KEYS
    if unknown:
        raise UserError(
            f"bad queue spec {source}: unknown policy key(s) {', '.join(sorted(unknown))}; "
            f"known: {', '.join(sorted(POLICY_KEYS))}"
        )
    policy = Policy()
    if "stale_after" in raw:
        policy = replace(policy, stale_after_s=parse_duration(raw["stale_after"], "stale_after"))
    if "max_attempts" in raw:
        if not isinstance(raw["max_attempts"], int) or raw["max_attempts"] < 1:
            raise UserError(f"bad queue spec {source}: max_attempts must be a positive integer")
        policy = replace(policy, max_attempts=raw["max_attempts"])
    if raw.get("dead_letter"):
        policy = replace(policy, dead_letter=_parse_dead_letter(raw["dead_letter"]))
    if "worker_session" in raw:
        if raw["worker_session"] not in ("application_name", "pid", "none"):
            raise UserError(
                f"bad queue spec {source}: worker_session must be application_name, pid or none"
            )
        policy = replace(policy, worker_session=raw["worker_session"])
    if "exact_count_limit" in raw:
        limit = raw["exact_count_limit"]
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
            raise UserError(f"bad queue spec {source}: exact_count_limit must be a whole number "
                            "of rows, 0 or more")
        policy = replace(policy, exact_count_limit=limit)
    return policy


def preset_names() -> list[str]:
    folder = resources.files("dashboard").joinpath("presets")
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def load_preset(name: str) -> QueueSpec:
    if name not in preset_names():
        raise UserError(f"unknown preset {name!r}; choose one of: {', '.join(preset_names())}")
    text = resources.files("dashboard").joinpath("presets", f"{name}.toml").read_text("utf-8")
    return spec_from_dict(tomllib.loads(text), f"preset {name}")


def load_file(path: str | Path) -> QueueSpec:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"queue file {path} does not exist; pass an existing TOML file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read queue file {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"bad TOML in {path}: {exc}; fix the syntax and retry") from None
    return spec_from_dict(data, str(path))


def build_spec(
    queue_file: str | None = None,
    preset: str | None = None,
    table: str | None = None,
    id_column: str | None = None,
    status_column: str | None = None,
    stale_after: str | None = None,
) -> QueueSpec:
    """The spec from --queue or --preset (else the demo preset), then flag overrides."""
    if queue_file and preset:
        raise UserError("give either --queue FILE or --preset NAME, not both")
    if queue_file:
        spec = load_file(queue_file)
    elif preset:
        spec = load_preset(preset)
    elif table:
        spec = QueueSpec(table=parse_table_name(table), states=dict(GENERIC_STATES), source="flags")
    else:
        spec = load_preset(DEFAULT_PRESET)
    if table:
        spec = replace(spec, table=parse_table_name(table))
    if id_column:
        spec = replace(spec, columns=replace(spec.columns, id=id_column))
    if status_column:
        spec = replace(spec, columns=replace(spec.columns, status=status_column))
    if stale_after:
        seconds = parse_duration(stale_after, "--stale-after")
        spec = replace(spec, policy=replace(spec.policy, stale_after_s=seconds))
    return spec


# --- validation against the live catalog -----------------------------------------------


def resolve_table(conn: psycopg.Connection, table: TableName) -> tuple[TableName, int] | None:
    """The schema-qualified table and its oid, or None if it does not exist."""
    row = conn.execute(
        queries.load("config/find_table"), {"schema": table.schema, "name": table.name}
    ).fetchone()
    return (TableName(row[1], row[0]), row[2]) if row else None


def validate(conn: psycopg.Connection, spec: QueueSpec) -> QueueSpec:
    """Check the spec against the catalog; return it schema-qualified, with column types.

    Raises UserError naming what is missing and listing what exists.
    """
    found = resolve_table(conn, spec.table)
    if found is None:
        existing = [r[0] for r in conn.execute(queries.load("config/list_tables")).fetchall()]
        listing = ", ".join(existing[:30]) + (" …" if len(existing) > 30 else "") or "none"
        raise UserError(
            f"table {spec.table} not found in database {conn.info.dbname}; "
            f"tables there: {listing}. Fix 'table' in the queue spec or --table"
        )
    table, oid = found
    with conn.cursor(row_factory=dict_row) as cur:
        types = {r["name"]: r["type"] for r in cur.execute(queries.load("config/get_columns"),
                                                           {"oid": oid})}
    for f in fields(Columns):
        column = getattr(spec.columns, f.name)
        if column is not None and column not in types:
            raise UserError(
                f"column {column!r} ({f.name}) not found in table {table}; "
                f"its columns: {', '.join(types)}. Fix the queue spec"
            )
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
    return replace(spec, table=table, column_types=types)


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
    missing = [f"{role}={value!r}" for role in EXPECTED_ROLES for value in spec.values(role)
               if value not in by_status]
    if not missing:
        return None
    return (f"no rows in {spec.table} with {', '.join(missing)}; "
            "if such rows should exist, check [queue.states]")
