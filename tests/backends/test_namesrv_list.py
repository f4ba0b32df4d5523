"""-n / $NAMESRV_ADDR: mqadmin's 'host:port;host:port', and the comma a Kafka user types for a
bootstrap list (before: 'a:9876,b:9876' was looked up as one host name, 'a:9876,b', exit 4)."""

from __future__ import annotations

import pytest

from mqctl.backends.live_net import split_namesrv


@pytest.mark.parametrize(
    ("value", "addresses"),
    [
        ("10.0.0.1:9876", ["10.0.0.1:9876"]),
        ("10.0.0.1:9876;10.0.0.2:9876", ["10.0.0.1:9876", "10.0.0.2:9876"]),
        ("10.0.0.1:9876,10.0.0.2:9876", ["10.0.0.1:9876", "10.0.0.2:9876"]),
        (" a:1 ; b:2, c:3 ;", ["a:1", "b:2", "c:3"]),
    ],
)
def test_addresses_in_order(value: str, addresses: list[str]) -> None:
    assert split_namesrv(value) == addresses
