"""The pgqueuer worker of tests/test_adapter_pgqueuer.py: `python pgqueuer_app.py` runs
pgqueuer's own worker loop (pgqueuer.run, what `pgq run pgqueuer_app:main` does; the `pgq`
command itself fails with typer 0.29) on the entrypoints named in $PGQ_ENTRYPOINTS.

DSN from $PGQ_DSN. Its heartbeat timeout is $PGQ_HEARTBEAT_TIMEOUT s (it beats every half of
it, and re-picks jobs of its entrypoints whose heartbeat is older). Every entrypoint writes
side_effects(job_id, task, event), the proof of what ran and how many times.
"""

from __future__ import annotations

import asyncio
import os
from contextlib import asynccontextmanager
from datetime import timedelta

import psycopg
from pgqueuer import PgQueuer
from pgqueuer.models import Job

DSN = os.environ.get("PGQ_DSN", "")
HEARTBEAT_TIMEOUT_S = float(os.environ.get("PGQ_HEARTBEAT_TIMEOUT", "2"))
ENTRYPOINTS = os.environ.get("PGQ_ENTRYPOINTS", "quick,long,boom,hold").split(",")

SIDE_TABLE = (
    "CREATE TABLE side_effects (id bigserial PRIMARY KEY, job_id bigint NOT NULL, "
    "task text NOT NULL, event text NOT NULL)"
)


async def _record(job_id: int, task: str, event: str) -> int:
    """Insert one side effect; how many times this job had started before."""
    async with await psycopg.AsyncConnection.connect(
        DSN, autocommit=True, application_name="side-effect"
    ) as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM side_effects WHERE job_id = %s AND event = 'started'", (job_id,)
        )
        (before,) = await cur.fetchone()
        await conn.execute(
            "INSERT INTO side_effects (job_id, task, event) VALUES (%s, %s, %s)",
            (job_id, task, event),
        )
        return before


async def quick(job: Job) -> None:
    await _record(job.id, "quick", "done")


async def long(job: Job) -> None:
    """Sleeps (payload: seconds) on its first run only, so that a rerun after a crash is
    quick; a re-pick of a stale job keeps its attempts, so the side table tells."""
    if await _record(job.id, "long", "started") == 0:
        await asyncio.sleep(float(job.payload or b"60"))
    await _record(job.id, "long", "done")


async def boom(job: Job) -> None:
    await _record(job.id, "boom", "raised")
    raise RuntimeError("boom")


@asynccontextmanager
async def main():
    """The factory pgqueuer.run calls: a PgQueuer on one autocommit connection."""
    conn = await psycopg.AsyncConnection.connect(
        DSN, autocommit=True, application_name="pgqueuer-worker"
    )
    pgq = PgQueuer.from_psycopg_connection(conn)
    # name: (function, on_failure, concurrency_limit); one `long` at a time, so that a
    # requeue which left queue_manager_id set would block it (the limit counts such rows)
    handlers = {
        "quick": (quick, "delete", 0),
        "long": (long, "delete", 1),
        "live": (long, "delete", 0),
        "boom": (boom, "delete", 0),
        "hold": (boom, "hold", 0),
    }
    for name in ENTRYPOINTS:
        function, on_failure, limit = handlers[name]
        pgq.entrypoint(name, on_failure=on_failure, concurrency_limit=limit)(function)
    try:
        yield pgq
    finally:
        await conn.close()


if __name__ == "__main__":
    import pgqueuer

    asyncio.run(
        pgqueuer.run(
            "pgqueuer_app:main",
            batch_size=1,
            heartbeat_timeout=timedelta(seconds=HEARTBEAT_TIMEOUT_S),
            dequeue_timeout=timedelta(seconds=1),
        )
    )
