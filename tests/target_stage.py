"""Two databases on the test server with different queues, a targets file naming them, and
a TCP listener that counts the connections made to it: shared by test_targets.py,
test_export_targets.py and test_export_scrape_timeout.py."""

from __future__ import annotations

import json
import os
import socket
import threading
import uuid
from pathlib import Path

import psycopg
import pytest
from demo_queue import setup_demo
from psycopg import conninfo, sql

# Database A: the demo queue (ids 1-6). Database B: a table of its own (ids from 1001).
A_COUNTS = {"ready": 4, "running": 2}
B_COUNTS = {"ready": 5, "running": 2, "done": 4}
B_TABLE = "public.work_items"
B_SPEC = """\
[queue]
table = "public.work_items"
id = "id"
status = "status"
created_at = "created_at"
[queue.states]
ready = ["ready"]
running = ["running"]
done = ["done"]
"""


@pytest.fixture
def other_dsn(server_dsn: str):
    """A second fresh database on the same server, dropped afterwards."""
    name = f"qt_test_{os.getpid()}_other_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield conninfo.make_conninfo(server_dsn, dbname=name)
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def stage_a(dsn: str) -> None:
    """The demo queue: 4 ready, 2 running (jobs 1 and 2, both past their lease)."""
    setup_demo(dsn, jobs=6)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "UPDATE queuetop_demo.jobs SET status = 'running', worker = 'w', started_at = now(), "
            "leased_until = now() - interval '1 minute' WHERE id IN (1, 2)"
        )


def stage_b(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE public.work_items (id bigint PRIMARY KEY, status text NOT NULL, "
            "locked_at timestamptz, locked_by text, attempts int NOT NULL DEFAULT 0, "
            "created_at timestamptz NOT NULL DEFAULT now())"
        )
        conn.execute(
            "INSERT INTO public.work_items (id, status, locked_at, locked_by) SELECT 1000 + g, "
            "CASE WHEN g <= 5 THEN 'ready' WHEN g <= 7 THEN 'running' ELSE 'done' END, "
            "CASE WHEN g > 5 THEN now() END, CASE WHEN g > 5 THEN 'worker-' || g END "
            "FROM generate_series(1, 11) g"
        )


def counts_in(dsn: str, table: str, column: str = "status") -> dict[str, int]:
    """Ground truth: the rows per state value, read directly."""
    query = sql.SQL("SELECT {}, count(*) FROM {} GROUP BY 1").format(
        sql.Identifier(column), sql.Identifier(*table.split("."))
    )
    with psycopg.connect(dsn) as conn:
        return {status: n for status, n in conn.execute(query).fetchall()}


@pytest.fixture
def fleet(dsn, other_dsn, tmp_path):
    """Targets alpha (A, demo preset), beta (B, a queue TOML next to the file), bare (B,
    no queue: discovered)."""
    stage_a(dsn)
    stage_b(other_dsn)
    (tmp_path / "beta.toml").write_text(B_SPEC)
    path = tmp_path / "targets.toml"
    path.write_text(
        f'[targets.alpha]\ndsn = {json.dumps(dsn)}\npreset = "demo"\n'
        f'[targets.beta]\ndsn = {json.dumps(other_dsn)}\nqueue = "beta.toml"\n'
        f"[targets.bare]\ndsn = {json.dumps(other_dsn)}\n"
    )
    path.chmod(0o644)  # no password in it: readable by others is fine
    return str(path), dsn, other_dsn


class Listener:
    """A TCP port that counts the connections made to it. It closes each at once, or with
    `hold=True` keeps them open without a word until release() (a server that hangs)."""

    def __init__(self, hold: bool = False) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.hold = hold
        self.held: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            if self.hold:
                self.held.append(conn)
            else:
                conn.close()

    def dsn(self, **extra: str) -> str:
        return conninfo.make_conninfo(
            host="127.0.0.1", port=str(self.port), dbname="x", user="u", **extra
        )

    def release(self) -> None:
        self.hold = False
        for conn in self.held:
            conn.close()

    def close(self) -> None:
        self.release()
        self.sock.close()


def write_targets(path: Path, body: str, mode: int) -> str:
    path.write_text(body)
    path.chmod(mode)
    return str(path)
