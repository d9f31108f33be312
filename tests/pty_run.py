"""A command on a pseudo-terminal, as a person's terminal runs it: its output collected,
keys written to it."""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import sys
import termios
import time


class PtyRun:
    """`python PROGRAM ARGV` (PROGRAM is `-m dashboard`, queuetop, unless given) on a
    pseudo-terminal of 120x40, its output collected."""

    def __init__(self, argv: list[str], home: str, *, program: list[str] | None = None):
        self.master, self.slave = os.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.tty_modes = termios.tcgetattr(self.slave)
        env = {
            k: v for k, v in os.environ.items() if k != "DATABASE_URL" and not k.startswith("PG")
        }
        env.update(QUEUETOP_HOME=home, TERM="xterm-256color")
        self.proc = subprocess.Popen(
            [sys.executable, *(["-m", "dashboard"] if program is None else program), *argv],
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

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)
        os.close(self.slave)
