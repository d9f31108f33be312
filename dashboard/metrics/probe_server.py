"""HTTP for a multi-target exporter: `/probe?target=NAME` and `/metrics`, as
postgres_exporter and blackbox_exporter serve them.

    GET /probe?target=NAME   the target NAME of the targets file, polled (or from the
                             cache): its queue's metrics, as `export --dsn` serves them
    GET /metrics             the exporter's own health, per target

The `target` parameter is only ever a key looked up among the file's names: a value
that is not one (`host=evil`, a URL, a path) is answered 400 and nothing is connected to.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app

from dashboard.metrics.fleet import Fleet

MAX_QUERY_FIELDS = 20  # a query string with more parameters is refused unread
# Prometheus says how long it waits for a scrape; the answer is sent this much before that
# (at most a quarter of it), as blackbox_exporter's --timeout-offset does
TIMEOUT_OFFSET_S = 0.5
USAGE = "GET /probe?target=NAME (NAME: a target of the targets file) or GET /metrics"


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    """One thread per request: a slow target never holds the scrape of another."""

    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base's name)
        """Scrapes every few seconds: no line per request on stderr."""


def _plain(start_response: Callable, status: str, text: str) -> Iterable[bytes]:
    start_response(status, [("Content-Type", "text/plain; charset=utf-8")])
    return [(text + "\n").encode()]


def scrape_deadline(header: str | None) -> float | None:
    """How long a scrape may wait for its target's poll: the client's scrape timeout (the
    X-Prometheus-Scrape-Timeout-Seconds header) less TIMEOUT_OFFSET_S, at most a quarter of
    it; None without a header or with one that is not a positive number of seconds."""
    try:
        timeout = float(header or "")
    except ValueError:
        return None
    if not 0 < timeout < float("inf"):
        return None
    return timeout - min(TIMEOUT_OFFSET_S, timeout / 4)


def fleet_app(fleet: Fleet) -> Callable:
    """The WSGI application: /probe, /metrics, and one line saying so anywhere else."""
    own = CollectorRegistry(auto_describe=False)
    own.register(fleet)
    metrics = make_wsgi_app(own)
    probes = {name: make_wsgi_app(probe.registry) for name, probe in fleet.probes.items()}

    def app(environ: dict, start_response: Callable) -> Iterable[bytes]:
        fleet.close_idle()
        path = environ.get("PATH_INFO", "")
        if environ.get("REQUEST_METHOD") != "GET":
            return _plain(start_response, "405 Method Not Allowed", f"only {USAGE}")
        if path == "/metrics":
            return metrics(environ, start_response)
        if path != "/probe":
            return _plain(start_response, "404 Not Found", USAGE)
        try:
            params = parse_qs(
                environ.get("QUERY_STRING", ""),
                keep_blank_values=True,
                max_num_fields=MAX_QUERY_FIELDS,
            )
        except ValueError:
            params = {}
        probe = fleet.find(params.get("target", []))
        if probe is None:  # said without the value given: it is not echoed back
            return _plain(
                start_response,
                "400 Bad Request",
                "no such target: give ?target=NAME once, NAME a target of the targets "
                "file (GET /metrics lists them)",
            )
        probe.refresh(scrape_deadline(environ.get("HTTP_X_PROMETHEUS_SCRAPE_TIMEOUT_SECONDS")))
        return probes[probe.name](environ, start_response)

    return app


def serve_fleet(fleet: Fleet, host: str, port: int) -> WSGIServer:
    """Serve fleet_app in a daemon thread; the server's `server_address` has the port
    bound (for port 0). An address that cannot be bound raises OSError."""

    class Server(_ThreadingServer):
        pass

    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    Server.address_family, address = infos[0][0], infos[0][4][0]
    httpd = make_server(address, port, fleet_app(fleet), Server, handler_class=_QuietHandler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd
