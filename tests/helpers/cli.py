"""The queuetop command run in-process, as `main(argv)` runs it for a user."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from dashboard.cli import main


class Ran(NamedTuple):
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        """stdout then stderr, as a terminal shows them."""
        return self.out + self.err


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> Ran:
    """Run `queuetop ARGV...`: its exit code (argparse's SystemExit included) and what it
    printed. A traceback is never what a user should see: it fails the test here."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return Ran(code, out, err)


def run_out(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """(exit code, stdout): what a script reading the command's output gets."""
    ran = run_main(capsys, *argv)
    return ran.code, ran.out


def run_text(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """(exit code, stdout then stderr): what a person at the terminal reads."""
    ran = run_main(capsys, *argv)
    return ran.code, ran.text
