"""`queuetop demo` on the embedded server: on quit it says in one line that the server keeps
running, and how to stop it (a newcomer otherwise leaves a PostgreSQL behind unknowingly)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pty_run import PtyRun

from dashboard import db

pytestmark = pytest.mark.ui  # tier: see tests/conftest.py


def test_demo_says_on_quit_that_the_embedded_server_still_runs(tmp_path):
    home = tmp_path / "home"
    run = PtyRun(["demo", "--no-load", "--interval", "0.5"], str(home))
    try:
        run.read_until(b"\x1b[?1049h", b"live", timeout=180)  # initdb on first use
        os.write(run.master, b"q")  # the pty is the terminal: keys go to its master
        code = run.finish()
    finally:
        run.close()
        pgdata = Path(home) / "pgdata"
        running = db.embedded_status(pgdata)
        db.stop_embedded(pgdata)
    text = run.output.decode(errors="replace")
    assert code == 0, text[-300:]
    assert running is not None  # the ground truth: its postmaster answers
    assert "the embedded PostgreSQL server is still running" in text
    assert "queuetop db stop" in text and "Traceback" not in text
