"""The awa app of tests/test_adapter_awa.py, run with awa-pg's own Python runtime (in a venv
of its own: awa-pg 0.6.9 or 0.5.7) as real workers, and used by the test to enqueue and to
read awa's own view of its jobs.

    python awa_app.py migrate              awa's migrations (client.migrate())
    python awa_app.py enqueue SECONDS [QUEUE] [fail] [later]   prints the job id
    python awa_app.py work NAME QUEUE [N]  a worker of QUEUE (N jobs at once) until killed
    python awa_app.py view                 jobs per state and queue, from awa's list_jobs
    python awa_app.py jobs ID...           each job as awa's get_job reads it (JSON lines)

DSN from $AWA_DSN. Workers beat every $AWA_HEARTBEAT_MS (1000) and take a job silent for
$AWA_STALENESS_MS (4000) for dead; their maintenance sweeps for such jobs every
$AWA_RESCUE_MS; where $AWA_ROTATE_MS is set, their queue storage rotates its ready ring that
often (a long one keeps finished jobs from being pruned mid-test), and $AWA_ROLE names their
role in a storage transition (queue_storage_target), and $AWA_DEADLINE_MS their queue's
deadline_duration (0: no deadline, awa's compact claim batches). Every task writes
side_effects(job_id, task, attempt, event), the proof of what ran and how many times.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import awa
import psycopg

DSN = os.environ.get("AWA_DSN", "")
STATES = ("scheduled", "available", "running", "completed", "retryable", "failed", "cancelled",
          "waiting_external")  # fmt: skip
SIDE_TABLE = (
    "CREATE TABLE IF NOT EXISTS side_effects (id bigserial PRIMARY KEY, job_id bigint NOT NULL, "
    "task text NOT NULL, attempt int NOT NULL, event text NOT NULL)"
)


@dataclass
class Sleep:
    seconds: float
    fail: bool = False


def _record(job_id: int, attempt: int, event: str) -> None:
    with psycopg.connect(DSN, autocommit=True, application_name="side-effect") as conn:
        conn.execute(
            "INSERT INTO side_effects (job_id, task, attempt, event) VALUES (%s, %s, %s, %s)",
            (job_id, "sleep", attempt, event),
        )


async def migrate() -> None:
    client = awa.AsyncClient(DSN)
    await client.migrate()
    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute(SIDE_TABLE)


async def enqueue(seconds: float, queue: str, fail: bool, later: bool) -> None:
    """A job due now, or (later) in an hour: awa keeps that one in awa.scheduled_jobs."""
    client = awa.AsyncClient(DSN)
    run_at = datetime.now(timezone.utc) + timedelta(hours=1) if later else None
    job = await client.insert(
        Sleep(seconds=seconds, fail=fail), queue=queue, max_attempts=3, run_at=run_at
    )
    print(job.id)


async def work(name: str, queue: str, slots: int) -> None:
    client = awa.AsyncClient(DSN)

    @client.task(Sleep, queue=queue)
    async def sleep(job):
        """Sleeps on its first attempt only (a run after a crash is quick); `fail` raises
        awa's terminal error: the job fails for good, as awa's worker records it."""
        _record(job.id, job.attempt, "started")
        if job.args.fail:
            raise awa.TerminalError("boom")
        if job.attempt == 1:
            await asyncio.sleep(job.args.seconds)
        _record(job.id, job.attempt, "done")

    more = {}
    if os.environ.get("AWA_ROTATE_MS"):  # awa 0.6's queue storage only
        more["queue_storage_queue_rotate_interval_ms"] = int(os.environ["AWA_ROTATE_MS"])
    if os.environ.get("AWA_ROLE"):  # awa 0.6's role in a storage transition
        more["storage_transition_role"] = os.environ["AWA_ROLE"]
    queues: list = [(queue, slots)]
    if os.environ.get("AWA_DEADLINE_MS"):  # 0: awa's compact (zero-deadline) claim batches
        deadline = int(os.environ["AWA_DEADLINE_MS"])
        queues = [{"name": queue, "max_workers": slots, "deadline_duration_ms": deadline}]
    await client.start(
        queues,
        heartbeat_interval_ms=int(os.environ.get("AWA_HEARTBEAT_MS", "1000")),
        heartbeat_staleness_ms=int(os.environ.get("AWA_STALENESS_MS", "4000")),
        heartbeat_rescue_interval_ms=int(os.environ.get("AWA_RESCUE_MS", "1000")),
        leader_election_interval_ms=500,
        promote_interval_ms=500,
        **more,
    )
    print(f"READY {name}", flush=True)
    await asyncio.Event().wait()


async def view() -> None:
    """awa's own view: its list_jobs per state (an exact read of awa.jobs, its jobs view)."""
    client = awa.AsyncClient(DSN)
    states: Counter = Counter()
    queues: dict[str, Counter] = {}
    for state in STATES:
        for job in await client.list_jobs(state=state, limit=1000):
            states[state] += 1
            queues.setdefault(job.queue, Counter())[state] += 1
    print(json.dumps({"states": states, "queues": queues}))


async def jobs(ids: list[int]) -> None:
    """Each job as awa's own get_job reads it (on queue storage: its load_job across the
    planes), or its state "missing" where awa finds none."""
    client = awa.AsyncClient(DSN)
    for job_id in ids:
        try:
            job = await client.get_job(job_id)
        except Exception as exc:  # awa raises its own error for a job it cannot find
            print(json.dumps({"id": job_id, "state": "missing", "why": str(exc)}))
            continue
        errors = job.errors or []
        print(
            json.dumps(
                {
                    "id": job.id,
                    "state": str(job.state).rsplit(".", 1)[-1].lower(),
                    "attempt": job.attempt,
                    "queue": job.queue,
                    "last_error": errors[-1] if errors else None,
                    "finalized_at": job.finalized_at,
                }
            )
        )


def main(argv: list[str]) -> None:
    command, *args = argv
    if command == "migrate":
        asyncio.run(migrate())
    elif command == "enqueue":
        seconds, queue = float(args[0]), (args[1] if len(args) > 1 else "demo")
        asyncio.run(enqueue(seconds, queue, "fail" in args[2:], "later" in args[2:]))
    elif command == "work":
        asyncio.run(work(args[0], args[1], int(args[2]) if len(args) > 2 else 1))
    elif command == "view":
        asyncio.run(view())
    elif command == "jobs":
        asyncio.run(jobs([int(a) for a in args]))
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
    # PyO3/tokio teardown can segfault while Python unloads awa's module (awa's own test
    # helpers skip finalizers too): the work is done and flushed, so leave at once
    sys.stdout.flush()
    os._exit(0)
