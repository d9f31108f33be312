"""Roles by conditions over columns, in SQL: the state of a row, and the rows of one role.

A spec with rules (no state column) has a derived state: the label of the first rule whose
conditions a row meets, NULL where it meets none. The rows of one rule are selected by its
own conditions, ANDed as they are (so that a partial index on `locked_at IS NOT NULL`
serves them), and none of an earlier rule's (`IS NOT TRUE`: a NULL is no match).
Values are literals composed by psycopg, columns identifiers: nothing is pasted as text.
"""

from __future__ import annotations

from collections.abc import Callable

from psycopg import sql

from dashboard.models import Condition, QueueSpec, RoleRule

NAIVE_TIMESTAMP = "timestamp without time zone"


def _number(text: str) -> sql.Composable:
    value = float(text)
    return sql.Literal(int(value) if value.is_integer() else value)


def condition_sql(
    spec: QueueSpec, cond: Condition, column: Callable[[str], sql.Composable]
) -> sql.Composable:
    """One condition over the row `t`; `column(name)` reads a column (its zone applied)."""
    col = column(cond.column)
    if cond.test == "set":
        return sql.SQL("{} IS NOT NULL").format(col)
    if cond.test == "null":
        return sql.SQL("{} IS NULL").format(col)
    if cond.test == "past":
        return sql.SQL("{} <= now()").format(col)
    if cond.test == "future":
        return sql.SQL("{} > now()").format(col)
    if cond.test == "above":
        return sql.SQL("{} > {}").format(col, _number(cond.values[0]))
    if cond.test == "below":
        return sql.SQL("{} < {}").format(col, _number(cond.values[0]))
    values = [sql.Literal(v) for v in cond.values]
    if cond.test == "not":
        # a NULL is no value of the list, and so not excluded by it
        inner = sql.SQL("{} IN ({})").format(col, sql.SQL(", ").join(values))
        return sql.SQL("({} IS NOT TRUE)").format(inner)
    if len(values) == 1:
        return sql.SQL("{} = {}").format(col, values[0])
    return sql.SQL("{} IN ({})").format(col, sql.SQL(", ").join(values))


def rule_sql(
    spec: QueueSpec, rule: RoleRule, column: Callable[[str], sql.Composable]
) -> sql.Composable:
    if not rule.conditions:
        return sql.SQL("true")
    return sql.SQL("({})").format(
        sql.SQL(" AND ").join(condition_sql(spec, c, column) for c in rule.conditions)
    )


def state_case(spec: QueueSpec, column: Callable[[str], sql.Composable]) -> sql.Composable:
    """`CASE WHEN <rule 1> THEN 'label 1' … END`: the first rule a row meets, else NULL."""
    whens = [
        sql.SQL("WHEN {} THEN {}").format(rule_sql(spec, r, column), sql.Literal(r.label))
        for r in spec.rules
    ]
    return sql.SQL("(CASE {} END)").format(sql.SQL(" ").join(whens))


def rows_of_rule(
    spec: QueueSpec, index: int, column: Callable[[str], sql.Composable]
) -> sql.Composable:
    """The rows rule `index` takes: its conditions, and none of an earlier rule's."""
    own = [c for c in spec.rules[index].conditions]
    parts = [condition_sql(spec, c, column) for c in own] or [sql.SQL("true")]
    for earlier in spec.rules[:index]:
        parts.append(sql.SQL("{} IS NOT TRUE").format(rule_sql(spec, earlier, column)))
    return sql.SQL("({})").format(sql.SQL(" AND ").join(parts))


def rows_of_label(
    spec: QueueSpec, label: str, column: Callable[[str], sql.Composable]
) -> sql.Composable | None:
    """The rows whose state is `label` (a rule's), or None where no rule has that label."""
    for i, rule in enumerate(spec.rules):
        if rule.label == label:
            return rows_of_rule(spec, i, column)
    return None
