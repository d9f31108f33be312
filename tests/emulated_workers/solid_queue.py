"""Solid Queue's worker (Ruby): its own SQL, in its order."""

from __future__ import annotations

import argparse
import json
import os
import uuid
from typing import Any

import psycopg

from tests.emulated_workers.base import Worker, named


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
