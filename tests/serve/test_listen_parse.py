"""exporter --listen: the forms a user writes, as a URL writes them (RFC 3986: an IPv6 literal in
brackets), and the address and port each one binds."""

from __future__ import annotations

import pytest

from mqctl.errors import UsageError
from mqctl.serve.http import parse_listen


@pytest.mark.parametrize(
    ("text", "bound"),
    [
        (":9877", ("0.0.0.0", 9877)),
        ("127.0.0.1:9877", ("127.0.0.1", 9877)),
        ("[::1]:9877", ("::1", 9877)),
        ("[::]:80", ("::", 80)),
        ("localhost:0", ("localhost", 0)),
    ],
)
def test_accepted(text: str, bound: tuple[str, int]) -> None:
    assert parse_listen(text) == bound


@pytest.mark.parametrize(
    "text", ["[::1", "[::1:9877", "[]:9877", "9877", "host:65536", "host:\u00b2", "h:-1"]
)
def test_refused(text: str) -> None:
    with pytest.raises(UsageError, match="expected HOST:PORT"):
        parse_listen(text)


def test_every_address_is_said_and_named_by_the_host_name() -> None:
    """':PORT' listens on every address: the start-up line says so, and the URL (the alerts'
    generatorURL) names this machine, which others can reach, not 127.0.0.1."""
    import socket
    import urllib.request

    pytest.importorskip("prometheus_client")
    from mqctl.serve.families import Shape
    from mqctl.serve.http import Server
    from mqctl.serve.metrics import RoundCollector

    every = Server(":0", RoundCollector(Shape(), "t"))
    one = Server("127.0.0.1:0", RoundCollector(Shape(), "t"))
    try:
        assert every.url == f"http://{socket.gethostname()}:{every.port}"
        assert every.where == f"{every.url}/metrics (every address of this machine)"
        assert one.where == f"http://127.0.0.1:{one.port}/metrics"
        with urllib.request.urlopen(f"http://127.0.0.1:{every.port}/metrics", timeout=10) as r:
            assert b"mqctl_build_info" in r.read()
    finally:
        every.close()
        one.close()
