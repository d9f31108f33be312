"""What every emulated worker shares: the schemas, the named statements, the test tables
and the Worker base class."""

from __future__ import annotations

import argparse
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import dict_row

SCHEMAS = Path(__file__).resolve().parent.parent / "library_schemas"
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


def wait_delay(args: dict[str, Any], failures: int) -> float | None:
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
