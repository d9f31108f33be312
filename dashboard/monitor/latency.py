"""Latency: how long the jobs of the last window waited and ran, per group and for the queue.

    reader = LatencyReader(spec, parts)
    latency = reader.read(conn, statements)     # a Latency, read as of now

Wait time: a job's start time minus its due time (scheduled_at where the spec has it, else
created_at), over the jobs that started in the window. Run time: its finish time minus its
start time, over the jobs that finished in the window (in the history table where the
library moves them there). Percentiles are percentile_cont's (interpolated between the two
nearest durations, as numpy's default); buckets count the durations at or below each of
LATENCY_BUCKETS.

Each side is one range on its own timestamp, so an index on that timestamp reads only the
window's rows. Whether one can is asked of the planner (EXPLAIN, sequential scans priced
out, every REPLAN_S): where none can, the section reads the whole table each time and the
monitor paces it as it paces the finished counts, and says so; `doctor` names the index.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

import queries
from dashboard.models import (
    FINISHED_ROLES,
    LATENCY_BUCKETS,
    Derived,
    Durations,
    GroupLatency,
    Latency,
    QueueSpec,
)
from dashboard.monitor.statement_bytes import StatementBytes
from dashboard.queue_sql import window
from dashboard.queue_sql.parts import state_in, statement

REPLAN_S = 300.0
STARTED, FINISHED = "monitor/latency_started", "monitor/latency_finished"
FINISHED_HISTORY = "monitor/latency_finished_history"
NO_STARTED = sql.SQL("SELECT NULL::text AS grp, NULL::float8 AS seconds WHERE false")
NO_FINISHED = sql.SQL(
    "SELECT NULL::text AS grp, NULL::float8 AS seconds, false AS failed WHERE false"
)


@dataclass(frozen=True)
class Sides:
    """What the spec lets the latency measure, and a sentence for each thing it lacks."""

    wait: bool  # start and due (or enqueue) times: the jobs started in the window
    finished: bool  # a finish time: the jobs finished in the window, and the failed ones
    run: bool  # a finish time and the start time beside it
    history: bool  # the finished jobs are read in the history table
    missing: tuple[str, ...] = ()

    @property
    def any(self) -> bool:
        return self.wait or self.finished


def _own(spec: QueueSpec, name: str) -> bool:
    """Whether the adapter has its own version of statement `name`."""
    return queries.resolve(name, spec.adapter) != name


def sides(spec: QueueSpec, history_unreadable: bool = False) -> Sides:
    """What the spec's timestamps measure; each missing one named with its flag or key."""
    cols, missing = spec.columns, []
    started = cols.started_at is not None
    wait = started and (cols.scheduled_at is not None or cols.created_at is not None)
    if not started:
        missing.append(
            "wait and run times need a start time: name the column the claim sets with "
            "--started-at-column (started_at in the queue TOML)"
        )
    elif not wait:
        missing.append(
            "wait time needs an enqueue or due time: --created-at-column or "
            "--scheduled-at-column (created_at or scheduled_at in the queue TOML)"
        )
    history = spec.history
    if history is not None:
        finished = history.finished_at is not None and not history_unreadable
        run = finished and (history.started_at is not None or _own(spec, FINISHED_HISTORY))
        if history_unreadable:
            missing.append(
                f"run time and finished jobs need read access to the history table "
                f"{history.table} (see the GRANT above)"
            )
        elif history.finished_at is None:
            missing.append(
                f"run time and finished jobs need the time the history table {history.table} "
                "logs a job's end: finished_at in [queue.history]"
            )
        elif not run:
            missing.append(
                f"run time needs the start time the history table {history.table} keeps: "
                "started_at in [queue.history]"
            )
        return Sides(wait, finished, run, True, tuple(missing))
    finished = cols.finished_at is not None
    if not finished:
        missing.append(
            "run time and finished jobs need a finish time: name the column set when a job "
            "ends with --finished-at-column (finished_at in the queue TOML)"
        )
    return Sides(wait, finished, finished and started, False, tuple(missing))


def bucket_counts() -> sql.Composable:
    """`ARRAY[count(*) FILTER (WHERE d.seconds <= b), …]`, one per LATENCY_BUCKETS bound."""
    counts = sql.SQL(", ").join(
        sql.SQL("count(*) FILTER (WHERE d.seconds <= {})").format(sql.Literal(float(b)))
        for b in LATENCY_BUCKETS
    )
    return sql.SQL("ARRAY[{}]::bigint[]").format(counts)


def side_statements(
    spec: QueueSpec, parts: dict[str, sql.Composable], found: Sides
) -> tuple[sql.Composable, sql.Composable, dict[str, Any]]:
    """The started side, the finished side, and their parameters."""
    params: dict[str, Any] = {"window_s": float(spec.policy.latency_window_s)}
    started = NO_STARTED
    if found.wait:
        started = statement(
            spec, STARTED, **parts, started_since=window.since(spec, "started_at", parts)
        )
    finished = NO_FINISHED
    if found.finished and found.history:
        history = spec.history
        finished = statement(
            spec,
            FINISHED_HISTORY,
            **parts,
            history_group=window.history_column(spec, history.group, "text"),
            history_started=window.history_column(spec, history.started_at, "timestamptz"),
            history_finished=window.history_column(spec, history.finished_at, "timestamptz"),
            history_since=window.history_since(spec, history.finished_at),
        )
        params["finished_values"] = spec.values_of(FINISHED_ROLES)
        params["failed_values"] = spec.values_of(("failed", "dead"))
    elif found.finished:
        failed, failed_params = state_in(spec, ("failed", "dead"), parts, prefix="f")
        finished = statement(
            spec,
            FINISHED,
            **parts,
            failed=failed,
            finished_since=window.since(spec, "finished_at", parts),
        )
        params |= failed_params
    return started, finished, params


def _nodes(plan: dict[str, Any]):
    yield plan
    for child in plan.get("Plans", ()):
        yield from _nodes(child)


def served(plan: dict[str, Any]) -> bool:
    """Whether a plan (made with sequential scans priced out) reads only through index
    conditions: no sequential scan, no walk of a whole index filtering every row."""
    for node in _nodes(plan):
        kind = node.get("Node Type", "")
        if kind == "Seq Scan":
            return False
        if kind in ("Index Scan", "Index Only Scan", "Bitmap Index Scan"):
            if "Index Cond" not in node:
                return False
    return True


def unserved_sides(
    conn: psycopg.Connection, spec: QueueSpec, parts: dict[str, sql.Composable], found: Sides
) -> list[str]:
    """The sides ('started', 'finished') no index can serve: EXPLAIN, never a row read,
    on this session with sequential scans priced out for the moment."""
    started, finished, params = side_statements(spec, parts, found)
    asked = [
        (n, s)
        for n, s, on in (("started", started, found.wait), ("finished", finished, found.finished))
        if on
    ]
    out = []
    conn.execute(queries.load("monitor/set_seqscan"), {"setting": "off"})
    try:
        for name, stmt in asked:
            row = conn.execute(queries.get("monitor/explain", statement=stmt), params).fetchone()
            if not served(row[0][0]["Plan"]):
                out.append(name)
    finally:
        conn.execute(queries.load("monitor/set_seqscan"), {"setting": "on"})
    return out


def timestamp_of(spec: QueueSpec, side: str) -> str:
    """The timestamp a side's range is on, as the spec names it."""
    if side == "started":
        value = spec.columns.started_at
    elif spec.history is not None:
        return f"{spec.history.table}.{spec.history.finished_at}"
    else:
        value = spec.columns.finished_at
    if isinstance(value, Derived):
        return f"{value.name} (derived by the {spec.adapter} adapter)"
    return str(value)


def _durations(row: dict[str, Any] | None) -> Durations:
    if row is None:
        return Durations(0, 0.0, None, None, None, (0,) * len(LATENCY_BUCKETS))
    p50, p95, p99 = row["percentiles"] or (None, None, None)
    return Durations(
        int(row["measured"]),
        float(row["sum_s"]),
        p50,
        p95,
        p99,
        tuple(int(n) for n in row["buckets"]),
    )


def group_latency(name: str | None, found: Sides, wait: dict | None, run: dict | None):
    return GroupLatency(
        group=name,
        wait=_durations(wait) if found.wait else None,
        run=_durations(run) if found.run else None,
        finished=int(run["jobs"]) if run else 0,
        failed=int(run["failed"]) if run else 0,
    )


def to_latency(spec: QueueSpec, found: Sides, rows: list[dict[str, Any]]) -> Latency:
    """The rows of get_latency as a Latency read now."""
    whole = {r["kind"]: r for r in rows if r["whole"]}
    by_group: dict[str, dict[str, dict]] = {}
    for r in rows:
        if not r["whole"] and r["group"] is not None:  # a job of no group counts in the whole
            by_group.setdefault(r["group"], {})[r["kind"]] = r
    queue = group_latency(None, found, whole.get("wait"), whole.get("run"))
    groups = tuple(
        group_latency(name, found, kinds.get("wait"), kinds.get("run"))
        for name, kinds in sorted(by_group.items())
    )
    missing = list(found.missing)
    if found.run and queue.finished and queue.run is not None and queue.run.count == 0:
        start = timestamp_of(spec, "started")
        if found.history and spec.history.started_at:
            start = f"{spec.history.table}.{spec.history.started_at}"
        missing.append(
            f"run time: none of the {queue.finished} jobs finished in the window keeps a start "
            f"time ({start} is gone once a job ends)"
        )
    return Latency(
        window_s=spec.policy.latency_window_s,
        queue=queue,
        groups=groups,
        missing=tuple(missing),
        read_at=datetime.now(timezone.utc),
        finished_measured=found.finished,
    )


class LatencyReader:
    """The latency section of one queue: what its spec measures, whether indexes serve
    it (planned every REPLAN_S), and its statement."""

    def __init__(
        self, spec: QueueSpec, parts: dict[str, sql.Composable], history_unreadable: bool = False
    ):
        self.spec, self.parts = spec, parts
        self.sides = sides(spec, history_unreadable)
        self.unserved: list[str] | None = None  # None: not planned yet
        self.planned_at: float | None = None
        # composed once: the statement's bytes are then kept per connection
        self.started, self.finished, self.params = side_statements(spec, parts, self.sides)

    @property
    def measures(self) -> bool:
        return self.sides.any

    def paced_because(self) -> str | None:
        """Why the section reads whole tables (and is paced), or None where indexes serve."""
        if not self.unserved:
            return None
        named = " and ".join(timestamp_of(self.spec, s) for s in self.unserved)
        return f"no index serves the window's range on {named}: `queuetop doctor` names one"

    def plan(self, conn: psycopg.Connection, now: float) -> None:
        if self.planned_at is None or now - self.planned_at > REPLAN_S:
            self.unserved = unserved_sides(conn, self.spec, self.parts, self.sides)
            self.planned_at = now

    def read(self, conn: psycopg.Connection, statements: StatementBytes) -> Latency:
        """The latency as of now (plan() first: it says whether the read is paced)."""

        def build() -> sql.Composed:
            return queries.get(
                "monitor/get_latency",
                started=self.started,
                finished=self.finished,
                buckets=bucket_counts(),
            )

        stmt = statements.get(conn, ("latency",), build)
        with conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(stmt, self.params).fetchall()
        return to_latency(self.spec, self.sides, rows)


def snapshot_latency(
    reader: LatencyReader, data: Latency | None, error: str | None, every_s: float
) -> Latency:
    """The latency a snapshot carries: the last read (or none yet), why it is old or
    absent, and, where no index serves it, that it is paced and how often it is read."""
    spec = reader.spec
    found = reader.sides
    if not reader.measures:
        empty = GroupLatency(None, None, None, 0, 0)
        return Latency(
            spec.policy.latency_window_s, empty, missing=found.missing, finished_measured=False
        )
    if data is None:
        data = Latency(
            spec.policy.latency_window_s,
            GroupLatency(None, None, None, 0, 0),
            missing=found.missing,
            finished_measured=found.finished,
        )
        error = error or "not read yet"
    paced = reader.paced_because()
    if paced is not None:
        paced = f"read every {every_s:g}s, paced: {paced}"
    return replace(data, error=error, paced=paced)
