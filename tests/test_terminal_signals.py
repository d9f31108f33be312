"""`kill -TERM` / `kill -HUP` to the dashboard restore the terminal as `q` does: the
alternate screen left, mouse reporting and every other mode it set turned off, the cursor
shown, the tty's own modes (echo, canonical input) back; the demo's workers stopped, no
"leaked semaphore objects"; exit code 128 + the signal."""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time

import psycopg
import pytest
from demo_queue import setup_demo
from helpers import wait_until

DEC_MODE = re.compile(rb"\x1b\[\?([0-9;]+)([hl])")
# a terminal's defaults: the cursor shown (25), lines wrapped (7); every other mode off
# (the alternate screen 1049, mouse reporting 1000/1003/1006, focus events 1004, ...)
DEFAULT_ON = {"25", "7"}


class PtyRun:
    """queuetop on a pseudo-terminal of 120x40, its output collected."""

    def __init__(self, argv: list[str], home: str):
        self.master, self.slave = os.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.tty_modes = termios.tcgetattr(self.slave)
        env = {
            k: v for k, v in os.environ.items() if k != "DATABASE_URL" and not k.startswith("PG")
        }
        env.update(QUEUETOP_HOME=home, TERM="xterm-256color")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dashboard", *argv],
            env=env,
            stdin=self.slave,
            stdout=self.slave,
            stderr=self.slave,
        )
        self.output = b""

    def read(self, timeout: float) -> None:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if ready:
            try:
                self.output += os.read(self.master, 65536)
            except OSError:  # EIO: nobody has the terminal open any more
                pass

    def read_until(self, *needles: bytes, timeout: float = 60.0) -> None:
        """A guard against a hang, not a timing assertion."""
        deadline = time.monotonic() + timeout
        while not all(n in self.output for n in needles):
            assert self.proc.poll() is None, repr(self.output[-300:])
            assert time.monotonic() < deadline, f"never saw {needles}: {self.output[-300:]!r}"
            self.read(0.2)

    def finish(self, timeout: float = 60.0) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None:
            assert time.monotonic() < deadline, "the dashboard did not exit"
            self.read(0.2)
        self.read(0.2)
        return self.proc.returncode

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)
        os.close(self.slave)


def final_modes(output: bytes) -> dict[str, str]:
    modes: dict[str, str] = {}
    for numbers, state in DEC_MODE.findall(output):
        for number in numbers.decode().split(";"):
            modes[number] = state.decode()
    return modes


@pytest.mark.parametrize(
    ("command", "sig"),
    [("watch", signal.SIGTERM), ("watch", signal.SIGHUP), ("demo", signal.SIGTERM)],
    ids=["watch-TERM", "watch-HUP", "demo-TERM"],
)
def test_signal_restores_the_terminal(command, sig, dsn, tmp_path):
    setup_demo(dsn, jobs=5)
    argv = [command, "--dsn", dsn, "--interval", "0.5"]
    if command == "demo":
        argv += ["--workers", "1"]
    run = PtyRun(argv, str(tmp_path))
    try:
        run.read_until(b"\x1b[?1049h", b"live")  # on the alternate screen, polling
        if command == "demo":
            wait_until(lambda: worker_sessions(dsn) == 1, timeout=60)
        os.kill(run.proc.pid, sig)
        code = run.finish()
        modes_after = termios.tcgetattr(run.slave)
    finally:
        run.close()
    text = run.output.decode(errors="replace")
    assert code == 128 + sig, repr(text[-300:])
    modes = final_modes(run.output)
    assert {"1049", "1000", "25"} <= set(modes)  # it did set them: now they are back
    assert {m: s for m, s in modes.items() if s != ("h" if m in DEFAULT_ON else "l")} == {}
    assert modes_after == run.tty_modes  # echo and canonical input are back
    assert "Traceback" not in text and "leaked semaphore" not in text
    if command == "demo":
        wait_until(lambda: worker_sessions(dsn) == 0)


def worker_sessions(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        return conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'queuetop-worker-%'"
        ).fetchone()[0]
