"""The composed statements of job actions: identifiers from the spec and the catalog only.

Everything variable that is data (ids, observed values, reasons) stays a
%(name)s parameter; what is composed here is identifiers and type names read
from the catalog (spec.column_types, format_type).
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg import sql

import queries
from dashboard.actions.guards import FROM_ROLES
from dashboard.actions.rule_writes import rule_assignments, target_rule
from dashboard.errors import UserError
from dashboard.models import Derived, QueueSpec, TableName
from dashboard.queue_sql.parts import queue_parts, statement

INTEGER_TYPES = ("smallint", "integer", "bigint", "numeric")
# Columns a dead-letter table may add to the job's own, filled when present.
DEAD_EXTRAS = ("dead_reason", "dead_at", "dead_by")


@dataclass(frozen=True)
class Plan:
    """One job action: which guarded statement, from which roles, to which state."""

    action: str
    statement: sql.Composable
    from_roles: tuple[str, ...]
    to_state: str
    needed: tuple[tuple[TableName, tuple[str, ...]], ...]  # privileges per table
    params: dict[str, object]
    # In words, for the confirmation and the audit: what the statement changes, and
    # whether it advances the lease token (fencing the old owner's late writes).
    changes: str = ""
    fences: bool = False
    # read each changed row's role back before the commit (a write by role rules)
    verify: bool = False


def job_parts(spec: QueueSpec) -> dict[str, sql.Composable]:
    """queue_parts: identifiers, expressions and the id column's type (ids arrive as text)."""
    return queue_parts(spec)


def guarded_parts(spec: QueueSpec, action: str) -> dict[str, sql.Composable]:
    """job_parts plus {guard}: the job row t still as the operator observed it (o), which
    every guarded statement of `action` ("requeue" or "dead_letter") applies."""
    parts = job_parts(spec)
    guard = queries.expression("actions/still_as_observed").format(
        **parts, refusal=parts[f"{action}_refusal"]
    )
    return {**parts, "guard": guard}


def adapter_statement(spec: QueueSpec, name: str) -> bool:
    """Whether the spec's adapter replaces statement `name` with its own (its library's
    retry function or the columns its own retry changes)."""
    return queries.resolve(name, spec.adapter) != name  # a version's folder, else its own


def _token_advance(spec: QueueSpec) -> sql.Composable | None:
    """`token = t.token + 1` (or a fresh uuid): the fencing step, when the spec has a token.

    A timestamp token (a claim or heartbeat time) still guards the action, but is kept: a
    made-up time could pass for a live heartbeat; the next claim changes it.
    """
    column = spec.columns.real("lease_token")
    if not column:
        return None
    kind = spec.column_types.get(column, "")
    if kind.startswith(INTEGER_TYPES):
        value = sql.SQL("t.{} + 1").format(sql.Identifier(column))
    elif kind == "uuid":
        value = sql.SQL("gen_random_uuid()")
    elif kind.startswith("timestamp"):
        return None
    else:
        raise UserError(
            f"cannot advance lease token column {column!r} of type {kind or '?'}: "
            "queuetop advances integer and uuid tokens; fix lease_token in the spec"
        )
    return sql.SQL("{} = {}").format(sql.Identifier(column), value)


def _set(column: str, value: sql.Composable) -> sql.Composable:
    return sql.SQL("{} = {}").format(sql.Identifier(column), value)


def _common_params(spec: QueueSpec, force: bool, from_roles: tuple[str, ...]) -> dict[str, object]:
    return {
        "force": force,
        "from_values": spec.values_of(from_roles),
        "running_values": list(spec.values("running")),
    }


def _generic_sets(
    spec: QueueSpec, to_status: str, *more: sql.Composable
) -> tuple[sql.Composable, bool]:
    """`status = %(to_status)s, …, token = token + 1`: the SET of a generic statement."""
    cols = spec.columns
    status_type = sql.SQL(spec.column_types.get(str(cols.status), "text"))
    sets = [_set(str(cols.status), sql.SQL("%(to_status)s::{}").format(status_type)), *more]
    advance = _token_advance(spec)
    sets += [advance] if advance else []
    return sql.SQL(", ").join(sets), advance is not None


def ready_value(spec: QueueSpec) -> str:
    """The value a requeue or retry writes (actions/writes.py resolves a guessed one)."""
    value = spec.written_value("ready")
    if value is None:
        raise UserError(
            f"requeue: the ready state value of {spec.table} is not known; pass "
            "--ready-value VALUE or set policy.ready_value in the queue TOML"
        )
    return value


def _rule_plan(
    spec: QueueSpec,
    action: str,
    role: str,
    name: str,
    params: dict[str, object],
    *clear: str | None,
    more: dict[str, sql.Composable] | None = None,
) -> Plan:
    """A write on a table with role rules (no state column): what puts the row in `role`'s
    rule, then `clear` (columns set to NULL) and `more`, each column once, the token
    advanced; the role read back before the commit (`verify`)."""
    pairs, words = rule_assignments(spec, role, action)
    sets = dict(pairs)
    cleared = [c for c in clear if c and c not in sets]
    sets.update({c: sql.SQL("NULL") for c in cleared})
    sets.update({c: v for c, v in (more or {}).items() if c not in sets})
    advance = _token_advance(spec)
    token = spec.columns.real("lease_token")
    parts = [_set(c, v) for c, v in sets.items() if not (advance and c == token)]
    parts += [advance] if advance else []
    changes = "; ".join(words) or "nothing written"
    if cleared:
        changes += f"; {', '.join(cleared)} cleared"
    guard = guarded_parts(spec, action.replace("-", "_"))
    to_state = target_rule(spec, role, action).label
    return Plan(
        action=action,
        statement=statement(spec, name, **guard, assignments=sql.SQL(", ").join(parts)),
        from_roles=FROM_ROLES[action],
        to_state=to_state,
        needed=((spec.table, ("UPDATE",)),),
        params={**params, "to_status": to_state},
        changes=changes + ("; lease token advanced" if advance else ""),
        fences=advance is not None,
        verify=True,
    )


def requeue_plan(spec: QueueSpec, force: bool) -> Plan:
    cols = spec.columns
    from_roles = FROM_ROLES["requeue"]
    name = "actions/do_requeue"
    if spec.rules and not adapter_statement(spec, name):
        worker = None if spec.worker_element else cols.real("worker")
        claim = (worker, cols.real("worker_pid"), cols.real("lease_until"))
        params = _common_params(spec, force, from_roles)
        return _rule_plan(spec, "requeue", "ready", name, params, *claim)
    ready = ready_value(spec)
    if adapter_statement(spec, name):
        stmt = statement(spec, name, **guarded_parts(spec, "requeue"))
        changes, fences = f"as {spec.adapter}'s own retry does (its SQL: {name})", False
    else:
        if isinstance(cols.status, Derived):
            raise UserError(
                f"the state of {spec.table} is derived: its adapter must say how "
                "to requeue (queries/presets/<adapter>/actions/do_requeue.sql)"
            )
        # an array worker column (worker_element) keeps its other elements: the next
        # claim rewrites it, as the libraries that use one do
        worker = None if spec.worker_element else cols.real("worker")
        owner = [worker, cols.real("worker_pid")] if worker else []
        cleared = [c for c in (*owner, cols.real("lease_until")) if c]
        sets, fences = _generic_sets(spec, ready, *(_set(c, sql.SQL("NULL")) for c in cleared))
        stmt = statement(spec, name, **guarded_parts(spec, "requeue"), assignments=sets)
        changes = f"state set to {ready!r}" + (f"; {', '.join(cleared)} cleared" if cleared else "")
    return Plan(
        action="requeue",
        statement=stmt,
        from_roles=from_roles,
        to_state=ready,
        needed=((spec.table, ("UPDATE",)),),
        params={**_common_params(spec, force, from_roles), "to_status": ready},
        changes=changes + ("; lease token advanced" if fences else ""),
        fences=fences,
    )


def dead_status(spec: QueueSpec) -> str:
    """The value a dead-letter to a state writes (actions/writes.py resolves a guessed one)."""
    value = spec.written_value("dead")
    if value is not None:
        return value
    if spec.guessed_states and spec.values("dead") and spec.policy.dead_letter is None:
        raise UserError(
            f"dead-letter: the dead state value of {spec.table} is not known; pass "
            "--dead-value VALUE or set policy.dead_letter = 'status:VALUE' in the queue TOML"
        )
    if spec.adapter:
        raise UserError(
            f"dead-letter: preset {spec.adapter} has no dead role for {spec.table} (its "
            "library keeps no such state there), so there is nothing to write; nothing was "
            "changed"
        )
    raise UserError(
        f"queue spec of {spec.table} has no dead-letter policy; set policy.dead_letter "
        "to 'status:VALUE' or 'table:schema.name'"
    )


def dead_letter_plan(
    conn: psycopg.Connection, spec: QueueSpec, force: bool, reason: str, actor: str
) -> Plan:
    from_roles = FROM_ROLES["dead-letter"]
    params = {**_common_params(spec, force, from_roles), "reason": reason, "actor": actor}
    policy = spec.policy.dead_letter
    if policy and policy.kind == "table" and policy.table:
        return _move_plan(conn, spec, policy.table, from_roles, params)
    cols = spec.columns
    name = "actions/do_dead_letter_status"
    if spec.rules and not adapter_statement(spec, name):
        error = cols.real("last_error")
        more = {error: sql.SQL("%(reason)s")} if error else {}
        return _rule_plan(spec, "dead-letter", "dead", name, params, more=more)
    value = dead_status(spec)
    if adapter_statement(spec, name):
        stmt = statement(spec, name, **guarded_parts(spec, "dead_letter"))
        changes, fences = f"as {spec.adapter}'s own discard does (its SQL: {name})", False
    else:
        if isinstance(cols.status, Derived):
            raise UserError(
                f"the state of {spec.table} is derived: its adapter must say how "
                f"to dead-letter (queries/presets/<adapter>/{name}.sql)"
            )
        error = cols.real("last_error")
        sets, fences = _generic_sets(
            spec, value, *([_set(error, sql.SQL("%(reason)s"))] if error else [])
        )
        stmt = statement(spec, name, **guarded_parts(spec, "dead_letter"), assignments=sets)
        changes = f"state set to {value!r}" + (f"; the reason into {error}" if error else "")
    return Plan(
        action="dead-letter",
        statement=stmt,
        from_roles=from_roles,
        to_state=value,
        needed=((spec.table, ("UPDATE",)),),
        params={**params, "to_status": value},
        changes=changes + ("; lease token advanced" if fences else ""),
        fences=fences,
    )


def _move_plan(
    conn: psycopg.Connection,
    spec: QueueSpec,
    dead: TableName,
    from_roles: tuple[str, ...],
    params: dict[str, object],
) -> Plan:
    """Explicit column lists from the catalog: every job column, plus the extras the table has."""
    if not isinstance(spec.columns.id, str):
        raise UserError(
            f"dead-letter: {spec.table} has a composite key, and queuetop moves rows to a "
            "dead-letter table by one key column only; use policy.dead_letter = "
            "'status:VALUE' or a --dead-when rule instead"
        )
    insertable = [
        r[0]
        for r in conn.execute(
            queries.load("actions/get_insertable_columns"),
            {"schema": dead.schema or "public", "table": dead.name},
        ).fetchall()
    ]
    columns = list(spec.column_types)
    missing = [c for c in columns if c not in insertable]
    if missing:
        raise UserError(
            f"dead-letter table {dead} lacks column(s) {', '.join(missing)} of "
            f"{spec.table}; add them so nothing is lost in the move"
        )
    extras = [c for c in DEAD_EXTRAS if c in insertable and c not in columns]
    extra_values = {
        "dead_reason": sql.Placeholder("reason"),
        "dead_at": sql.SQL("now()"),
        "dead_by": sql.Placeholder("actor"),
    }
    ident = sql.Identifier
    move = statement(
        spec,
        "actions/do_dead_letter_move",
        **guarded_parts(spec, "dead_letter"),
        moved_columns=sql.SQL(", ").join(sql.SQL("t.{}").format(ident(c)) for c in columns),
        dead_table=ident(*dead.parts()),
        dead_columns=sql.SQL(", ").join(ident(c) for c in columns + extras),
        select_columns=sql.SQL(", ").join(
            [ident(c) for c in columns] + [extra_values[c] for c in extras]
        ),
        dead_id=ident(spec.columns.id),
    )
    return Plan(
        action="dead-letter",
        statement=move,
        from_roles=from_roles,
        to_state=f"table:{dead}",
        needed=((spec.table, ("UPDATE", "DELETE")), (dead, ("INSERT", "SELECT"))),
        params=params,
        changes=f"moved to {dead} (deleted here in the same statement)",
        fences=True,
    )
