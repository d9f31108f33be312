"""Emulated workers of River, good_job, Solid Queue and Que: each library's own SQL, in its order.

These libraries cannot run here (Go, Ruby), so their published schema is created from
their own migration SQL (library_schemas/<lib>.sql) and a worker process runs the
statements their workers run (library_schemas/<lib>_worker.sql), with the same sessions:
Que's locker and good_job's worker hold the job's session advisory lock on their own
connection for the whole job, so a SIGKILLed worker drops it as a real one would.

    python tests/library_workers.py que --dsn DSN --name que-a [--poll 0.05]

A job's arguments say what it does: {"sleep": seconds} (and {"hold": name}: until the
test releases that name) then it writes one row into queuetop_test_done (job id, worker)
and completes; {"fail": true} fails instead, retried
after `waits[n]` seconds on its n-th failure (River NextRetry, ActiveJob retry_on, Que
retry_in), or given up at once without `waits` (River discards, good_job discards, Solid
Queue fails the execution, Que expires).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

SCHEMAS = Path(__file__).resolve().parent / "library_schemas"
TEST_TABLES = (
    "CREATE TABLE queuetop_test_done (job_id text NOT NULL, worker text NOT NULL)",
    "CREATE TABLE queuetop_test_hold (name text PRIMARY KEY)",
)


def named(lib: str) -> dict[str, str]:
    """The `-- name: x` statements of library_schemas/<lib>_worker.sql."""
    out: dict[str, str] = {}
    name = None
    for line in (SCHEMAS / f"{lib}_worker.sql").read_text().splitlines():
        if line.startswith("-- name:"):
            name = line.split(":", 1)[1].strip()
            out[name] = ""
        elif name:
            out[name] += line + "\n"
    return {k: v.rstrip().rstrip(";") for k, v in out.items()}


def create_schema(conn: psycopg.Connection, lib: str) -> None:
    """The library's published schema (River: one transaction per migration) + the done table."""
    text = (SCHEMAS / f"{lib}.sql").read_text()
    chunks = text.split("\n-- ==== ") if lib == "river" else [text]  # each starts a comment
    for chunk in chunks:
        with conn.transaction():
            conn.execute(("-- " + chunk).encode())  # bytes: the simple protocol, many statements
    for ddl in TEST_TABLES:
        conn.execute(ddl)


def hold(conn: psycopg.Connection, name: str) -> None:
    """Jobs with {"hold": name} run until release(name): a long job, as long as a test wants."""
    conn.execute("INSERT INTO queuetop_test_hold VALUES (%s)", (name,))


def release(conn: psycopg.Connection, name: str) -> None:
    conn.execute("DELETE FROM queuetop_test_hold WHERE name = %s", (name,))


def done_count(conn: psycopg.Connection, job_id: object) -> int:
    return conn.execute(
        "SELECT count(*) FROM queuetop_test_done WHERE job_id = %s", (str(job_id),)
    ).fetchone()[0]


def _wait(args: dict[str, Any], failures: int) -> float | None:
    waits = args.get("waits")
    return float(waits[min(failures, len(waits) - 1)]) if waits else None


class Worker:
    """One process running one job at a time, polling like its library's worker."""

    lib = ""

    def __init__(self, dsn: str, name: str, opts: argparse.Namespace):
        self.dsn, self.name, self.opts = dsn, name, opts
        self.sql = named(self.lib)
        self.conn = self.connect(name)

    def connect(self, app: str) -> psycopg.Connection:
        return psycopg.connect(
            self.dsn, autocommit=True, row_factory=dict_row, application_name=app
        )

    def run(self) -> None:
        while True:
            if not self.work_one():
                time.sleep(self.opts.poll)

    def work_one(self) -> bool:
        raise NotImplementedError

    def body(self, conn: psycopg.Connection, args: dict[str, Any]) -> None:
        """The job itself: it sleeps, and holds while the test says so."""
        time.sleep(args.get("sleep", 0))
        while (
            args.get("hold")
            and conn.execute(
                "SELECT 1 FROM queuetop_test_hold WHERE name = %s", (args["hold"],)
            ).fetchone()
        ):
            time.sleep(0.1)

    def done(self, conn: psycopg.Connection, job_id: object) -> None:
        conn.execute("INSERT INTO queuetop_test_done VALUES (%s, %s)", (str(job_id), self.name))

    def heartbeat(self, statement: str, params: dict[str, Any]) -> None:
        """A thread refreshing the process row on its own connection, as the library does."""

        def beat() -> None:
            with self.connect(f"{self.name} heartbeat") as conn:
                while True:
                    conn.execute(statement, params)
                    time.sleep(self.opts.heartbeat)

        threading.Thread(target=beat, daemon=True).start()


class River(Worker):
    """River's producer: JobGetAvailable, then JobSetStateIfRunningMany (complete in the job's
    transaction, as JobCompleteTx does). Its clock may run behind (River's `now` override)."""

    lib = "river"

    def now(self) -> Any:
        if not self.opts.clock_behind:
            return None
        return self.conn.execute(
            "SELECT now() - make_interval(secs => %s) AS t", (self.opts.clock_behind,)
        ).fetchone()["t"]

    def set_state(
        self,
        conn: psycopg.Connection,
        job: dict,
        state: str,
        *,
        error: str | None = None,
        at: Any = None,
        finalized: bool = False,
    ) -> None:
        now = self.now()
        entry = {
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "attempt": job["attempt"],
            "error": error,
            "trace": "",
        }
        conn.execute(
            self.sql["job_set_state_if_running_many"],
            {
                "ids": [job["id"]],
                "attempt_do_update": [False],
                "attempt": [0],
                "errors_do_update": [error is not None],
                "errors": [Jsonb(entry)],
                "finalized_at_do_update": [finalized],
                "finalized_at": [
                    conn.execute("SELECT coalesce(%s, now()) AS t", (now,)).fetchone()["t"]
                    if finalized
                    else None
                ],
                "metadata_do_merge": [False],
                "metadata_updates": [Jsonb({})],
                "scheduled_at_do_update": [at is not None],
                "scheduled_at": [at],
                "state": [state],
                "now": now,
            },
        )

    def work_one(self) -> bool:
        jobs = self.conn.execute(
            self.sql["job_get_available"],
            {
                "queue": "default",
                "now": self.now(),
                "max_to_lock": 1,
                "max_attempted_by": 100,
                "attempted_by": self.name,
            },
        ).fetchall()
        if not jobs:
            return False
        job, args = jobs[0], jobs[0]["args"]
        self.body(self.conn, args)
        if not args.get("fail"):
            with self.conn.transaction():
                self.done(self.conn, job["id"])
                self.set_state(self.conn, job, "completed", finalized=True)
        elif job["attempt"] >= job["max_attempts"] or not args.get("waits"):
            self.set_state(self.conn, job, "discarded", error="boom", finalized=True)
        else:
            delay = _wait(args, job["attempt"] - 1)
            at = self.conn.execute(
                "SELECT now() + make_interval(secs => %s) AS t", (delay,)
            ).fetchone()["t"]
            self.set_state(
                self.conn, job, "available" if delay <= 5 else "retryable", error="boom", at=at
            )
        return True

    @staticmethod
    def insert(
        conn: psycopg.Connection,
        args: dict,
        *,
        priority: int = 1,
        max_attempts: int = 25,
        scheduled_at: Any = None,
        state: str = "available",
    ) -> int:
        return (
            conn.cursor(row_factory=dict_row)
            .execute(
                named("river")["job_insert"],
                {
                    "args": Jsonb(args),
                    "kind": "sleep",
                    "max_attempts": max_attempts,
                    "metadata": None,
                    "priority": priority,
                    "queue": "default",
                    "scheduled_at": scheduled_at,
                    "state": state,
                    "tags": None,
                },
            )
            .fetchone()["id"]
        )


class GoodJob(Worker):
    """A good_job process with one thread: advisory claim (default) or skiplocked claim,
    perform start, the job, finish, then the advisory unlock on the same connection."""

    lib = "good_job"

    def __init__(self, dsn: str, name: str, opts: argparse.Namespace):
        super().__init__(dsn, name, opts)
        self.process = str(uuid.uuid4())
        state = json.dumps({"name": name})
        self.conn.execute(
            self.sql["process_register"], {"id": self.process, "state": state, "lock_type": None}
        )
        self.heartbeat(self.sql["process_heartbeat"], {"id": self.process, "state": state})
        self.advisory = opts.mode == "advisory"

    def work_one(self) -> bool:
        sql, conn = self.sql, self.conn
        if self.advisory:
            job = conn.execute(sql["claim_advisory"], {"select_limit": 1000}).fetchone()
        else:
            job = conn.execute(sql["claim_skiplocked"], {"process_id": self.process}).fetchone()
        if job is None:
            return False
        key = {"key": f"good_jobs-{job['id']}"}
        fresh = conn.execute(sql["executable_check"], {"id": job["id"]}).fetchone()
        if fresh is None or fresh["finished_at"] is not None:
            if self.advisory:
                conn.execute(sql["unlock_advisory"], key)
            return True
        error = event = None
        with conn.transaction():
            if fresh["performed_at"] is not None:  # the last worker died mid-perform
                error = (
                    "GoodJob::InterruptedError: Interrupted after starting perform at "
                    f"'{fresh['performed_at']}'"
                )
                event = 0
                conn.execute(
                    sql["perform_mark_interrupted_executions"],
                    {"id": job["id"], "error": error, "duration": "0 seconds"},
                )
            execution = conn.execute(
                sql["perform_start_execution"], {"id": job["id"], "process_id": self.process}
            ).fetchone()["id"]
            conn.execute(
                sql["perform_start_job"],
                {
                    "id": job["id"],
                    "process_id": self.process,
                    "error": error,
                    "error_event": event,
                    "lock_type": 0 if self.advisory else 1,
                },
            )
        params = fresh["serialized_params"]
        args = params["arguments"][0]
        self.body(conn, args)
        finish = {"execution_id": execution, "duration": "1 second", "error_backtrace": None}
        with conn.transaction():
            if not args.get("fail"):
                self.done(conn, job["id"])
            if args.get("fail") and args.get("waits"):  # retry_on: the same row, later
                wait = _wait(args, params.get("executions", 0))
                conn.execute(
                    sql["finish_execution"],
                    {**finish, "error": "RuntimeError: boom", "error_event": 3},
                )
                conn.execute(
                    sql["retry_job_in_perform"],
                    {"id": job["id"], "wait": f"{wait} seconds", "error": "RuntimeError: boom"},
                )
            else:
                error, event = ("RuntimeError: boom", 1) if args.get("fail") else (None, None)
                conn.execute(
                    sql["finish_execution"], {**finish, "error": error, "error_event": event}
                )
                conn.execute(
                    sql["finish_job"], {"id": job["id"], "error": error, "error_event": event}
                )
        if self.advisory:
            conn.execute(sql["unlock_advisory"], key)
        return True

    @staticmethod
    def enqueue(
        conn: psycopg.Connection, args: dict, *, priority: int = 0, scheduled_at: Any = None
    ) -> str:
        job_id = str(uuid.uuid4())
        params = {
            "job_class": "SleepJob",
            "job_id": job_id,
            "queue_name": "default",
            "priority": priority,
            "arguments": [args],
            "executions": 0,
            "exception_executions": {},
            "locale": "en",
            "timezone": "UTC",
        }
        conn.execute(
            named("good_job")["enqueue"],
            {
                "id": job_id,
                "job_class": "SleepJob",
                "queue_name": "default",
                "priority": priority,
                "serialized_params": json.dumps(params),
                "scheduled_at": scheduled_at,
            },
        )
        return job_id


class SolidQueue(Worker):
    """A Solid Queue worker process: registered, heart-beating, claiming in one transaction
    (FOR UPDATE SKIP LOCKED), finishing or failing its claimed execution."""

    lib = "solid_queue"

    def __init__(self, dsn: str, name: str, opts: argparse.Namespace):
        super().__init__(dsn, name, opts)
        self.process = self.conn.execute(
            self.sql["process_register"],
            {
                "kind": "Worker",
                "supervisor_id": None,
                "pid": os.getpid(),
                "hostname": "test",
                "metadata": json.dumps({"queues": "*", "thread_pool_size": 1}),
                "name": f"worker-{uuid.uuid4().hex[:20]}",
            },
        ).fetchone()["id"]
        self.heartbeat(self.sql["process_heartbeat"], {"id": self.process})

    def work_one(self) -> bool:
        sql, conn = self.sql, self.conn
        with conn.transaction():
            ready = conn.execute(sql["claim_select"], {"limit": 1}).fetchall()
            if not ready:
                return False
            ids = [r["job_id"] for r in ready]
            conn.execute(sql["claim_insert"], {"job_ids": ids, "process_id": self.process})
            (claim,) = conn.execute(
                sql["claim_reload"], {"job_ids": ids, "process_id": self.process}
            ).fetchall()
            conn.execute(sql["claim_delete_ready"], {"ready_ids": [r["id"] for r in ready]})
        job = conn.execute(
            "SELECT arguments FROM solid_queue_jobs WHERE id = %s", (claim["job_id"],)
        ).fetchone()
        args = json.loads(job["arguments"])["arguments"][0]
        self.body(conn, args)
        if not args.get("fail"):
            self.done(conn, claim["job_id"])
        with conn.transaction():  # unless_already_finalized
            if conn.execute(sql["finalize_lock"], {"claimed_id": claim["id"]}).fetchone():
                if args.get("fail"):
                    error = {
                        "exception_class": "RuntimeError",
                        "message": "boom",
                        "backtrace": ["sleep_job.rb:1"],
                    }
                    conn.execute(
                        sql["fail_job"], {"job_id": claim["job_id"], "error": json.dumps(error)}
                    )
                else:
                    conn.execute(sql["finish_job"], {"job_id": claim["job_id"]})
                conn.execute(sql["finalize_delete_claim"], {"claimed_id": claim["id"]})
        return True

    @staticmethod
    def enqueue(
        conn: psycopg.Connection,
        args: dict,
        *,
        priority: int = 0,
        scheduled_at: Any = None,
        concurrency_key: str | None = None,
    ) -> int:
        sql = named("solid_queue")
        active = str(uuid.uuid4())
        arguments = {
            "job_class": "SleepJob",
            "job_id": active,
            "queue_name": "default",
            "arguments": [args],
            "executions": 0,
            "exception_executions": {},
        }
        with conn.transaction():
            job_id = conn.execute(
                sql["enqueue_job"],
                {
                    "queue_name": "default",
                    "class_name": "SleepJob",
                    "arguments": json.dumps(arguments),
                    "priority": priority,
                    "active_job_id": active,
                    "scheduled_at": scheduled_at,
                    "concurrency_key": concurrency_key,
                },
            ).fetchone()[0]
            step = (
                "block_job"
                if concurrency_key
                else "schedule_job"
                if scheduled_at
                else "dispatch_ready"
            )  # a concurrency-limited one: its semaphore is taken
            conn.execute(sql[step], {"job_id": job_id})
        return job_id


class Que(Worker):
    """A Que process: a locker connection polling with pg_try_advisory_lock(id) and holding
    the lock while a worker thread runs the job on another (pooled) connection."""

    lib = "que"
    PRIORITIES = json.dumps({"32767": 1})  # one worker, any priority

    def __init__(self, dsn: str, name: str, opts: argparse.Namespace):
        super().__init__(dsn, name, opts)
        locker = self.conn
        locker.execute(
            "SELECT set_config('application_name', %s, false)",
            (f"Que Locker: {locker.info.backend_pid}",),
        )
        locker.execute(self.sql["clean_lockers"])
        locker.execute(
            self.sql["register_locker"],
            {
                "worker_count": 1,
                "worker_priorities": "{NULL}",
                "ruby_pid": os.getpid(),
                "ruby_hostname": name,
                "listening": False,
                "queues": "{default}",
                "job_schema_version": 2,
            },
        )
        locker.execute(self.sql["poller_setup"].encode())
        self.pool = self.connect(name)

    def work_one(self) -> bool:
        sql = self.sql
        jobs = self.conn.execute(
            sql["poll_jobs"], {"queue": "default", "held_locks": [], "priorities": self.PRIORITIES}
        ).fetchall()
        if not jobs:
            return False
        job = jobs[0]
        if self.pool.execute(sql["check_job"], {"id": job["id"]}).fetchone():
            args = job["args"][0]
            self.body(self.pool, args)
            if args.get("fail") and args.get("waits"):
                self.pool.execute(
                    sql["set_error"],
                    {
                        "id": job["id"],
                        "delay": _wait(args, job["error_count"]),
                        "message": "RuntimeError: boom",
                        "backtrace": "sleep_job.rb:1",
                    },
                )
            elif args.get("fail"):
                self.pool.execute(sql["expire_job"], {"id": job["id"]})
            else:
                self.done(self.pool, job["id"])
                self.pool.execute(
                    sql["finish_job" if args.get("finish") else "destroy_job"], {"id": job["id"]}
                )
        self.conn.execute(sql["unlock_jobs"], {"ids": [job["id"]]})
        return True

    @staticmethod
    def insert(
        conn: psycopg.Connection, args: dict, *, priority: int | None = None, run_at: Any = None
    ) -> int:
        return (
            conn.cursor(row_factory=dict_row)
            .execute(
                named("que")["insert_job"],
                {
                    "queue": None,
                    "priority": priority,
                    "run_at": run_at,
                    "job_class": "SleepJob",
                    "args": json.dumps([args]),
                    "kwargs": None,
                    "data": None,
                },
            )
            .fetchone()["id"]
        )


WORKERS = {w.lib: w for w in (River, GoodJob, SolidQueue, Que)}


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("lib", choices=sorted(WORKERS))
    p.add_argument("--dsn", required=True)
    p.add_argument("--name", required=True, help="worker name (River: its client id)")
    p.add_argument("--poll", type=float, default=0.1, help="seconds between empty polls")
    p.add_argument("--heartbeat", type=float, default=0.2, help="process heartbeat, seconds")
    p.add_argument(
        "--mode",
        choices=("advisory", "skiplocked"),
        default="advisory",
        help="good_job's lock strategy",
    )
    p.add_argument(
        "--clock-behind",
        type=float,
        default=0.0,
        help="River: the worker's clock runs this many seconds behind",
    )
    opts = p.parse_args(argv)
    WORKERS[opts.lib](opts.dsn, opts.name, opts).run()


if __name__ == "__main__":
    main(sys.argv[1:])
