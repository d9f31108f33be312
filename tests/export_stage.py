"""A demo queue with something in every metric, and `queuetop export` run as a process."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

from demo_queue import setup_demo
from helpers import is_waiting_on_lock, wait_until

# Distinct per role, so that a value read under the wrong label cannot pass.
STAGED_COUNTS = {"ready": 6, "running": 3, "done": 4, "failed": 2, "dead": 1}
STAGE_SQL = """
INSERT INTO queuetop_demo.jobs (status, payload, created_at, worker, started_at, leased_until)
SELECT 'ready', 'r' || g, now() - make_interval(mins => g), NULL, NULL, NULL
  FROM generate_series(1, 6) AS g
UNION ALL SELECT 'running', 'live', now(), 'worker-1', now(), now() + interval '10 minutes'
UNION ALL SELECT 'running', 'lost', now() - interval '9 minutes', 'worker-gone',
                 now() - interval '8 minutes', now() - interval '2 minutes'
UNION ALL SELECT 'running', 'lost', now() - interval '9 minutes', 'worker-gone',
                 now() - interval '8 minutes', now() - interval '5 minutes'
UNION ALL SELECT s, 'finished', now() - interval '1 hour', NULL, NULL, NULL
  FROM unnest(array['done', 'done', 'done', 'done', 'failed', 'failed', 'dead']) AS s
"""


class StagedQueue:
    """The demo queue with STAGED_COUNTS, one claim in flight (a row lock held by a session
    idle in its transaction), one session waiting on that row, and another session idle in
    a transaction (two idle, one waiting: a value under the wrong name cannot pass)."""

    def __init__(self, dsn: str, connect, background):
        self.spec = setup_demo(dsn)
        stager = connect(autocommit=True, application_name="stager")
        stager.execute(STAGE_SQL)
        self.holder = connect(application_name="claim-in-flight")
        self.locked_id = self.holder.execute(
            "SELECT id FROM queuetop_demo.jobs WHERE status = 'ready' ORDER BY id LIMIT 1 "
            "FOR UPDATE"
        ).fetchone()[0]
        self.waiter = connect(autocommit=True, application_name="waiter")
        waiter_pid = self.waiter.info.backend_pid
        self._wait = background(
            lambda: self.waiter.execute(
                "UPDATE queuetop_demo.jobs SET priority = 1 WHERE id = %s", (self.locked_id,)
            )
        )
        wait_until(lambda: is_waiting_on_lock(stager, waiter_pid))
        self.idle = connect(application_name="forgotten-transaction")
        self.idle.execute("SELECT 1")  # and then nothing: idle in transaction
        self.stager = stager

    def release(self) -> None:
        self.holder.rollback()
        self.idle.rollback()
        self._wait.join()


def queuetop_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL" and not k.startswith("PG")}
    env["QUEUETOP_HOME"] = str(home)
    return env


class ExportRun:
    """`queuetop export ... --listen 127.0.0.1:0` in its own process, `where` naming what it
    exports (`--dsn DSN`, `--targets FILE`); its port read from the line announcing
    `served` (a regular expression); stop() ends it."""

    def __init__(self, where: list[str], served: str, home: Path, *extra: str, interval: float):
        self.out = home / "export.out"
        self.err = home / "export.err"
        self.served = served
        home.mkdir(parents=True, exist_ok=True)
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "dashboard",
                    "export",
                    *where,
                    "--listen",
                    "127.0.0.1:0",
                    "--interval",
                    f"{interval:g}",
                    *extra,
                ],
                stdout=out,
                stderr=err,
                env=queuetop_env(home),
            )
        self.port = int(wait_until(self._bound_port, timeout=60))

    def _bound_port(self) -> str | None:
        if self.proc.poll() is not None:
            raise AssertionError(f"export exited {self.proc.returncode}: {self.err.read_text()}")
        match = re.search(rf"http://127\.0\.0\.1:(\d+){self.served}", self.out.read_text())
        return match.group(1) if match else None

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        return self.proc.wait(30)


class ExportProcess(ExportRun):
    """`queuetop export --dsn DSN --listen 127.0.0.1:0` in its own process."""

    def __init__(self, dsn: str, home: Path, *extra: str, interval: float = 0.5):
        super().__init__(["--dsn", dsn], "/metrics", home, *extra, interval=interval)

    def scrape(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=10) as r:
            return r.read().decode()
