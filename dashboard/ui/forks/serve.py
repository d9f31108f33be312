"""textual-serve's Server with the aiohttp application queuetop builds.

textual-serve makes its application in the private `Server._make_app` (its routes: the page
and the websocket, open to any client), which `Server.serve` runs. ui/web/guarded.py puts
the page and the websocket behind a secret and an Origin check, so it needs its own routes:
RoutedServer overrides `_make_app` to call the public-named `make_app` a subclass defines.
This is not a switch: with no `_make_app` to override, textual-serve would serve its own,
unguarded routes, so the server refuses to start instead.
"""

from __future__ import annotations

from aiohttp import web
from textual_serve.server import Server

from dashboard.errors import UserError


class ServeUnavailable(UserError):
    """textual-serve no longer builds its application where RoutedServer replaces it."""


class RoutedServer(Server):
    """A Server whose aiohttp application is `make_app()`'s."""

    def __init__(self, *args, **kwargs) -> None:
        if not callable(getattr(Server, "_make_app", None)):
            raise ServeUnavailable(
                "this textual-serve has no Server._make_app: queuetop serve cannot put its "
                "guard (secret URL, Origin check) in front of it, and will not serve unguarded"
            )
        super().__init__(*args, **kwargs)

    async def _make_app(self) -> web.Application:
        return await self.make_app()

    async def make_app(self) -> web.Application:  # pragma: no cover - overridden
        raise NotImplementedError
