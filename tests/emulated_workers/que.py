"""Que's locker and worker (Ruby): its own SQL, in its order."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

import psycopg
from psycopg.rows import dict_row

from tests.emulated_workers.base import Worker, named, wait_delay


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
                        "delay": wait_delay(args, job["error_count"]),
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
