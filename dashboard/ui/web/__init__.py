"""`queuetop serve`: the dashboard in a browser, through textual-serve.

textual-serve runs one dashboard process per browser tab (the command given here) and
relays its screen over a websocket to xterm.js; guarded.py puts it behind a per-start
secret, an Origin check and caps on tabs and terminal size. Its page template is ours
(templates/app_index.html): the same page without the web-font link, so that a browser
loads nothing from outside the machine queuetop runs on.
"""

from __future__ import annotations

import shlex
import socket
import sys
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent / "templates"


def dashboard_command(subcommand: str, options: list[str]) -> str:
    """The shell command textual-serve runs for each tab: this Python, this queuetop."""
    return shlex.join([sys.executable, "-m", "dashboard", subcommand, *options])


def public_url(host: str, port: int) -> str:
    """The address a browser reaches the server by (the page's websocket URL uses it)."""
    if host in ("0.0.0.0", "::", ""):  # every interface: the machine's own name
        host = socket.getfqdn()
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def server(
    command: str, host: str, port: int, *, title: str, max_tabs: int, url: str | None = None
):
    """The guarded server (see guarded.py); its `page_url` carries this start's secret."""
    from dashboard.ui.web.guarded import GuardedServer, new_secret

    return GuardedServer(
        command,
        host=host,
        port=port,
        title=title,
        public_url=url or public_url(host, port),
        templates_path=TEMPLATES,
        secret=new_secret(),
        max_tabs=max_tabs,
    )
