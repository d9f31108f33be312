"""Oban (the Python port) for tests/test_adapter_oban.py: its workers, and a small CLI the
test runs in Oban's own interpreter (Python 3.12) to enqueue with Oban's API and to read
Oban's own view of the jobs.

Every run of a job writes (job id, attempt, node, event) into job_runs, so that a test can
tell a job that ran once from one that ran twice. The database is OBAN_DSN, as for
`oban start`; `oban start` imports these workers by the module name `oban_app`.

    python oban_app.py setup      # job_runs, then the scenario's jobs; prints {name: id}
    python oban_app.py quick Q    # one more quick job on queue Q; prints its id
    python oban_app.py counts     # Oban's count_jobs: [[state, queue, n], ...]
    python oban_app.py jobs ID..  # {id: {state, attempt, max_attempts, meta, errors}}
"""

import asyncio
import json
import os
import sys

import psycopg
from oban import Oban, worker
from oban.job import JobState

RUNS = (
    "CREATE TABLE IF NOT EXISTS job_runs (job_id bigint, attempt int, node text, "
    "event text, at timestamptz NOT NULL DEFAULT now())"
)
HOUR = 3600


async def record(job, event: str) -> None:
    async with await psycopg.AsyncConnection.connect(
        os.environ["OBAN_DSN"], autocommit=True
    ) as conn:
        await conn.execute(
            "INSERT INTO job_runs (job_id, attempt, node, event) VALUES (%s, %s, %s, %s)",
            (job.id, job.attempt, job.attempted_by[0], event),
        )


@worker(queue="default", max_attempts=3)
class Quick:
    async def process(self, job):
        await record(job, "done")


@worker(queue="default", max_attempts=3)
class Long:
    """Sleeps on its first attempt only, so a rescued run finishes at once."""

    async def process(self, job):
        await record(job, "start")
        if job.attempt == 1:
            await asyncio.sleep(job.args["seconds"])
        await record(job, "done")


@worker(queue="default", max_attempts=3)
class Failing:
    async def process(self, job):
        await record(job, "start")
        raise RuntimeError("this job always fails")

    def backoff(self, job) -> int:
        return HOUR  # retryable for an hour: the counts hold still while the test reads them


async def setup(oban: Oban) -> dict[str, int]:
    """The scenario: what the live worker (queue default) and the victim (queue victim) run."""
    jobs = {
        "quick1": Quick.new({"i": 1}),
        "quick2": Quick.new({"i": 2}),
        "live_long": Long.new({"seconds": HOUR}),
        "retryable": Failing.new({}),
        "discarded": Failing.new({}, max_attempts=1),
        "scheduled": Quick.new({"i": 3}, scheduled_in=HOUR),
        "to_cancel": Quick.new({"i": 4}, scheduled_in=HOUR),
        "orphan": Long.new({"seconds": HOUR}, queue="victim"),
        "orphan_max1": Long.new({"seconds": HOUR}, queue="victim", max_attempts=1),
    }
    inserted = await oban.enqueue_many(list(jobs.values()))
    ids = dict(zip(jobs, (job.id for job in inserted), strict=True))
    await oban.cancel_job(ids["to_cancel"])
    return ids


async def describe(oban: Oban, ids: list[int]) -> dict[str, dict]:
    out = {}
    for job_id in ids:
        job = await oban.get_job(job_id)
        out[str(job_id)] = {
            "state": str(job.state),
            "attempt": job.attempt,
            "max_attempts": job.max_attempts,
            "meta": job.meta,
            "errors": job.errors,
        }
    return out


async def main(argv: list[str]) -> None:
    dsn = os.environ["OBAN_DSN"]
    pool = await Oban.create_pool(dsn)
    try:
        async with Oban(pool=pool) as oban:  # a client: no queues, no leadership
            if argv[0] == "setup":
                with psycopg.connect(dsn, autocommit=True) as conn:
                    conn.execute(RUNS)
                result = await setup(oban)
            elif argv[0] == "quick":
                result = (await oban.enqueue(Quick.new({"i": 0}, queue=argv[1]))).id
            elif argv[0] == "counts":
                rows = await oban._query.count_jobs([str(s) for s in JobState])
                result = [list(row) for row in rows]
            else:
                result = await describe(oban, [int(i) for i in argv[1:]])
    finally:
        await pool.close()
    print(json.dumps(result, default=str))


if __name__ == "__main__":
    # Through the module name, so that the jobs name their workers `oban_app.Quick`, ...
    # (not `__main__.Quick`), which is what `oban start` imports.
    import oban_app

    asyncio.run(oban_app.main(sys.argv[1:]))
