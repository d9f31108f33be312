"""How to count a queue table: which state values an index serves, asked of the planner.

EXPLAIN (never the table itself) says, per state value, whether the server would
read its rows through an index and how many it expects. If every active value
(ready, scheduled, running) is served, each poll counts them exactly through
their indexes ("index" mode); rare finished values an index serves are counted
the same way. Otherwise one pass over the table reads everything at once
("scan" mode), paced by the budget.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import sql

import queries
from dashboard.models import ACTIVE_ROLES, FINISHED_ROLES, QueueSpec
from dashboard.queue_sql.parts import statement, value_rows

REPLAN_S = 300.0
RARE_ROWS = 10_000  # a finished value the planner expects at most this often: count it exactly


@dataclass(frozen=True)
class ValuePlan:
    value: str
    role: str
    indexed: bool
    rows: float


@dataclass(frozen=True)
class CountPlan:
    mode: str  # "index" or "scan"
    values: tuple[ValuePlan, ...]
    made_at: float = field(default_factory=time.monotonic)
    # index mode's statement, composed once per plan: with and without row-lock holders
    statements: dict[str, sql.Composed] = field(default_factory=dict, compare=False, repr=False)

    @property
    def exact_values(self) -> tuple[ValuePlan, ...]:
        """The values counted through their index on every poll (index mode)."""
        return tuple(
            v for v in self.values if v.role in ACTIVE_ROLES or (v.indexed and v.rows <= RARE_ROWS)
        )

    def stale(self, now: float) -> bool:
        return now - self.made_at > REPLAN_S


# The open transaction that row-locked a row (its xmax is one of theirs, or a multixact
# one of them is a member of). Where no other session holds a transaction id, no row can
# be locked: the count then leaves xmax out, and needs nothing from the table that an
# index cannot give it. Only the one pass (scan mode) reads holders: in index mode the
# sessions statement does, in the same moment as the waits.
NO_HOLDER = sql.SQL("NULL::text")
NO_HELD = sql.SQL("NULL::text[]")
LIMIT_PARAMETER = sql.Placeholder("limit")
HELD_IDS = sql.SQL("(array_agg({id} ORDER BY {id}) FILTER (WHERE {holder} IS NOT NULL))[1:5]")


def holder_part(xids: object) -> sql.Composable:
    if not xids:
        return NO_HOLDER
    return queries.expression("monitor/holder_of_xmax").format(xmax=sql.SQL("t.xmax"))


def held_part(xids: object, parts: dict[str, sql.Composable]) -> sql.Composable:
    return HELD_IDS.format(id=parts["job_id"], holder=holder_part(xids)) if xids else NO_HELD


def branch(
    spec: QueueSpec,
    parts: dict[str, sql.Composable],
    value: ValuePlan,
    placeholder: sql.Composable,
    holder: sql.Composable = NO_HOLDER,
    limit: sql.Composable = LIMIT_PARAMETER,
) -> sql.Composed:
    """The count of one value (count_value.sql): `placeholder` is its value (a parameter,
    or the value itself as a literal), `limit` how many stale ids it names."""
    running = value.role == "running"
    ready = value.role == "ready"
    # each branch reads only the columns its role needs, so that an index holding them
    # can answer it alone (an index-only scan where the pages are all-visible)
    stale_ids = sql.SQL(
        "(array_agg({id}::text ORDER BY {expires}, {id}) FILTER (WHERE {stale}))[1:{limit}]"
    ).format(id=parts["job_id"], expires=parts["expires_at"], stale=parts["is_stale"], limit=limit)
    held = NO_HELD if holder is NO_HOLDER else HELD_IDS.format(id=parts["job_id"], holder=holder)
    return statement(
        spec,
        "monitor/count_value",
        **{
            **parts,
            "value_rows": value_rows(spec, parts, value.value, placeholder),
            "holder_xid": holder,
            "held_ids": held,
            "stale_count": sql.SQL("count(*) FILTER (WHERE {})").format(parts["is_stale"])
            if running
            else sql.SQL("0"),
            "stale_ids": stale_ids if running else sql.SQL("NULL::text[]"),
            "scheduled_at": parts["scheduled_at"] if ready else sql.SQL("NULL::timestamptz"),
            "ready_since": parts["ready_since"] if ready else sql.SQL("NULL::timestamptz"),
        },
    )


def _walk(node: dict[str, Any]):
    yield node
    for child in node.get("Plans", ()):
        yield from _walk(child)


def explain_statement(
    spec: QueueSpec, parts: dict[str, sql.Composable], value: str, role: str
) -> sql.Composed:
    """EXPLAIN of one value's count; its parameters are {"v": value} | EXPLAIN_PARAMS."""
    stmt = branch(spec, parts, ValuePlan(value, role, False, 0), sql.Placeholder("v"))
    return queries.get("monitor/explain", statement=stmt)


EXPLAIN_PARAMS = {"xids": [], "limit": 1}


def value_plan(
    spec: QueueSpec,
    value: str,
    role: str,
    plan: dict[str, Any],
    tables: frozenset[str] | None = None,
) -> ValuePlan:
    """Whether every scan of the queue table (or of its partitions) in `plan` is an index's."""
    tables = tables or frozenset({spec.table.name})
    scans = [n for n in _walk(plan) if n.get("Relation Name") in tables]
    indexed = bool(scans) and all(n["Node Type"] != "Seq Scan" for n in scans)
    rows = max((float(n.get("Plan Rows", 0)) for n in scans), default=0.0)
    return ValuePlan(value, role, indexed, rows)


def plan_counts(
    conn: psycopg.Connection, spec: QueueSpec, parts: dict[str, sql.Composable]
) -> CountPlan:
    """Ask the planner, value by value: a few EXPLAINs sent together, no rows read."""
    roles = ACTIVE_ROLES + (() if spec.history else FINISHED_ROLES)
    asked = [(v, role) for role in roles for v in spec.values(role)]
    with conn.pipeline():  # one round trip for all of them
        partitions = conn.execute(
            queries.load("monitor/get_table_partitions"),
            {"schema": spec.table.schema, "table": spec.table.name},
        )
        cursors = [
            conn.execute(explain_statement(spec, parts, v, role), {"v": v, **EXPLAIN_PARAMS})
            for v, role in asked
        ]
    tables = frozenset(r[0] for r in partitions.fetchall())
    values = tuple(
        value_plan(spec, v, role, cur.fetchone()[0][0]["Plan"], tables)
        for (v, role), cur in zip(asked, cursors, strict=True)
    )
    active = [v for v in values if v.role in ACTIVE_ROLES]
    mode = "index" if active and all(v.indexed for v in active) else "scan"
    return CountPlan(mode, values)
