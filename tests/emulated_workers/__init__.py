"""Emulated workers of River, good_job, Solid Queue and Que: each library's own SQL, in its order.

These libraries cannot run here (Go, Ruby), so their published schema is created from
their own migration SQL (library_schemas/<lib>.sql) and a worker process runs the
statements their workers run (library_schemas/<lib>_worker.sql), with the same sessions:
Que's locker and good_job's worker hold the job's session advisory lock on their own
connection for the whole job, so a SIGKILLed worker drops it as a real one would.

    python -m tests.emulated_workers que --dsn DSN --name que-a [--poll 0.05]

A job's arguments say what it does: {"sleep": seconds} (and {"hold": name}: until the
test releases that name) then it writes one row into queuetop_test_done (job id, worker)
and completes; {"fail": true} fails instead, retried
after `waits[n]` seconds on its n-th failure (River NextRetry, ActiveJob retry_on, Que
retry_in), or given up at once without `waits` (River discards, good_job discards, Solid
Queue fails the execution, Que expires).
"""

from tests.emulated_workers.base import (
    SCHEMAS,
    Worker,
    create_schema,
    done_count,
    hold,
    named,
    release,
)
from tests.emulated_workers.good_job import GoodJob
from tests.emulated_workers.que import Que
from tests.emulated_workers.river import River
from tests.emulated_workers.solid_queue import SolidQueue

WORKERS = {w.lib: w for w in (River, GoodJob, SolidQueue, Que)}

__all__ = [
    "SCHEMAS",
    "WORKERS",
    "GoodJob",
    "Que",
    "River",
    "SolidQueue",
    "Worker",
    "create_schema",
    "done_count",
    "hold",
    "named",
    "release",
]
