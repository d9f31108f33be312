"""The Textual app under Pilot: run it at a size, wait on it, then a test's body."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from textual.app import App
from textual.pilot import Pilot

Body = Callable[[Pilot], Awaitable[Any]]


async def until(pilot: Pilot, fn: Callable[[], Any], timeout: float = 15.0) -> Any:
    """Let the app run until fn() is truthy; fail after timeout."""
    deadline = time.monotonic() + timeout
    while not (value := fn()):
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        await pilot.pause(0.05)
    return value


def run_app(
    app: App,
    body: Body,
    size: tuple[int, int] = (120, 40),
    *,
    ready: Callable[[], Any] | None = None,
    before: Body | None = None,
) -> None:
    """Run `app` at `size` under Pilot: one pause (or until `ready()` holds), then
    `before` (a step every test of a file takes), then `body`."""

    async def go() -> None:
        async with app.run_test(size=size) as pilot:
            if ready is None:
                await pilot.pause()
            else:
                await until(pilot, ready)
            if before is not None:
                await before(pilot)
            await body(pilot)

    asyncio.run(go())
