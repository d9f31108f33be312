"""A terminal driver whose input thread sleeps while no key is pending (the `driver` piece:
see forks/__init__.py; forks/driver.py switches it).

Textual's LinuxDriver reads the terminal in a thread that wakes every 0.1 s, input or not
(`selector.select(0.1)`, so that a lone Escape is flushed once ESCDELAY has passed and the
exit flag is seen). For a dashboard left open on a quiet terminal those ten wake-ups a
second were a fifth of queuetop's whole client CPU (bench/vs_pg_activity.py, read per
thread from /proc). This driver ticks like Textual's only while input is recent (a key,
the mouse, a paste: until ESCDELAY and a tick more have passed since the last byte) and
otherwise blocks in `select` until the terminal or a wake-up pipe is readable; setting
the exit flag writes to that pipe, so that stopping (quit, suspend) is as prompt as before.
"""

from __future__ import annotations

import os
import selectors
import time
from codecs import getincrementaldecoder
from threading import Event

from textual import constants
from textual._parser import ParseError
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

TICK_S = 0.1  # Textual's own tick while input is recent
# how long after the last byte the thread keeps ticking: a lone Escape waits ESCDELAY
LINGER_S = constants.ESCAPE_DELAY + 2 * TICK_S


class _WakingEvent(Event):
    """The driver's exit flag: setting it wakes the input thread's `select`."""

    def __init__(self, wake_fd: int):
        super().__init__()
        self.wake_fd: int | None = wake_fd  # None once the driver closed it

    def set(self) -> None:
        super().set()
        if self.wake_fd is not None:
            try:
                os.write(self.wake_fd, b"x")
            except BlockingIOError:  # the pipe is full: the thread is woken already
                pass


class QuietLinuxDriver(LinuxDriver):
    """LinuxDriver, its input thread asleep between keys (see the module's docstring)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        os.set_blocking(self._wake_write, False)
        self.exit_event = _WakingEvent(self._wake_write)

    def _drain_wake(self) -> None:
        try:
            while os.read(self._wake_read, 512):
                pass
        except (BlockingIOError, OSError):
            pass

    def run_input_thread(self) -> None:
        """As LinuxDriver's: read the terminal, feed the parser, post its events; but
        block between keys instead of waking every tick."""
        self._drain_wake()  # a wake-up left from a previous stop (suspend, resume)
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        selector.register(self._wake_read, selectors.EVENT_READ)
        parser = XTermParser(getattr(self, "_debug", False))
        decode = getincrementaldecoder("utf-8")().decode
        last_input = time.monotonic()  # the first ticks answer the start's own queries

        def process(events, final: bool = False) -> bool:
            """Feed what the terminal has; tick the parser. False at the end of input."""
            nonlocal last_input
            more = True
            for key, mask in events:
                if key.fd == self._wake_read:
                    self._drain_wake()
                    continue
                if mask & selectors.EVENT_READ:
                    data = decode(os.read(self.fileno, 1024 * 4), final=final)
                    if not data:  # stdin piped and closed
                        more = False
                        break
                    last_input = time.monotonic()
                    for event in parser.feed(data):
                        self.process_message(event)
            for event in parser.tick():
                self.process_message(event)
            return more

        try:
            while not self.exit_event.is_set():
                recent = time.monotonic() - last_input < LINGER_S
                if not process(selector.select(TICK_S if recent else None)):
                    # end of input: as Textual's loop, which then ticks until exit
                    while not self.exit_event.is_set():
                        self.exit_event.wait(TICK_S)
                        for event in parser.tick():
                            self.process_message(event)
            selector.unregister(self.fileno)
            selector.unregister(self._wake_read)
            process(selector.select(TICK_S), final=True)
        finally:
            selector.close()
            try:
                for _event in parser.feed(""):
                    pass
            except (EOFError, ParseError):  # input ended mid-sequence
                pass

    def close(self) -> None:
        super().close()
        self.exit_event.wake_fd = None  # never written once closed: the number may be reused
        for fd in (self._wake_read, self._wake_write):
            try:
                os.close(fd)
            except OSError:
                pass
