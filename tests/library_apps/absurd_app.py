"""Absurd's own Python SDK (`absurd-sdk` 0.5.1 on PyPI) as the workers and the client of
tests/test_adapter_absurd.py, run in a venv of its own: `python absurd_app.py COMMAND ...`.

DSN from $ABSURD_DSN, queue $ABSURD_QUEUE (default). A worker claims one task at a time
with a claim timeout of $ABSURD_CLAIM s (Absurd.start_worker), and its one task, "job",
records what it does in side_effects(job_id = the task id, task, attempt, event). A job
{"seconds": S} runs S seconds; with "extend" it keeps its claim alive meanwhile
(ctx.heartbeat(), Absurd's extend_claim, every third of the timeout); with "once" it is
long on its first run only (a crashed run's retry is quick); with "fail" it raises.

    create                           Absurd.create_queue
    spawn JSON [MAX_ATTEMPTS]        Absurd.spawn; prints {"task_id", "run_id"}
    work NAME                        a worker until killed
    cancel TASK_ID                   Absurd.cancel_task
    result TASK_ID                   Absurd.fetch_task_result: the task's state
"""

from __future__ import annotations

import json
import os
import sys
import time

import psycopg
from absurd_sdk import Absurd

DSN = os.environ.get("ABSURD_DSN", "")
QUEUE = os.environ.get("ABSURD_QUEUE", "default")
CLAIM = int(os.environ.get("ABSURD_CLAIM", "30"))

app = Absurd(DSN, queue_name=QUEUE) if DSN else None


def record(job_id: str, attempt: int, event: str) -> None:
    with psycopg.connect(DSN, autocommit=True, application_name="side-effect") as conn:
        conn.execute(
            "INSERT INTO side_effects (job_id, task, attempt, event) VALUES (%s, 'job', %s, %s)",
            (job_id, attempt, event),
        )


def started_before(job_id: str) -> bool:
    with psycopg.connect(DSN, autocommit=True, application_name="side-effect") as conn:
        return bool(
            conn.execute(
                "SELECT 1 FROM side_effects WHERE job_id = %s AND event = 'started'", (job_id,)
            ).fetchall()
        )


def job(params: dict, ctx) -> dict:
    task_id, attempt = str(ctx.task_id), int(ctx._task["attempt"])
    rerun = started_before(task_id)
    record(task_id, attempt, "started")
    seconds = 0.0 if params.get("once") and rerun else float(params.get("seconds", 0))
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        time.sleep(min(left, CLAIM / 3))
        if params.get("extend"):  # a long job keeps its claim: extend_claim
            ctx.heartbeat()
    if params.get("fail"):
        record(task_id, attempt, "raised")
        raise RuntimeError("boom")
    record(task_id, attempt, "done")
    return {"ok": True}


def main(argv: list[str]) -> None:
    command, *rest = argv
    assert app is not None, "set ABSURD_DSN"
    app.register_task("job")(job)
    if command == "create":
        app.create_queue()
    elif command == "spawn":
        max_attempts = int(rest[1]) if len(rest) > 1 else None
        spawned = app.spawn("job", json.loads(rest[0]), max_attempts=max_attempts)
        print(json.dumps({"task_id": str(spawned["task_id"]), "run_id": str(spawned["run_id"])}))
    elif command == "work":
        app.start_worker(worker_id=rest[0], claim_timeout=CLAIM, poll_interval=0.2)
    elif command == "cancel":
        app.cancel_task(rest[0])
    elif command == "result":
        snapshot = app.fetch_task_result(rest[0])
        print(json.dumps(snapshot.state if snapshot else None))
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main(sys.argv[1:])
