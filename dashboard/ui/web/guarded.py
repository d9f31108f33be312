"""textual-serve behind a door: a per-start secret, an Origin check, and caps.

textual-serve alone answers any client: a web page the operator has open in the same
browser could open `ws://127.0.0.1:8000/ws`, read the screen (other sessions' queries, job
payloads) and type keys into it. Here
- the page and its websocket live under a secret path segment made at each start
  (`/<secret>` and `/ws/<secret>`), which only the URL `queuetop serve` prints carries;
- a websocket whose `Origin` is not this server's own is refused (a browser always sends
  it; a page elsewhere cannot forge it);
- at most `max_tabs` dashboards run at once, each at most MAX_COLS x MAX_ROWS cells.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
from urllib.parse import urlsplit

import aiohttp_jinja2
import jinja2
from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import to_int

from dashboard.ui.forks.serve import RoutedServer

log = logging.getLogger("queuetop-serve")

MAX_COLS = 400
MAX_ROWS = 150
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def new_secret() -> str:
    return secrets.token_urlsafe(24)


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def allowed_origins(public_url: str, host: str, port: int) -> frozenset[str]:
    """The page's own origin, and on a loopback listen every loopback name for it."""
    origins = {origin_of(public_url)}
    if host in LOOPBACK:
        origins |= {f"http://127.0.0.1:{port}", f"http://localhost:{port}", f"http://[::1]:{port}"}
    return frozenset(origins)


def clamp_size(width: int, height: int) -> tuple[int, int]:
    return max(1, min(width, MAX_COLS)), max(1, min(height, MAX_ROWS))


class GuardedServer(RoutedServer):
    """A textual-serve Server that only the holder of the printed URL can use."""

    def __init__(self, *args, secret: str, max_tabs: int, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.secret = secret
        self.max_tabs = max_tabs
        self.tabs = 0
        self.origins = allowed_origins(self.public_url, self.host, self.port)

    @property
    def page_url(self) -> str:
        return f"{self.public_url.rstrip('/')}/{self.secret}"

    async def on_startup(self, app: web.Application) -> None:
        """textual-serve prints a banner with the URL; the CLI prints ours instead."""

    async def make_app(self) -> web.Application:
        app = web.Application(middlewares=[self._headers])
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
        app.add_routes(
            [
                web.get("/", self.handle_no_secret),
                web.get("/{secret}", self.handle_page, name="index"),
                web.get("/ws/{secret}", self.handle_guarded_websocket, name="websocket"),
                web.static("/static", self.statics_path, name="static"),
            ]
        )
        return app

    @web.middleware
    async def _headers(self, request: web.Request, handler) -> web.StreamResponse:
        response = await handler(request)
        # the secret is in the path: never sent on as a referrer, never cached or framed
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Content-Security-Policy"] = "frame-ancestors 'none'"
        return response

    def _secret_ok(self, request: web.Request) -> bool:
        given = request.match_info.get("secret", "")
        return hmac.compare_digest(given.encode(), self.secret.encode())

    async def handle_no_secret(self, request: web.Request) -> web.Response:
        raise web.HTTPForbidden(text="open the address `queuetop serve` printed (it has a key)")

    async def handle_page(self, request: web.Request) -> web.StreamResponse:
        if not self._secret_ok(request):
            raise web.HTTPForbidden(text="wrong key: open the address `queuetop serve` printed")
        context = await self._page_context(request)
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    async def _page_context(self, request: web.Request) -> dict:
        scheme = "wss" if self.public_url.startswith("https") else "ws"
        base = self.public_url.rstrip("/").split(":", 1)[1]
        font_size = to_int(request.query.get("fontsize", "16"), 16)
        return {
            "font_size": max(6, min(font_size, 64)),
            "app_websocket_url": f"{scheme}:{base}/ws/{self.secret}",
            "config": {"static": {"url": f"{self.public_url.rstrip('/')}/static/"}},
            "application": {"name": self.title},
        }

    def refusal(self, request: web.Request) -> str | None:
        """Why this websocket may not open, or None."""
        if not self._secret_ok(request):
            return "wrong key"
        origin = request.headers.get("Origin")
        if origin is not None and origin.lower() not in self.origins:
            return f"foreign origin {origin!r}"
        if self.tabs >= self.max_tabs:
            return f"already {self.tabs} tabs open (--max-tabs {self.max_tabs})"
        return None

    async def handle_guarded_websocket(self, request: web.Request) -> web.StreamResponse:
        why = self.refusal(request)
        if why is not None:
            log.warning("queuetop serve: refused a websocket from %s: %s", request.remote, why)
            status = web.HTTPTooManyRequests if why.startswith("already") else web.HTTPForbidden
            raise status(text=why)
        self.tabs += 1
        try:
            return await self._run_tab(request)
        finally:
            self.tabs -= 1

    async def _run_tab(self, request: web.Request) -> web.WebSocketResponse:
        """textual-serve's handle_websocket, with the terminal size capped."""
        websocket = web.WebSocketResponse(heartbeat=15)
        width, height = clamp_size(
            to_int(request.query.get("width", "80"), 80),
            to_int(request.query.get("height", "24"), 24),
        )
        service: AppService | None = None
        try:
            await websocket.prepare(request)
            service = AppService(
                self.command,
                write_bytes=websocket.send_bytes,
                write_str=websocket.send_str,
                close=websocket.close,
                download_manager=self.download_manager,
                debug=self.debug,
            )
            await service.start(width, height)
            await self._relay(websocket, service)
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as error:  # one tab's failure must not stop the server
            log.exception(error)
        finally:
            if service is not None:
                await service.stop()
        return websocket

    async def _relay(self, websocket: web.WebSocketResponse, service: AppService) -> None:
        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                kind, data = message.json()
            except (ValueError, TypeError):
                continue  # not the page's protocol: ignored
            if kind == "stdin" and isinstance(data, str):
                await service.send_bytes(data.encode("utf-8"))
            elif kind == "resize" and isinstance(data, dict):
                width, height = clamp_size(
                    to_int(str(data.get("width", 80)), 80), to_int(str(data.get("height", 24)), 24)
                )
                await service.set_terminal_size(width, height)
            elif kind == "ping":
                await websocket.send_json(["pong", data])
            elif kind == "blur":
                await service.blur()
            elif kind == "focus":
                await service.focus()
