"""good_job's worker (Ruby): its own SQL, in its order."""

from __future__ import annotations

import argparse
import json
import uuid
from typing import Any

import psycopg

from tests.emulated_workers.base import Worker, named, wait_delay


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
                wait = wait_delay(args, params.get("executions", 0))
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
