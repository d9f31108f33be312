"""River's worker (Go): its own SQL, in its order."""

from __future__ import annotations

import time
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from tests.emulated_workers.base import Worker, named, wait_delay


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
            delay = wait_delay(args, job["attempt"] - 1)
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
