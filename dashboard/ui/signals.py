"""SIGTERM and SIGHUP end the dashboard the way `q` does.

Without a handler either signal kills the process where it stands: the terminal
stays in the alternate screen with mouse reporting on and the cursor hidden,
and the load generator's workers and queues are never shut down ("leaked
semaphore objects"). Handled on the app's event loop, the signal becomes an
ordinary exit: Textual restores the terminal, on_unmount stops the workers.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from typing import Any

EXIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def exit_on_signals(app: Any) -> Callable[[], None]:
    """Call from on_mount; returns the function that puts the previous handlers back.

    The app exits with return code 128 + the signal's number, as a shell reports it.
    """
    loop = asyncio.get_running_loop()
    previous: dict[int, Any] = {}
    for sig in EXIT_SIGNALS:
        before = signal.getsignal(sig)
        try:
            loop.add_signal_handler(sig, lambda sig=sig: app.exit(return_code=128 + sig))
        except (NotImplementedError, RuntimeError, ValueError):  # no signals here, or not
            continue  # the main thread: leave the default
        previous[sig] = before

    def restore() -> None:
        for sig, before in previous.items():
            loop.remove_signal_handler(sig)
            signal.signal(sig, before if before is not None else signal.SIG_DFL)

    return restore
