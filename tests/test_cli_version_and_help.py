"""`queuetop --version`, and `queuetop db --help` saying what each of its actions does."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from dashboard.cli import main


def test_version_prints_the_installed_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"queuetop {version('queuetop')}"


def test_db_help_describes_start_stop_status_and_url(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["db", "--help"])
    assert exit_info.value.code == 0
    lines = capsys.readouterr().out.splitlines()
    described = {
        line.split()[0]: line
        for line in lines
        if line.strip() and line.split()[0] in ("start", "stop", "status", "url")
    }
    assert set(described) == {"start", "stop", "status", "url"}, lines
    assert "pgdata" in described["start"] or "data" in described["start"]
    assert "exit" in described["status"]  # a script can test it
    assert "DSN" in described["url"]
