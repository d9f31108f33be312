"""Running real queue libraries in tests: their interpreters, packages and worker processes.

Libraries' own workers run as subprocesses in a process group of their own, so a test
can SIGKILL a worker mid-job (and every child it forked) as a crash would. Packages a
library needs beyond the test extra (Node packages, a Python 3.12 venv for Oban) are
installed once into `.cache/` at the repository root (git-ignored) and reused.
"""

from __future__ import annotations

import fcntl
import glob
import hashlib
import os
import shutil
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache"


def find_python(version: str) -> str | None:
    """An interpreter of `version` (e.g. '3.12'): pyenv's, else one on PATH."""
    root = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    found = sorted(glob.glob(f"{root}/versions/{version}.*/bin/python{version}"))
    return found[-1] if found else shutil.which(f"python{version}")


def _stamp(folder: Path, what: Sequence[str]) -> tuple[Path, str]:
    return folder / ".installed", hashlib.sha256("\n".join(what).encode()).hexdigest()


@contextmanager
def _building(folder: Path) -> Iterator[None]:
    """One process at a time builds `folder` (the test processes of `-n 3` may all need the
    same venv at once on a fresh clone: two `python -m venv` into one folder break both)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def python_venv(name: str, python: str, packages: Sequence[str]) -> Path:
    """A venv under .cache/venvs/NAME with `packages` installed (once); its python."""
    folder = CACHE / "venvs" / name
    stamp, digest = _stamp(folder, [python, *packages])
    exe = folder / "bin" / "python"
    with _building(folder):
        if not (stamp.exists() and stamp.read_text() == digest and exe.exists()):
            shutil.rmtree(folder, ignore_errors=True)
            subprocess.run([python, "-m", "venv", str(folder)], check=True)
            subprocess.run([str(exe), "-m", "pip", "install", "-q", *packages], check=True)
            stamp.write_text(digest)
    return exe


def node_packages(name: str, packages: Sequence[str]) -> Path:
    """A folder under .cache/node/NAME with `packages` installed by npm (once)."""
    if not shutil.which("npm") or not shutil.which("node"):
        pytest.skip("Node.js and npm are not installed")
    folder = CACHE / "node" / name
    stamp, digest = _stamp(folder, list(packages))
    with _building(folder):
        if not (stamp.exists() and stamp.read_text() == digest):
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            (folder / "package.json").write_text('{"private": true, "type": "module"}\n')
            subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", *packages],
                cwd=folder,
                check=True,
            )
            stamp.write_text(digest)
    return folder


def spawn(
    cmd: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    log: Path | None = None,
) -> subprocess.Popen:
    """A worker process in a process group (session) of its own; output to `log`."""
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115 (closed with the process)
    return subprocess.Popen(
        list(cmd),
        env={**os.environ, **(env or {})},
        cwd=cwd,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def kill_group(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    """Signal the worker and every process it forked, as a crash or an OOM kill would."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass
    if sig == signal.SIGKILL:
        proc.wait(timeout=10)


def stop_group(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """Ask the worker's group to stop (SIGTERM), then kill what is left."""
    if proc.poll() is None:
        kill_group(proc, signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
    kill_group(proc, signal.SIGKILL)


def this_python() -> str:
    return sys.executable


def rows(dsn: str, query: str, *params) -> list[tuple]:
    """A plain read on a fresh autocommit session (the test's view of the library's tables)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        return conn.execute(query, params).fetchall()


def side_effects(dsn: str, job_id: int) -> Counter:
    """What a test app's task did for one job (its side_effects rows, by event), to tell a
    job run exactly once from one run twice."""
    return Counter(
        event for (event,) in rows(dsn, "SELECT event FROM side_effects WHERE job_id = %s", job_id)
    )
