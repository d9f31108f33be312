"""`queuetop serve`: the dashboard in a browser (textual-serve), read-only by default.

A headless Chromium (Debian's package) loads the page; its screenshot is kept in the
test's tmp dir (pytest prints the path with -s; the last runs are under pytest's basetemp).
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import urllib.request
from argparse import Namespace
from pathlib import Path

import pytest
from browser import Chromium, load_and_read
from demo_queue import setup_demo
from export_stage import queuetop_env
from helpers import wait_until
from system_tools import free_port, require_binary
from test_cli_errors import assert_one_line_error, run_cli

from dashboard.cli.serve_command import tab_options


class ServeProcess:
    """`queuetop serve` on a free loopback port; stop() ends it and checks its tabs ended."""

    def __init__(self, dsn: str, home: Path, *extra: str):
        home.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}/"
        self.log = home / "serve.log"
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "dashboard",
                    "serve",
                    "--dsn",
                    dsn,
                    "--listen",
                    f"127.0.0.1:{self.port}",
                    *extra,
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=queuetop_env(home),
            )
        # the page's address, with this start's secret, is the one serve prints
        self.url = wait_until(self._printed_url, timeout=60, interval=0.2)
        self.secret = self.url.rsplit("/", 1)[1]
        self.page = wait_until(self._page, timeout=60, interval=0.2)

    def _printed_url(self) -> str | None:
        if self.proc.poll() is not None:
            raise AssertionError(f"serve exited {self.proc.returncode}: {self.log.read_text()}")
        found = re.search(r" on (http://\S+)", self.log.read_text())
        return found.group(1) if found else None

    def _page(self) -> str | None:
        if self.proc.poll() is not None:
            raise AssertionError(f"serve exited {self.proc.returncode}: {self.log.read_text()}")
        try:
            with urllib.request.urlopen(self.url, timeout=5) as response:
                return response.read().decode() if response.status == 200 else None
        except OSError:
            return None

    def tabs(self) -> list[int]:
        """Pids of the dashboard processes serve runs (one per browser tab)."""
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        return [int(p) for p in children.read_text().split()] if children.exists() else []

    def stop(self) -> None:
        tabs = self.tabs()
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(30)
        # no dashboard outlives the server (each holds a database connection)
        wait_until(lambda: not any(_alive(pid) for pid in tabs), timeout=30)


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def demo_db(dsn: str) -> str:
    setup_demo(dsn, jobs=3)
    return dsn


def test_serve_answers_http_with_a_page_that_loads_nothing_from_outside(demo_db, tmp_path):
    serve = ServeProcess(demo_db, tmp_path / "home")
    try:
        page = serve.page
        assert "<title>queuetop: queuetop_demo.jobs</title>" in page
        ws_url = f"ws://127.0.0.1:{serve.port}/ws/{serve.secret}"
        assert f'data-session-websocket-url="{ws_url}"' in page
        outside = [
            u
            for u in re.findall(r"https?://[^\"' )]+", page)
            if not u.startswith(("http://127.0.0.1", "http://www.w3.org/2000/svg"))
        ]
        assert outside == []
        with urllib.request.urlopen(serve.base + "static/js/textual.js", timeout=10) as r:
            assert r.status == 200
        assert "read-only" in serve.log.read_text()
    finally:
        serve.stop()


def test_headless_chromium_shows_the_dashboard(demo_db, tmp_path):
    require_binary("chromium", "chromium")
    serve = ServeProcess(demo_db, tmp_path / "home")
    browser = Chromium(tmp_path / "profile")  # a fresh --user-data-dir
    screenshot = tmp_path / "serve.png"
    try:
        # the header: the queue, read-only, and "live" once the tab's dashboard has polled
        wanted = ["queuetop_demo.jobs", "read-only", "● live"]
        text, state = asyncio.run(
            load_and_read(browser.devtools_port(), serve.url, wanted, screenshot)
        )
        assert all(w in text for w in wanted), text[-3000:]
        assert "Queue state: rows per role" in text
        assert state["title"] == "queuetop: queuetop_demo.jobs"
        assert state["shown"] and not state["closed"] and state["canvases"] >= 1, state
        assert screenshot.stat().st_size > 10_000  # a picture of the screen, not a blank one
        assert len(serve.tabs()) == 1
        print(f"screenshot: {screenshot}")
    finally:
        browser.close()
        serve.stop()


def _args(**given) -> Namespace:
    base = dict(
        interval=2.0,
        demo=False,
        allow_actions=False,
        audit_file=None,
        queue=None,
        preset=None,
        table=None,
        id_column=None,
        status_column=None,
        stale_after=None,
    )
    return Namespace(**{**base, **given})


def test_each_tab_is_read_only_unless_actions_are_allowed(tmp_path):
    assert tab_options(_args()) == ["--interval", "2", "--read-only"]
    spec = tmp_path / "q.toml"
    options = tab_options(
        _args(
            allow_actions=True,
            audit_file="audit.jsonl",
            queue=str(spec),
            stale_after="5m",
            interval=0.5,
        )
    )
    assert "--read-only" not in options
    assert options == [
        "--interval",
        "0.5",
        "--queue",
        str(spec.resolve()),
        "--stale-after",
        "5m",
        "--audit-file",
        str(Path("audit.jsonl").resolve()),
    ]
    demo = tab_options(_args(demo=True, table="ignored"))
    assert demo == ["--interval", "2", "--preset", "demo", "--read-only"]


def test_the_dsn_reaches_each_tab_through_the_environment_not_the_command_line(demo_db, tmp_path):
    serve = ServeProcess(demo_db, tmp_path / "home")
    try:
        command = serve.log.read_text()
        assert "--dsn" not in command and "dbname" not in command
    finally:
        serve.stop()


def test_bad_spec_fails_in_one_line_before_serving(dsn, tmp_path):
    result = run_cli(
        "serve", "--dsn", dsn, "--listen", f"127.0.0.1:{free_port()}", env_home=str(tmp_path)
    )
    assert_one_line_error(result, "queuetop_demo.jobs not found")


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--listen", "127.0.0.1:0"], "fixed port"),
        (["--audit-file", "a.jsonl"], "--allow-actions"),
    ],
)
def test_serve_flag_errors(argv, fragment, tmp_path):
    result = run_cli("serve", *argv, env_home=str(tmp_path))
    assert_one_line_error(result, fragment)
