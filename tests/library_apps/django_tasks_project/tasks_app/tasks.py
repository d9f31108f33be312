"""The tasks the test enqueues; each writes side_effects(task id, event) on its own
connection: the proof of what ran and how many times."""

import os
import time

import psycopg
from django.tasks import task


def record(task_id: str, event: str) -> None:
    with psycopg.connect(os.environ["DJANGO_DSN"], autocommit=True) as conn:
        conn.execute("INSERT INTO side_effects (job_id, event) VALUES (%s, %s)", (task_id, event))


@task(takes_context=True)
def quick(context) -> None:
    record(str(context.task_result.id), "done")


@task(takes_context=True)
def long(context, seconds: float) -> None:
    """Sleeps on its first run only (one claim in worker_ids), so a rerun is quick."""
    result = context.task_result
    record(str(result.id), "started")
    if len(result.worker_ids) <= 1:
        time.sleep(seconds)
    record(str(result.id), "done")


@task(takes_context=True)
def boom(context) -> None:
    record(str(context.task_result.id), "raised")
    raise RuntimeError("boom")
