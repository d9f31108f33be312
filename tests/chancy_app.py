"""chancy for tests/test_adapter_chancy.py: its jobs, and its real Worker with short timings.

Every run of a job writes (job id, attempts, claim id, event) into job_runs, so that a test
can tell a job that ran once from one that ran twice. The database is CHANCY_DSN. Jobs run
in chancy's default process pool, whose children import this module as `chancy_app`.

    python chancy_app.py ROLE   # a Worker for the queues tagged role=ROLE, until SIGTERM

`chancy worker start` cannot shorten the heartbeat (30 s, timeout 90 s), so this runs the
same Worker with a heartbeat every second and a 3 s timeout. It runs no plugins (chancy's
own Recovery would reset an orphan too, the same way), so that queuetop finds the orphans.
"""

import asyncio
import os
import sys
import time

import psycopg
from chancy import Chancy, QueuedJob, Worker, job

RUNS = (
    "CREATE TABLE IF NOT EXISTS job_runs (job_id uuid, attempts int, claim_id uuid, "
    "event text, at timestamptz NOT NULL DEFAULT now())"
)


def record(context: QueuedJob, event: str) -> int:
    """Write one run event; how many times this job has started so far."""
    with psycopg.connect(os.environ["CHANCY_DSN"], autocommit=True) as conn:
        conn.execute(
            "INSERT INTO job_runs (job_id, attempts, claim_id, event) VALUES (%s, %s, %s, %s)",
            (context.id, context.attempts, context.claim_id, event),
        )
        return conn.execute(
            "SELECT count(*) FROM job_runs WHERE job_id = %s AND event = 'start'", (context.id,)
        ).fetchone()[0]


# No `from __future__ import annotations`: chancy hands the job its row through the
# QueuedJob annotation, read at run time.
@job(queue="default")
def quick(*, context: QueuedJob) -> None:
    record(context, "done")


@job(queue="default")
def long_job(seconds: int, *, context: QueuedJob) -> None:
    """Sleeps on its first start only, so a recovered run finishes at once."""
    if record(context, "start") == 1:
        time.sleep(seconds)
    record(context, "done")


@job(queue="default")
def failing(*, context: QueuedJob) -> None:
    record(context, "start")
    raise RuntimeError("this job always fails")


async def run_worker(role: str) -> None:
    app = Chancy(os.environ["CHANCY_DSN"], no_default_plugins=True)
    async with (
        app,
        Worker(
            app,
            tags={f"role={role}"},
            heartbeat_poll_interval=1,
            heartbeat_timeout=3,
            shutdown_timeout=2,
        ) as worker,
    ):
        await worker.wait_for_shutdown()


if __name__ == "__main__":
    asyncio.run(run_worker(sys.argv[1]))
