"""Counting the queue: exact where an index serves, one pass where none does.

The result of a count is a QueueCounts: rows per raw state value, how many of the
ready ones are due later (scheduled), row locks per holder, the oldest due age,
stale leases, and the same per group.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

import queries
from dashboard.models import NO_STATE, GroupStats, QueueSpec
from dashboard.monitor.plan import CountPlan, branch, held_part, holder_part
from dashboard.monitor.row_holders import Carried, one_form
from dashboard.monitor.statement_bytes import StatementBytes
from dashboard.queue_sql.parts import statement

ROW_LIMIT = 1000


@dataclass(frozen=True)
class XactHolder:
    pid: int
    application_name: str


@dataclass
class QueueCounts:
    """What one count read: exact for every value it names."""

    by_status: dict[str, int] = field(default_factory=dict)
    later: dict[str, int] = field(default_factory=dict)  # ready rows due later, per value
    locked: dict[str, int] = field(default_factory=dict)  # per role
    # (pid, role, multixact mode or None) -> rows, and the first job ids of each
    holders: dict[tuple[int, str, str | None], int] = field(default_factory=dict)
    held_ids: dict[tuple[int, str, str | None], list] = field(default_factory=dict)
    holder_xids: dict[int, set[str]] = field(default_factory=dict)  # pid -> its xids seen
    apps: dict[int, str] = field(default_factory=dict)
    oldest_ready_s: float | None = None
    stale: int = 0
    stale_ids: list[str] = field(default_factory=list)
    groups: dict[str, dict[str, float]] = field(default_factory=dict)
    counted: set[str] = field(default_factory=set)  # values counted exactly, rows or none

    def role_counts(self, spec: QueueSpec) -> dict[str, int]:
        """Rows per role; ready rows due later count as scheduled."""
        counts = {
            role: sum(self.by_status.get(v, 0) for v in spec.values(role)) for role in spec.states
        }
        later = sum(self.later.get(v, 0) for v in spec.values("ready"))
        counts["ready"] = counts.get("ready", 0) - later
        counts["scheduled"] = counts.get("scheduled", 0) + later
        return counts

    def group_stats(self) -> tuple[GroupStats, ...]:
        return tuple(
            GroupStats(
                name=name,
                ready=int(g["ready"]),
                scheduled=int(g["scheduled"]),
                running=int(g["running"]),
                locked=int(g["locked"]),
                oldest_ready_age_s=g["oldest"],
                stale_leases=int(g["stale"]),
            )
            for name, g in sorted(self.groups.items())
        )


def carried(counts: QueueCounts) -> Carried:
    """The holders this count found, to carry while their transactions still run."""
    return Carried(
        rows=dict(counts.holders),
        ids={key: [one_form(j) for j in ids] for key, ids in counts.held_ids.items()},
        xids={pid: set(x) for pid, x in counts.holder_xids.items()},
    )


def xact_holders(conn: psycopg.Connection) -> dict[str, XactHolder]:
    """Transaction id -> its session, for the transactions other sessions hold open."""
    return {
        xid: XactHolder(pid, app)
        for xid, pid, app in conn.execute(queries.load("monitor/get_xact_locks")).fetchall()
    }


def _holders(r: dict, xacts: dict[str, XactHolder]) -> list[tuple[XactHolder, str, str | None]]:
    """The sessions holding a group's rows: (session, its xid, a multixact member's mode)."""
    key = r["holder_xid"]
    if not key:
        return []
    if not key.startswith("m"):
        return [(xacts[key], key, None)] if key in xacts else []
    out = []
    for member in r.get("members") or []:
        xid, _, mode = member.partition(":")
        if xid in xacts:
            out.append((xacts[xid], xid, mode))
    return out


def _fold(spec: QueueSpec, rows: list[dict], xacts: dict[str, XactHolder]) -> QueueCounts:
    out = QueueCounts(apps={h.pid: h.application_name for h in xacts.values()})
    for r in rows:
        value = NO_STATE if r["status"] is None else r["status"]
        n, role = int(r["n"]), spec.role_of(value)
        out.by_status[value] = out.by_status.get(value, 0) + n
        later = int(r["later"] or 0) if role == "ready" else 0
        out.later[value] = out.later.get(value, 0) + later
        holders = _holders(r, xacts)
        holder = bool(holders)
        if holders and role:
            out.locked[role] = out.locked.get(role, 0) + n
        for session, xid, mode in holders if role else ():
            key = (session.pid, role, mode)
            out.holders[key] = out.holders.get(key, 0) + n
            out.held_ids.setdefault(key, []).extend(r.get("held_ids") or [])
            out.holder_xids.setdefault(session.pid, set()).add(xid)
        oldest = r["oldest_s"] if role == "ready" else None
        if oldest is not None:
            out.oldest_ready_s = max(out.oldest_ready_s or oldest, oldest)
        stale = int(r["stale"] or 0) if role == "running" else 0
        out.stale += stale
        out.stale_ids += r.get("stale_ids") or []
        if r["grp"] is not None and role in ("ready", "scheduled", "running"):
            g = out.groups.setdefault(
                r["grp"],
                {"ready": 0, "scheduled": 0, "running": 0, "locked": 0, "oldest": None, "stale": 0},
            )
            if role == "ready":
                g["ready"] += n - later
                g["scheduled"] += later
            else:
                g[role] += n
            g["locked"] += n if holder else 0
            g["stale"] += stale
            if oldest is not None:
                g["oldest"] = max(g["oldest"] or oldest, oldest)
    return out


def index_count(
    spec: QueueSpec, parts: dict[str, sql.Composable], plan: CountPlan
) -> tuple[sql.Composed, None]:
    """Index mode's statement: a UNION ALL of one branch per exactly counted value. Who
    holds which rows is the sessions statement's to read, in the same moment as the waits.

    The values are quoted in as literals, not passed as parameters: a statement without
    parameters is planned once when prepared (a partial index on the value still serves
    it), where a parameter would make the server plan it again on every poll."""
    if "literal" not in plan.statements:  # the same on every poll of this plan
        plan.statements["literal"] = sql.SQL("\nUNION ALL\n").join(
            branch(spec, parts, value, sql.Literal(value.value), limit=sql.Literal(ROW_LIMIT))
            for value in plan.exact_values
        )
    return plan.statements["literal"], None


def one_pass_count(
    spec: QueueSpec, parts: dict[str, sql.Composable], xids: list[str]
) -> tuple[sql.Composed, dict[str, object]]:
    """Scan mode's statement: every value, the oldest due age and the stale ids."""
    return one_pass_statement(spec, parts, bool(xids)), one_pass_params(spec, xids)


def one_pass_statement(
    spec: QueueSpec, parts: dict[str, sql.Composable], holders: bool
) -> sql.Composed:
    """The one pass, with row-lock holders read where any transaction may hold rows."""
    running = sql.SQL("{}::text = ANY (%(running)s::text[])").format(parts["state"])
    is_stale = sql.SQL("({} AND {})").format(running, parts["is_stale"])
    return statement(
        spec,
        "monitor/count_all_in_one_pass",
        **{
            **parts,
            "is_stale": is_stale,
            "holder_xid": holder_part(holders),
            "held_ids": held_part(holders, parts),
        },
    )


def one_pass_params(spec: QueueSpec, xids: list[str]) -> dict[str, object]:
    return {
        "xids": xids,
        "limit": ROW_LIMIT,
        "ready": list(spec.values("ready")),
        "running": list(spec.values("running")),
    }


def count_through_indexes(
    conn: psycopg.Connection,
    spec: QueueSpec,
    parts: dict[str, sql.Composable],
    plan: CountPlan,
    statements: StatementBytes,
) -> QueueCounts:
    """Index mode: each exactly counted value through its own index, in one statement."""
    stmt, params = index_count(spec, parts, plan)
    with conn.cursor(row_factory=dict_row) as cur:
        # a plan's statement depends on the plan alone (its values and their roles)
        rows = cur.execute(statements.get(conn, ("counts", plan), lambda: stmt), params).fetchall()
    counts = _fold(spec, rows, {})
    for value in plan.exact_values:  # a value with no rows is an exact zero, not an unknown
        counts.by_status.setdefault(value.value, 0)
    counts.counted = {value.value for value in plan.exact_values}  # not to be estimated
    return counts


def count_in_one_pass(
    conn: psycopg.Connection,
    spec: QueueSpec,
    parts: dict[str, sql.Composable],
    xacts: dict[str, XactHolder],
    statements: StatementBytes | None = None,
) -> QueueCounts:
    """Scan mode: every value, the oldest due age and the stale ids from one read. The
    statement depends on whether any transaction may hold rows, nothing else: composed
    once for each (`statements`), not on every poll."""
    holders = bool(xacts)

    def compose() -> sql.Composed:
        return one_pass_statement(spec, parts, holders)

    stmt = compose() if statements is None else statements.get(conn, ("one pass", holders), compose)
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(stmt, one_pass_params(spec, list(xacts))).fetchall()
    counts = _fold(spec, rows, xacts)
    counts.counted = set(spec.values_of(tuple(spec.states))) | set(counts.by_status)
    return counts
