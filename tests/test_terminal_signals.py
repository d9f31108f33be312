"""`kill -TERM` / `kill -HUP` to the dashboard restore the terminal as `q` does: the
alternate screen left, mouse reporting and every other mode it set turned off, the cursor
shown, the tty's own modes (echo, canonical input) back; the demo's workers stopped, no
"leaked semaphore objects"; exit code 128 + the signal."""

from __future__ import annotations

import os
import re
import signal
import termios

import psycopg
import pytest
from demo_queue import setup_demo
from helpers import wait_until
from pty_run import PtyRun

DEC_MODE = re.compile(rb"\x1b\[\?([0-9;]+)([hl])")
# a terminal's defaults: the cursor shown (25), lines wrapped (7); every other mode off
# (the alternate screen 1049, mouse reporting 1000/1003/1006, focus events 1004, ...)
DEFAULT_ON = {"25", "7"}


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
