"""The queue spec from TOML: durations, table names, columns, states, policy (no database)."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

from dashboard.config import rules, thresholds
from dashboard.errors import UserError
from dashboard.models import (
    DERIVED_ONLY,
    OPTIONAL_COLUMNS,
    ROLES,
    Columns,
    DeadLetter,
    Derived,
    HistoryTable,
    Policy,
    QueueSpec,
    RoleRule,
    TableName,
    WorkersTable,
)

QUEUE_KEYS = {
    "table",
    "schema",
    "id",
    "status",
    "states",
    "roles",
    "policy",
    "adapter",
    "workers",
    "history",
    "tables",
    "worker_element",
    "time_zone",
    *OPTIONAL_COLUMNS,
    *DERIVED_ONLY,
}
POLICY_KEYS = {
    "stale_after",
    "max_attempts",
    "dead_letter",
    "worker_session",
    "exact_count_limit",
    "heartbeat_timeout",
    "ready_value",
    "latency_window",
}
WORKERS_KEYS = {"table", "key", "last_seen", "timeout"}
HISTORY_KEYS = {"table", "status", "started_at", "finished_at", "group"}
# The longest latency window: every job started or finished in it is read on each of its
# reads (a day of a busy queue is already millions of rows).
MAX_LATENCY_WINDOW_S = 86400.0
_NAME = re.compile(r"^[a-z0-9_-]+$")  # adapter and derived names: file names under queries/

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$")
_UNITS = {
    "": 1,
    "s": 1,
    "sec": 1,
    "secs": 1,
    "second": 1,
    "seconds": 1,
    "m": 60,
    "min": 60,
    "mins": 60,
    "minute": 60,
    "minutes": 60,
    "h": 3600,
    "hour": 3600,
    "hours": 3600,
    "d": 86400,
    "day": 86400,
    "days": 86400,
}


MAX_DURATION_S = 100 * 365 * 86400


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
    if seconds > MAX_DURATION_S:  # beyond PostgreSQL's intervals and Python's timedeltas
        raise UserError(f"bad {what} {text!r}: use a duration of at most 100 years")
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
    """A role's values as PostgreSQL prints them: strings, whole numbers, true/false (a
    state column may be text, an enum, an integer or a boolean)."""
    values = value if isinstance(value, list) else [value]
    if not all(isinstance(v, (str, int)) for v in values):
        raise UserError(
            f"bad queue spec: states.{role} must be a value or a list of values "
            "(strings, whole numbers, true/false)"
        )
    return tuple(rules.scalar_text(v) for v in values)


def _key(value: Any, source: str) -> str | tuple[str, ...]:
    """`id = "job_id"`, or a composite key: `id = ["task_name", "task_instance"]`."""
    if isinstance(value, str) and value:
        return value
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, str) and v for v in value)
        and len(set(value)) == len(value)
    ):
        return value[0] if len(value) == 1 else tuple(value)
    raise UserError(
        f"bad queue spec {source}: id must be a column name, or a list of the columns of a "
        'composite key (id = ["a", "b"])'
    )


def _parse_dead_letter(text: str) -> DeadLetter:
    kind, _, target = str(text).partition(":")
    if kind == "status" and target:
        return DeadLetter("status", status=target)
    if kind == "table" and target:
        return DeadLetter("table", table=parse_table_name(target))
    raise UserError(f"bad dead_letter {text!r}: use 'status:VALUE' or 'table:schema.name'")


def _unknown(keys: set[str], known: set[str], where: str, source: str) -> None:
    unknown = keys - known
    if unknown:
        raise UserError(
            f"bad queue spec {source}: unknown key(s) {', '.join(sorted(unknown))} "
            f"in {where}; known: {', '.join(sorted(known))}"
        )


def _column(key: str, value: Any, source: str, adapter: str | None) -> str | Derived:
    """A column name, or `{ derived = "name" }`: an expression from the adapter's SQL."""
    if isinstance(value, dict):
        name = value.get("derived")
        if set(value) != {"derived"} or not isinstance(name, str) or not _NAME.match(name):
            raise UserError(
                f"bad queue spec {source}: {key} must be a column name or "
                '{ derived = "name" } (lowercase letters, digits, _)'
            )
        if not adapter:
            raise UserError(
                f"bad queue spec {source}: {key} is derived, which needs "
                'adapter = "NAME" (whose SQL derives it)'
            )
        return Derived(name)
    if key in DERIVED_ONLY:
        raise UserError(f'bad queue spec {source}: {key} can only be {{ derived = "name" }}')
    if not isinstance(value, str) or not value:
        raise UserError(f"bad queue spec {source}: {key} must be a column name")
    return value


def _workers(raw: Any, source: str) -> WorkersTable:
    if not isinstance(raw, dict):
        raise UserError(f"bad queue spec {source}: [queue.workers] must be a table")
    _unknown(set(raw), WORKERS_KEYS, "[queue.workers]", source)
    missing = [k for k in ("table", "key", "last_seen") if not isinstance(raw.get(k), str)]
    if missing:
        raise UserError(
            f"bad queue spec {source}: [queue.workers] needs {', '.join(missing)} "
            "(the worker table, the column the job's worker names, its last-seen "
            "column)"
        )
    timeout = parse_duration(raw.get("timeout", 60), "workers.timeout")
    return WorkersTable(parse_table_name(raw["table"]), raw["key"], raw["last_seen"], timeout)


def _history(raw: Any, source: str) -> HistoryTable:
    if not isinstance(raw, dict):
        raise UserError(f"bad queue spec {source}: [queue.history] must be a table")
    _unknown(set(raw), HISTORY_KEYS, "[queue.history]", source)
    if not isinstance(raw.get("table"), str) or not isinstance(raw.get("status"), str):
        raise UserError(f"bad queue spec {source}: [queue.history] needs table and status")
    times = {k: raw[k] for k in ("started_at", "finished_at", "group") if k in raw}
    bad = sorted(k for k, v in times.items() if not isinstance(v, str) or not v)
    if bad:
        raise UserError(
            f"bad queue spec {source}: [queue.history] {', '.join(bad)} must be a column name "
            "of the history table"
        )
    return HistoryTable(parse_table_name(raw["table"]), raw["status"], **times)


def _tables(raw: Any, table: TableName, source: str) -> dict[str, TableName]:
    """`[queue.tables]`: the library's other tables of the same queue, which the adapter's
    SQL reads as `{NAME_table}`; a `*` stands for what the queue table's `*` matched."""
    if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
        raise UserError(
            f'bad queue spec {source}: [queue.tables] maps names to tables: tasks = "t_*"'
        )
    named = {}
    for name, text in raw.items():
        if not _NAME.match(name) or "-" in name or name == "history":
            raise UserError(
                f"bad queue spec {source}: [queue.tables] {name!r}: use a name like 'tasks'"
            )
        other = parse_table_name(text)
        if (other.is_pattern and not table.is_pattern) or "*" in (other.schema or ""):
            raise UserError(
                f"bad queue spec {source}: [queue.tables] {name} = {text!r}: a '*' stands for "
                "what the queue table's own '*' matches, and only in a name"
            )
        named[name] = other
    return named


def spec_from_dict(data: dict[str, Any], source: str) -> QueueSpec:
    """Build a spec from the `[queue]` table of a TOML document."""
    queue = data.get("queue")
    if not isinstance(queue, dict):
        raise UserError(f"bad queue spec {source}: it needs a [queue] table with at least 'table'")
    _unknown(set(queue), QUEUE_KEYS, "[queue]", source)
    if not isinstance(queue.get("table"), str):
        raise UserError(f'bad queue spec {source}: [queue] needs table = "schema.table"')
    table = parse_table_name(queue["table"])
    if queue.get("schema"):
        table = TableName(table.name, str(queue["schema"]))
    if "*" in (table.schema or "") or table.name.count("*") > 1:
        raise UserError(
            f"bad queue spec {source}: table {queue['table']!r} may hold one '*' in its name "
            "(one table per queue, as pgmq.q_*), none in its schema"
        )
    adapter = queue.get("adapter")
    if adapter is not None and (not isinstance(adapter, str) or not _NAME.match(adapter)):
        raise UserError(f"bad queue spec {source}: adapter must be a name like 'graphile_worker'")
    cols: dict[str, Any] = {"id": _key(queue["id"], source)} if "id" in queue else {}
    for key in ("status", *OPTIONAL_COLUMNS, *DERIVED_ONLY):
        if key in queue:
            cols[key] = _column(key, queue[key], source, adapter)
    role_rules: tuple[RoleRule, ...] = ()
    if "roles" in queue:
        if "states" in queue or "status" in queue:
            raise UserError(
                f"bad queue spec {source}: give either status and [queue.states] (a state "
                "column) or [queue.roles] (roles by conditions over columns), not both"
            )
        role_rules = rules.rules_from_toml(queue["roles"], source)
        states = states_of_rules(role_rules)
        cols["status"] = None
    else:
        states = _states(queue.get("states", {}), source)
    element = queue.get("worker_element")
    if element is not None and (
        not isinstance(element, int) or isinstance(element, bool) or element < 1
    ):
        raise UserError(
            f"bad queue spec {source}: worker_element must be a whole number from 1 "
            "(the array element of the worker column that names the worker)"
        )
    zone = queue.get("time_zone")
    if zone is not None and (not isinstance(zone, str) or not zone.strip()):
        raise UserError(f"bad queue spec {source}: time_zone must be a zone name such as 'UTC'")
    spec = QueueSpec(
        table=table,
        table_pattern=table if table.is_pattern else None,
        columns=Columns(**cols),
        states=states,
        policy=_parse_policy(queue.get("policy", {}), source),
        source=source,
        adapter=adapter,
        workers=_workers(queue["workers"], source) if "workers" in queue else None,
        history=_history(queue["history"], source) if "history" in queue else None,
        tables=_tables(queue["tables"], table, source) if "tables" in queue else {},
        worker_element=element,
        time_zone=zone,
        rules=role_rules,
    )
    spec = replace(spec, threshold_keys=_threshold_keys(queue), versioned="versions" in data)
    check_dead_letter(spec)
    return thresholds.apply(spec)


def _states(states_raw: Any, source: str) -> dict[str, tuple[str, ...]]:
    if not isinstance(states_raw, dict):
        raise UserError(f"bad queue spec {source}: [queue.states] must be a table of roles")
    bad_roles = set(states_raw) - set(ROLES)
    if bad_roles:
        raise UserError(
            f"bad queue spec {source}: unknown role(s) {', '.join(sorted(bad_roles))} "
            f"in [queue.states]; roles are {', '.join(ROLES)}"
        )
    states = {role: _as_values(role, states_raw.get(role, [])) for role in ROLES}
    if not states["ready"] or not states["running"]:
        raise UserError(
            f"bad queue spec {source}: [queue.states] needs ready and running values "
            "(or, for a table without a state column, [queue.roles] by conditions)"
        )
    check_values_once(states, source)
    return states


def check_values_once(states: dict[str, tuple[str, ...]], source: str) -> None:
    claimed = [v for role in ROLES for v in states.get(role, ())]
    twice = sorted({v for v in claimed if claimed.count(v) > 1})
    if twice:
        raise UserError(
            f"bad queue spec {source}: value(s) {', '.join(map(repr, twice))} "
            "claimed by more than one role in [queue.states]; give each to one role"
        )


def states_of_rules(role_rules: tuple[RoleRule, ...]) -> dict[str, tuple[str, ...]]:
    """Each role's state value where roles are rules: its rule's label."""
    states = {role: () for role in ROLES}
    for rule in role_rules:
        states[rule.role] = (rule.label,)
    return states


def _threshold_keys(queue: dict[str, Any]) -> dict[str, float]:
    """The liveness limits the file itself names (parsed again: their checks ran above)."""
    policy, workers = queue.get("policy", {}), queue.get("workers", {})
    keys = {k: policy[k] for k in ("stale_after", "heartbeat_timeout") if k in policy}
    if "timeout" in workers:
        keys["workers.timeout"] = workers["timeout"]
    return {k: parse_duration(v, k) for k, v in keys.items()}


def check_dead_letter(spec: QueueSpec) -> None:
    """A dead-letter state must be one a role claims: else a dead-lettered job would leave
    every count (a typo such as 'status:faild'). The ready_value must be a ready value."""
    ready = spec.policy.ready_value
    if ready is not None and ready not in spec.values("ready"):
        raise UserError(
            f"bad queue spec {spec.source}: ready_value {ready!r} is not a ready value "
            f"({', '.join(spec.values('ready'))}); fix the typo or add it to [queue.states] ready"
        )
    policy = spec.policy.dead_letter
    if policy and policy.kind == "status" and spec.role_of(policy.status) is None:
        claimed = [v for role in ROLES for v in spec.values(role)]
        raise UserError(
            f"bad queue spec {spec.source}: dead_letter state {policy.status!r} is "
            f"not a value of any role ({', '.join(claimed)}); fix the typo or add "
            "it to [queue.states] dead"
        )


def _parse_policy(raw: dict[str, Any], source: str) -> Policy:
    if not isinstance(raw, dict):
        raise UserError(f"bad queue spec {source}: [queue.policy] must be a table")
    _unknown(set(raw), POLICY_KEYS, "[queue.policy]", source)
    policy = Policy()
    if "stale_after" in raw:
        policy = replace(policy, stale_after_s=parse_duration(raw["stale_after"], "stale_after"))
    if "heartbeat_timeout" in raw:
        policy = replace(
            policy,
            heartbeat_timeout_s=parse_duration(raw["heartbeat_timeout"], "heartbeat_timeout"),
        )
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
            raise UserError(
                f"bad queue spec {source}: exact_count_limit must be a whole number "
                "of rows, 0 or more"
            )
        policy = replace(policy, exact_count_limit=limit)
    if "ready_value" in raw:  # checked against [queue.states] by check_dead_letter
        if not isinstance(raw["ready_value"], str) or not raw["ready_value"]:
            raise UserError(
                f"bad queue spec {source}: ready_value must be a ready state value (the one "
                "requeue and retry-dead write)"
            )
        policy = replace(policy, ready_value=raw["ready_value"])
    if "latency_window" in raw:
        policy = replace(policy, latency_window_s=latency_window(raw["latency_window"]))
    return policy


def latency_window(text: str | int | float) -> float:
    """The latency window ('5 minutes', '30s', 600) in seconds, up to a day."""
    seconds = parse_duration(text, "latency_window")
    if seconds > MAX_LATENCY_WINDOW_S:
        raise UserError(
            f"bad latency_window {text!r}: use at most a day ('24 hours'); every job started "
            "or finished in the window is read on each of its reads"
        )
    return seconds
