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
from dashboard.queue_sql import statement

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

    @property
    def exact_values(self) -> tuple[ValuePlan, ...]:
        """The values counted through their index on every poll (index mode)."""
        return tuple(v for v in self.values if v.role in ACTIVE_ROLES
                     or (v.indexed and v.rows <= RARE_ROWS))

    def stale(self, now: float) -> bool:
        return now - self.made_at > REPLAN_S


def branch(spec: QueueSpec, parts: dict[str, sql.Composable], value: ValuePlan,
           holder: sql.Composable) -> sql.Composed:
    """The count of one value (count_value.sql), with its own parameter."""
    running = value.role == "running"
    ready = value.role == "ready"
    return statement(spec, "monitor/count_value", **{
        **parts, "value": holder,
        "stale_count": sql.SQL("count(*) FILTER (WHERE {})").format(parts["is_stale"])
        if running else sql.SQL("0"),
        "ready_since": parts["ready_since"] if ready else sql.SQL("NULL::timestamptz")})


def _walk(node: dict[str, Any]):
    yield node
    for child in node.get("Plans", ()):
        yield from _walk(child)


def explain_value(conn: psycopg.Connection, spec: QueueSpec, parts: dict[str, sql.Composable],
                  value: str, role: str) -> ValuePlan:
    stmt = branch(spec, parts, ValuePlan(value, role, False, 0), sql.Placeholder("v"))
    plan = conn.execute(queries.get("monitor/explain", statement=stmt),
                        {"v": value, "xids": []}).fetchone()[0][0]["Plan"]
    scans = [n for n in _walk(plan) if n.get("Relation Name") == spec.table.name]
    indexed = bool(scans) and all(n["Node Type"] != "Seq Scan" for n in scans)
    rows = max((float(n.get("Plan Rows", 0)) for n in scans), default=0.0)
    return ValuePlan(value, role, indexed, rows)


def plan_counts(conn: psycopg.Connection, spec: QueueSpec,
                parts: dict[str, sql.Composable]) -> CountPlan:
    """Ask the planner, value by value; a few EXPLAINs, no rows read."""
    roles = ACTIVE_ROLES + (() if spec.history else FINISHED_ROLES)
    values = tuple(explain_value(conn, spec, parts, v, role)
                   for role in roles for v in spec.values(role))
    active = [v for v in values if v.role in ACTIVE_ROLES]
    mode = "index" if active and all(v.indexed for v in active) else "scan"
    return CountPlan(mode, values)
