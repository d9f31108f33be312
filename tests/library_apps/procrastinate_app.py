"""The procrastinate app of tests/test_adapter_procrastinate.py, run by procrastinate's own
worker (`python -m procrastinate --app=procrastinate_app.app worker`) and used by the test.

DSN from $PQ_DSN. Short heartbeats, so that a killed worker goes silent quickly: a beat
every $PQ_HEARTBEAT s (1); a worker silent for $PQ_STALLED s (4) is stalled (the next worker to
start deletes its row). Every task writes side_effects(job_id, task, attempt, event), the
proof of what ran and how many times.
"""

from __future__ import annotations

import os
import time

import psycopg
from procrastinate import App, JobContext, PsycopgConnector

DSN = os.environ.get("PQ_DSN", "")
HEARTBEAT_S = float(os.environ.get("PQ_HEARTBEAT", "1"))
STALLED_S = float(os.environ.get("PQ_STALLED", "4"))

app = App(
    connector=PsycopgConnector(
        conninfo=DSN, min_size=1, max_size=2, kwargs={"application_name": "procrastinate-worker"}
    ),
    worker_defaults={
        "update_heartbeat_interval": HEARTBEAT_S,
        "stalled_worker_timeout": STALLED_S,
        "fetch_job_polling_interval": 0.5,
    },
)

SIDE_TABLE = (
    "CREATE TABLE side_effects (id bigserial PRIMARY KEY, job_id bigint NOT NULL, "
    "task text NOT NULL, attempt int NOT NULL, event text NOT NULL)"
)


def _record(job_id: int, task: str, attempt: int, event: str) -> None:
    with psycopg.connect(DSN, autocommit=True, application_name="side-effect") as conn:
        conn.execute(
            "INSERT INTO side_effects (job_id, task, attempt, event) VALUES (%s, %s, %s, %s)",
            (job_id, task, attempt, event),
        )


@app.task(name="quick", queue="demo", pass_context=True)
def quick(context: JobContext) -> None:
    _record(context.job.id, "quick", context.job.attempts, "done")


@app.task(name="long", queue="demo", pass_context=True)
def long(context: JobContext, seconds: float) -> None:
    """Sleeps on its first attempt only, so that a retry after a crash is quick."""
    job = context.job
    _record(job.id, "long", job.attempts, "started")
    if job.attempts == 0:
        time.sleep(seconds)
    _record(job.id, "long", job.attempts, "done")


@app.task(name="boom", queue="demo", pass_context=True)
def boom(context: JobContext) -> None:
    """Fails for good (no retry strategy): procrastinate marks the job failed."""
    _record(context.job.id, "boom", context.job.attempts, "raised")
    raise RuntimeError("boom")
