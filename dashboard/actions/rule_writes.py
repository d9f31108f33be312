"""Writes on a table whose roles are conditions over columns (no state column).

A requeue or a dead-letter there cannot write a state word: it writes what makes the
row meet its target role's rule, as the table's own workers and recovery do. For each
condition of the target rule: `X null` clears X, `X set` keeps X or stamps it now (a
time), `X before now` makes it due now (a visibility timeout: visible again), `X = v`
writes v. A rule tried before the target (precedence) must not take the row: one of its
conditions is undone the same way (`failed_at set`: cleared; `run_at after now`: due
now). Nothing else is written, and only columns the rules already name (plus the claim's
owner and lease, cleared on a requeue), so no value the table's rows do not use. What
cannot be written this way (`read_ct above 3`) is left as it is; the action reads the
row's role back in the same transaction and rolls back unless it is the target.
"""

from __future__ import annotations

from psycopg import sql

from dashboard.errors import UserError
from dashboard.models import Condition, QueueSpec, RoleRule

TIME_TYPES = ("timestamp", "date")
UNDONE = {"set": "null", "future": "past"}  # what an undone condition leaves true


def target_rule(spec: QueueSpec, role: str, action: str) -> RoleRule:
    for rule in spec.rules:
        if rule.role == role:
            return rule
    if spec.adapter:
        raise UserError(
            f"{action}: preset {spec.adapter} has no {role} role for {spec.table} (its "
            "library keeps no such state), so there is nothing to write; nothing was changed"
        )
    raise UserError(
        f"{action}: {spec.table} has no {role} rule, so there is no state to write; "
        f"pass --{role}-when 'CONDITIONS' (or [queue.roles] {role} in the queue TOML)"
    )


def _is_time(spec: QueueSpec, column: str) -> bool:
    return spec.column_types.get(column, "").startswith(TIME_TYPES)


def _meet(spec: QueueSpec, cond: Condition) -> sql.Composable | None:
    """The value that makes `cond` hold (None: cannot be written; left as it is)."""
    col = sql.Identifier(cond.column)
    if cond.test == "null":
        return sql.SQL("NULL")
    if cond.test == "set":
        return sql.SQL("coalesce(t.{}, now())").format(col) if _is_time(spec, cond.column) else None
    if cond.test == "past":
        return sql.SQL("least(t.{}, now())").format(col)
    if cond.test == "equals" and cond.values:
        kind = sql.SQL(spec.column_types.get(cond.column, "text"))
        return sql.SQL("{}::{}").format(sql.Literal(cond.values[0]), kind)
    return None


def _undo(spec: QueueSpec, cond: Condition) -> sql.Composable | None:
    """A value that makes `cond` fail (None: none that the table's rows would use)."""
    if cond.test == "set":
        return sql.SQL("NULL")
    if cond.test == "future":
        return sql.SQL("least(t.{}, now())").format(sql.Identifier(cond.column))
    return None


def _contradicts(cond: Condition, written: dict[str, Condition]) -> bool:
    """Whether the conditions already met (by column) make `cond` fail."""
    mine = written.get(cond.column)
    if mine is None:
        return False
    pairs = {("set", "null"), ("null", "set"), ("future", "past"), ("past", "future")}
    if (cond.test, mine.test) in pairs:
        return True
    if cond.test == "equals" and mine.test == "equals":
        return not set(cond.values) & set(mine.values[:1])
    return False


def rule_assignments(
    spec: QueueSpec, role: str, action: str
) -> tuple[list[tuple[str, sql.Composable]], list[str]]:
    """(column, value) pairs that put a row into `role`'s rule, and the change in words."""
    target = target_rule(spec, role, action)
    sets: dict[str, sql.Composable] = {}
    words: list[str] = []
    met: dict[str, Condition] = {}
    for cond in target.conditions:
        value = _meet(spec, cond)
        if value is not None and cond.column not in sets:
            sets[cond.column] = value
            met[cond.column] = cond
            words.append(f"{cond.describe()}")
    for earlier in spec.rules[: spec.rules.index(target)]:
        if any(_contradicts(c, met) for c in earlier.conditions):
            continue
        # a time made due (`run_at after now` -> now) before a value cleared: the error a
        # failed attempt left is kept, the retry is simply due now
        for cond in sorted(earlier.conditions, key=lambda c: c.test != "future"):
            value = _undo(spec, cond)
            if value is not None and cond.column not in sets:
                sets[cond.column] = value
                met[cond.column] = Condition(cond.column, UNDONE[cond.test])
                words.append(f"not {cond.describe()} ({earlier.role})")
                break
    return list(sets.items()), words
