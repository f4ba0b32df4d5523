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
