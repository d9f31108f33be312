"""The table's own count of finished jobs, read before and after a run.

The workers count their completions and report them every 0.1 s; a worker
killed (SIGKILL, OOM) between its COMMIT and its next report takes its last
completions with it, so their sum is a lower bound. The table is not.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

import queries
from dashboard import db
from dashboard.errors import UserError
from dashboard.loadgen.strategies import build
from dashboard.models import QueueSpec
from dashboard.queue_sql.parts import queue_parts

COUNT_TIMEOUT_MS = 10_000  # a huge user table is not worth a hang at the end of a run


@dataclass(frozen=True)
class Finished:
    done: int
    dead: int  # in the terminal state (dead, or failed without a dead state)


def count_finished(dsn: str, spec: QueueSpec) -> Finished | None:
    """Done and terminal rows now; None if they cannot be counted (timeout, privilege)."""
    try:
        terminal = build(spec).values["terminal"]
        done = list(spec.values("done"))
        with db.connect_monitor(dsn, timeout_ms=COUNT_TIMEOUT_MS) as conn:
            row = conn.execute(
                queries.get("loadgen/count_finished_jobs", **queue_parts(spec)),
                {"done_values": done, "terminal": terminal, "finished_values": [*done, terminal]},
            ).fetchone()
    except (psycopg.Error, UserError):
        return None
    return Finished(int(row[0]), int(row[1]))


def table_change(before: Finished | None, after: Finished | None) -> dict[str, int | None]:
    """The run's finished jobs as the table counts them (every writer's, not only ours)."""
    if before is None or after is None:
        return {"table_done": None, "table_dead": None}
    return {"table_done": after.done - before.done, "table_dead": after.dead - before.dead}
