"""The exporter's HTTP endpoint: ``/metrics`` in the Prometheus text format, or OpenMetrics when
the scraper's ``Accept`` asks for it (prometheus-client's own WSGI app negotiates both, and gzip);
``/-/ready`` (200 once a first round is served, else 503), ``/-/healthy`` and a short index.
A threading server: a slow scraper does not hold up another.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from mqctl.errors import UsageError

if TYPE_CHECKING:
    from mqctl.serve.metrics import RoundCollector

StartResponse = Callable[..., Any]


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` (every address) or ``[::1]:PORT`` (brackets closed, as in a URL)."""
    host, sep, port = text.strip().rpartition(":")
    bracketed = host.startswith("[")
    if bracketed and not (host.endswith("]") and len(host) > 2 and "[" not in host[1:-1]):
        sep = ""  # '[::1', '[::1:9877', '[]:9877': an IPv6 address is written [ADDRESS]:PORT
    if not sep or not (port.isascii() and port.isdigit()) or not 0 <= int(port) <= 65535:
        raise UsageError(f"--listen {text!r}: expected HOST:PORT, e.g. 127.0.0.1:9877, :9877 or [::1]:9877")
    host = (host[1:-1] if bracketed else host) or "0.0.0.0"
    return host, int(port)


def app(collector: RoundCollector) -> Callable[[dict, StartResponse], Iterable[bytes]]:
    from prometheus_client.exposition import make_wsgi_app

    from mqctl.serve.metrics import registry_for

    metrics = make_wsgi_app(registry_for(collector))

    def serve(environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO") or "/"
        if path == "/metrics":
            return metrics(environ, start_response)
        text = "text/plain; charset=utf-8"
        if path == "/-/healthy":
            start_response("200 OK", [("Content-Type", text)])
            return [b"ok\n"]
        if path == "/-/ready":
            ok = collector.ready
            start_response("200 OK" if ok else "503 Service Unavailable", [("Content-Type", text)])
            return [b"ready\n" if ok else b"no round yet\n"]
        if path == "/":
            start_response("200 OK", [("Content-Type", text)])
            return [b"mqctl exporter: /metrics (Prometheus text or OpenMetrics), /-/ready, /-/healthy\n"]
        start_response("404 Not Found", [("Content-Type", text)])
        return [b"not found: /metrics\n"]

    return serve


def _hint(error: OSError, host: str) -> str:
    import errno

    if error.errno == errno.EADDRINUSE:
        return "another process listens on that port: pick a free one"
    if error.errno == errno.EADDRNOTAVAIL:
        return f"{host} is not an address of this machine: give one of its own, or ':PORT' for every one"
    if error.errno == errno.EACCES:
        return "a port below 1024 needs privileges: pick a higher one"
    if isinstance(error, socket.gaierror):
        return f"check the host name {host!r}, or give an IP address"
    return "pick another HOST:PORT"


class Server:
    """The endpoint on ``listen``, answering from a thread of its own until ``close``."""

    def __init__(self, listen: str, collector: RoundCollector) -> None:
        from wsgiref.simple_server import WSGIRequestHandler, make_server

        from prometheus_client.exposition import ThreadingWSGIServer

        class Quiet(WSGIRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
                return None

        host, port = parse_listen(listen)

        class Threading(ThreadingWSGIServer):
            address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
            daemon_threads = True

        try:
            self.httpd = make_server(host, port, app(collector), Threading, handler_class=Quiet)
        except OSError as e:
            raise UsageError(
                f"--listen {listen}: cannot listen there: {e.strerror or e}", _hint(e, host)
            ) from None
        self.port = self.httpd.server_port
        self.host = host
        # (shutdown waits for the loop's next poll: 0.1 s, not socketserver's 0.5, after Ctrl-C)
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.1}, name="mqctl-http", daemon=True
        )
        self._thread.start()

    @property
    def every_address(self) -> bool:
        return self.host in ("0.0.0.0", "::", "")

    @property
    def url(self) -> str:
        """The endpoint's URL, as the alerts' generatorURL: on every address, this machine's host
        name (Prometheus' default external URL), which other machines can reach, not 127.0.0.1."""
        host = socket.gethostname() if self.every_address else self.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}"

    @property
    def where(self) -> str:
        """What the start-up line says is served, and where."""
        return f"{self.url}/metrics" + (" (every address of this machine)" if self.every_address else "")

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
