"""Headless Chromium (Debian's package) driven through the DevTools protocol, for serve tests.

Only loopback: the browser is told that every other host name does not exist, so a page
cannot reach outside the machine even if it tried.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import aiohttp

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
    "--window-size=1400,900",
)
# Keeps what the page's websockets receive (the dashboard's screen, as terminal output),
# installed before any script of the page runs.
WEBSOCKET_TAP = """
(() => {
  const Native = window.WebSocket;
  window.__received = [];
  const decoder = new TextDecoder();
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        window.__received.push(typeof event.data === "string" ? event.data
                               : decoder.decode(event.data, {stream: true}));
      });
    }
  };
})();
"""
ANSI = re.compile(
    r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[PX^_][^\x1b]*"
    r"\x1b\\|.)"
)


def chromium_binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Chromium:
    """One headless browser with a fresh profile; close() ends it."""

    def __init__(self, profile: Path):
        binary = chromium_binary()
        assert binary, "chromium not found"
        self.profile = profile
        self.proc = subprocess.Popen(
            [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def devtools_port(self, timeout: float = 30.0) -> int:
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"chromium exited: {self.proc.stderr.read().decode()[-2000:]}")
            if port_file.exists() and port_file.read_text().strip():
                return int(port_file.read_text().split()[0])
            time.sleep(0.1)
        raise AssertionError("chromium wrote no DevToolsActivePort")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


class Page:
    """A DevTools session on the browser's first page."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse):
        self.ws = ws
        self._ids = itertools.count(1)

    async def send(self, method: str, **params) -> dict:
        call_id = next(self._ids)
        await self.ws.send_str(json.dumps({"id": call_id, "method": method, "params": params}))
        async for message in self.ws:
            data = json.loads(message.data)
            if data.get("id") == call_id:
                if "error" in data:
                    raise AssertionError(f"{method}: {data['error']}")
                return data["result"]
        raise AssertionError(f"devtools connection closed during {method}")

    async def evaluate(self, expression: str):
        """The expression's value; a promise is awaited."""
        result = await self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        return result["result"].get("value")

    async def received_text(self) -> str:
        """What the page's websockets received, escape sequences removed."""
        raw = await self.evaluate("(window.__received || []).join('')") or ""
        return ANSI.sub("", raw)


# resolves after the browser has rendered two frames: what arrived before is drawn
DRAWN = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"
STATE = (
    "({title: document.title,"
    " shown: document.body.classList.contains('-first-byte'),"
    " closed: document.body.classList.contains('-closed'),"
    " canvases: document.querySelectorAll('.xterm canvas').length,"
    " rows: (document.querySelector('.xterm-rows') || {}).textContent || ''})"
)


async def load_and_read(
    port: int, url: str, wanted: list[str], screenshot: Path, timeout: float = 60.0
) -> tuple[str, dict]:
    """Open `url`, wait until the dashboard's screen holds every `wanted` text, save a
    screenshot. Returns the text received and the page's state (title, terminal shown)."""
    async with aiohttp.ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{port}/json/list") as response:
            targets = await response.json()
        page_url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        async with http.ws_connect(page_url, max_msg_size=0) as ws:
            page = Page(ws)
            await page.send("Page.enable")
            await page.send("Page.addScriptToEvaluateOnNewDocument", source=WEBSOCKET_TAP)
            await page.send("Page.navigate", url=url)
            deadline = time.monotonic() + timeout
            text = ""
            while time.monotonic() < deadline:
                text = await page.received_text()
                if all(w in text for w in wanted):
                    break
                await asyncio.sleep(0.5)
            # the terminal draws what it received on its next animation frames: wait for two
            # of them, and for the page to show the terminal, instead of a fixed time
            state: dict = {}
            while time.monotonic() < deadline:
                await page.evaluate(DRAWN)
                state = await page.evaluate(STATE)
                if state["shown"] and state["canvases"] >= 1:
                    break
                await asyncio.sleep(0.2)
            shot = await page.send("Page.captureScreenshot", format="png")
            screenshot.write_bytes(base64.b64decode(shot["data"]))
            return text, state
