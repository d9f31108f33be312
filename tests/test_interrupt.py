"""Ctrl-C while queuetop is still importing (its first ~0.2 s): nothing printed, exit 130.

The interrupt is delivered at an exact point, not after a guessed delay: an import hook
sends SIGINT to the process as the named module starts to load, the way a key press
during the heavy imports would.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# the console script `queuetop` does exactly the last two lines
SCRIPT = """
import os, signal, sys

class InterruptOn:
    def find_spec(self, name, path=None, target=None):
        if name == MODULE:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

MODULE = sys.argv.pop(1)
sys.meta_path.insert(0, InterruptOn())
from dashboard.cli import main
sys.exit(main())
"""


NOWHERE = "postgresql://nobody@127.0.0.1:1/none"


def interrupted(module: str, *argv: str, home: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "QUEUETOP_HOME": home}
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, module, *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


@pytest.mark.parametrize("module", ["psycopg", "dashboard.cli.dispatch", "dashboard.config"])
def test_ctrl_c_while_importing(module, tmp_path):
    result = interrupted(module, "snapshot", "--dsn", NOWHERE, home=str(tmp_path))
    assert (result.returncode, result.stdout, result.stderr) == (130, "", ""), result


def test_ctrl_c_while_the_dashboard_imports_textual(dsn, tmp_path):
    from demo_queue import setup_demo

    setup_demo(dsn)
    result = interrupted("textual.app", "watch", "--dsn", dsn, home=str(tmp_path))
    assert (result.returncode, result.stdout, result.stderr) == (130, "", ""), result
