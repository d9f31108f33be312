"""`queuetop serve` behind its door: the printed secret, the Origin check, the caps.

A page the operator has open elsewhere in the same browser must not be able to read the
dashboard or type into it: these tests are that page (an aiohttp websocket client that
sends a foreign Origin, or none of the secret), and what the server answers.
"""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import aiohttp
import pytest
from helpers import wait_until
from system_tools import free_port
from test_cli_errors import assert_one_line_error, run_cli
from test_serve import ServeProcess, demo_db  # noqa: F401 - a fixture

from dashboard.cli.watch_commands import DEMO_WORKERS
from dashboard.ui.web.guarded import MAX_COLS, MAX_ROWS


async def _open(url: str, origin: str | None) -> tuple[int, bytes]:
    """Open a websocket; (101 and the first bytes the dashboard sends) or (HTTP status, b"")."""
    headers = {"Origin": origin} if origin else {}
    async with aiohttp.ClientSession() as http:
        try:
            async with http.ws_connect(url, headers=headers) as ws:
                message = await ws.receive(timeout=60)
                return 101, message.data if isinstance(message.data, bytes) else b""
        except aiohttp.WSServerHandshakeError as exc:
            return exc.status, b""


def open_ws(url: str, origin: str | None) -> tuple[int, bytes]:
    return asyncio.run(_open(url, origin))


def ws_url(serve: ServeProcess, secret: str | None = None, size: str = "") -> str:
    return f"ws://127.0.0.1:{serve.port}/ws/{secret or serve.secret}{size}"


def test_the_page_and_the_websocket_need_the_printed_secret(demo_db, tmp_path):  # noqa: F811
    serve = ServeProcess(demo_db, tmp_path / "home")
    try:
        own = f"http://127.0.0.1:{serve.port}"
        assert open_ws(ws_url(serve, "not-the-secret"), own)[0] == 403
        assert open_ws(f"ws://127.0.0.1:{serve.port}/ws", own)[0] == 403
        status, first = open_ws(ws_url(serve), own)
        assert status == 101 and first  # the dashboard's screen starts to arrive
        for path in ("", "guess"):
            with pytest.raises(Exception) as refused:
                import urllib.request

                urllib.request.urlopen(serve.base + path, timeout=10)
            assert getattr(refused.value, "code", None) == 403
    finally:
        serve.stop()


def test_a_websocket_from_a_foreign_origin_is_refused(demo_db, tmp_path):  # noqa: F811
    serve = ServeProcess(demo_db, tmp_path / "home")
    try:
        for origin in ("http://evil.example", f"http://127.0.0.1:{serve.port + 1}", "null"):
            assert open_ws(ws_url(serve), origin)[0] == 403, origin
        assert not serve.tabs()  # no dashboard process was started for them
        assert "foreign origin" in serve.log.read_text()
    finally:
        serve.stop()


def test_tabs_are_capped(demo_db, tmp_path):  # noqa: F811
    serve = ServeProcess(demo_db, tmp_path / "home", "--max-tabs", "1")
    own = f"http://127.0.0.1:{serve.port}"

    async def two_tabs() -> tuple[int, int]:
        async with aiohttp.ClientSession() as http:
            url = ws_url(serve, size="?width=4000&height=2000")
            async with http.ws_connect(url, headers={"Origin": own}) as first:
                await first.receive(timeout=60)
                second = await _open(ws_url(serve), own)
                return 101, second[0]

    try:
        first, second = asyncio.run(two_tabs())
        assert (first, second) == (101, 429)
    finally:
        serve.stop()


def test_the_first_tab_gets_a_capped_terminal(demo_db, tmp_path):  # noqa: F811
    serve = ServeProcess(demo_db, tmp_path / "home")
    own = f"http://127.0.0.1:{serve.port}"

    async def one_tab() -> dict[str, str]:
        async with aiohttp.ClientSession() as http:
            url = ws_url(serve, size="?width=4000&height=2000")
            async with http.ws_connect(url, headers={"Origin": own}) as ws:
                await ws.receive(timeout=60)
                pid = wait_until(lambda: (serve.tabs() or [None])[0], timeout=30)
                raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
                return dict(kv.decode().split("=", 1) for kv in raw if b"=" in kv)

    try:
        env = asyncio.run(one_tab())
        assert (env["COLUMNS"], env["ROWS"]) == (str(MAX_COLS), str(MAX_ROWS))
    finally:
        serve.stop()


def _workers(conn) -> int:
    return conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'queuetop-worker-%%'"
    ).fetchone()[0]


def test_serve_demo_shares_one_load_generator_that_the_browser_cannot_drive(dsn, connect, tmp_path):
    serve = ServeProcess(dsn, tmp_path / "home", "--demo")
    own = f"http://127.0.0.1:{serve.port}"
    watcher = connect(autocommit=True)

    async def tabs_typing() -> None:
        async with aiohttp.ClientSession() as http:
            sockets = [
                await http.ws_connect(ws_url(serve), headers={"Origin": own}) for _ in range(2)
            ]
            for ws in sockets:
                await ws.receive(timeout=60)
            wait_until(lambda: len(serve.tabs()) >= 2, timeout=60)
            for pid in serve.tabs():  # each tab only watches: `watch`, never `demo`
                words = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").split()
                assert words[words.index(b"dashboard") + 1] == b"watch", words
            for ws in sockets:  # add workers, crash one, stall one, pause the producer
                for key in "wwwww!zP":
                    await ws.send_json(["stdin", key])
            await asyncio.sleep(0)  # let the keys go out before the workers are counted
            seen = _workers(watcher)
            deadline = time.monotonic() + 8
            while time.monotonic() < deadline:  # the keys have had time to act, had they
                assert _workers(watcher) <= seen
                await asyncio.sleep(0.5)
            for ws in sockets:
                await ws.close()

    try:
        # one generator for both tabs: its workers, not one set per tab
        wait_until(lambda: _workers(watcher) == DEMO_WORKERS, timeout=60)
        asyncio.run(tabs_typing())
        assert _workers(watcher) == DEMO_WORKERS  # the keys typed in the tabs did nothing
    finally:
        serve.stop()


def test_remote_actions_need_their_own_flag(tmp_path):
    result = run_cli("serve", "--listen", "0.0.0.0:8123", "--allow-actions", env_home=str(tmp_path))
    assert_one_line_error(result, "--allow-remote-actions")


def test_a_busy_port_is_one_line(tmp_path):
    with socket.socket() as taken:
        port = free_port()
        taken.bind(("127.0.0.1", port))
        taken.listen()
        result = run_cli("serve", "--listen", f"127.0.0.1:{port}", env_home=str(tmp_path))
    assert_one_line_error(result, f"127.0.0.1:{port}", "another port")
