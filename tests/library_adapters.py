"""Shared steps of the adapter tests for libraries whose workers are emulated (emulated_workers).

A library's database: its published schema, queuetop's audit table, emulated worker
processes (SIGKILLed mid-job like a crashed worker), and queuetop run as its CLI.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import psycopg
import pytest

from dashboard import config, db, monitor
from dashboard.cli import main
from dashboard.setup import schema
from tests.emulated_workers import create_schema
from tests.library_support import spawn, stop_group

ROOT = Path(__file__).resolve().parent.parent  # `python -m tests.emulated_workers` runs from here


def library_db(dsn: str, lib: str) -> psycopg.Connection:
    """An autocommit session on a database holding the library's schema and the audit log."""
    conn = psycopg.connect(dsn, autocommit=True, application_name="test-setup")
    create_schema(conn, lib)
    schema.init_audit(conn)
    return conn


class Workers:
    """Emulated worker processes of one test, each in its own process group, logging to
    tmp_path; every one still running is stopped at the end of the test."""

    def __init__(self, dsn: str, tmp_path: Path):
        self.dsn, self.tmp_path = dsn, tmp_path
        self.procs: list[subprocess.Popen] = []

    def start(self, lib: str, name: str, *options: str) -> subprocess.Popen:
        proc = spawn(
            [sys.executable, "-m", "tests.emulated_workers", lib, "--dsn", self.dsn]
            + ["--name", name, *options],
            cwd=ROOT,
            log=self.tmp_path / f"{name}.log",
        )
        self.procs.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.procs:
            stop_group(proc)


@pytest.fixture
def workers(dsn: str, tmp_path: Path) -> Iterator[Workers]:
    group = Workers(dsn, tmp_path)
    yield group
    group.stop()


def queuetop(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, dict]:
    """`queuetop ARGV --json` in this process: its exit code and its JSON output."""
    code = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert out, f"queuetop {' '.join(argv)} printed nothing (exit {code}): {err}"
    return code, json.loads(out)


def snapshot(capsys: pytest.CaptureFixture, *argv: str) -> dict:
    """`queuetop snapshot ARGV --json`."""
    code, snap = queuetop(capsys, "snapshot", *argv)
    assert code == 0
    return snap


def preset_copy(tmp_path: Path, preset: str, timeout: str) -> str:
    """The preset as a user's own TOML file whose [queue.workers] timeout is `timeout`
    (a library configured to heartbeat often, and to call its processes dead sooner)."""
    text = resources.files("dashboard").joinpath("presets", f"{preset}.toml").read_text()
    path = tmp_path / f"{preset}.toml"
    path.write_text(text.replace('timeout = "5 minutes"', f'timeout = "{timeout}"'))
    return str(path)


def stale(snap: dict) -> list[tuple[str, str | None, bool | None]]:
    return [(str(s["id"]), s["worker"], s["worker_alive"]) for s in snap["stale_leases"]]


def monitor_locks(dsn: str, preset: str) -> set[tuple[str, str]]:
    """The locks one whole snapshot takes, held to its end: (lock type, mode) pairs."""
    with db.connect_monitor(dsn) as mon:
        spec = config.validate(mon, config.load_preset(preset))
        mon.autocommit = False
        monitor.collect(mon, spec)
        held = mon.execute(
            "SELECT locktype, mode FROM pg_locks WHERE pid = pg_backend_pid()"
        ).fetchall()
        mon.rollback()
    return set(held)


def assert_harmless(dsn: str, preset: str) -> None:
    """The monitor reads the library's tables with AccessShareLock only (and its own
    virtual transaction id), never a row lock or an advisory lock."""
    held = monitor_locks(dsn, preset)
    assert {mode for _, mode in held} <= {"AccessShareLock", "ExclusiveLock"}, held
    assert all(kind == "virtualxid" for kind, mode in held if mode == "ExclusiveLock"), held
