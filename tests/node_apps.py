"""Node.js queue libraries (pg-boss, graphile-worker) driven from the adapter tests.

Each library's npm package is installed once into .cache/node/NAME (library_support's
node_packages); the test's own script (tests/node/*.mjs) is copied next to it so that its
`import` finds the package, and runs with the machine's `node`. Commands print JSON;
workers run as subprocesses in their own process group, so a test can SIGKILL one mid-job.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from urllib.parse import quote

from library_support import kill_group, node_packages, spawn
from psycopg import conninfo

NODE_SCRIPTS = Path(__file__).resolve().parent / "node"


def node_dsn(dsn: str) -> str:
    """A postgresql:// URL node-postgres reads (the fixtures give libpq key=value strings)."""
    parts = conninfo.conninfo_to_dict(dsn)
    user = quote(str(parts.get("user", "postgres")), safe="")
    password = parts.get("password")
    auth = f"{user}:{quote(str(password), safe='')}" if password else user
    host = str(parts.get("host", "localhost"))
    query = {"port": parts.get("port")}
    if host.startswith("/"):  # a socket directory goes in the query string
        netloc, query["host"] = f"{auth}@", host
    else:
        netloc = f"{auth}@{host}"
    args = "&".join(f"{k}={quote(str(v), safe='/')}" for k, v in query.items() if v)
    return f"postgresql://{netloc}/{quote(str(parts['dbname']), safe='')}" + (
        f"?{args}" if args else ""
    )


class NodeApp:
    """One test script next to its npm packages: commands and worker processes."""

    def __init__(self, name: str, packages: list[str], script: str, dsn: str, logs: Path):
        self.folder = node_packages(name, packages)
        self.script = self.folder / script
        shutil.copyfile(NODE_SCRIPTS / script, self.script)
        self.env = {"DSN": node_dsn(dsn)}
        self.logs = logs
        self.started: list[subprocess.Popen] = []

    def run(self, *args: str, timeout: float = 60) -> object:
        """A command of the script; its last output line, parsed as JSON."""
        done = subprocess.run(
            ["node", str(self.script), *args],
            cwd=self.folder,
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if done.returncode != 0:
            raise AssertionError(
                f"node {self.script.name} {' '.join(args)} failed "
                f"({done.returncode}): {done.stderr.strip()[-2000:]}"
            )
        return json.loads(done.stdout.strip().splitlines()[-1])

    def start(
        self, log_name: str, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.Popen:
        proc = spawn(
            ["node", str(self.script), *args],
            env={**self.env, **(env or {})},
            cwd=self.folder,
            log=self.logs / f"{log_name}.log",
        )
        self.started.append(proc)
        return proc

    def stop(self) -> None:
        """SIGKILL what is left: the test is over, and a graceful graphile-worker pool would
        wait for its hour-long job first."""
        for proc in self.started:
            kill_group(proc)
