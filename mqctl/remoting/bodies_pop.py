"""Answers about POP consumers: a broker's remembered subscription (QUERY_SUBSCRIPTION_BY_CONSUMER)
and a broker's settings (GET_BROKER_CONFIG)."""

from __future__ import annotations

from mqctl.errors import ProtocolError
from mqctl.remoting.bodies_json import parse_object


def decode_subscription_query(body: bytes) -> str | None:
    """QuerySubscriptionResponseBody -> the subscription's expression; None when the broker holds
    none (``subscriptionData`` null, which fastjson leaves out)."""
    doc = parse_object(body, "subscription of a group")
    data = doc.get("subscriptionData")
    if data is None:
        return None
    if not isinstance(data, dict):
        raise ProtocolError(f"subscription of a group: subscriptionData is {type(data).__name__}")
    sub = data.get("subString")
    return sub if isinstance(sub, str) else "*"


def decode_broker_config(body: bytes) -> dict[str, str]:
    """GET_BROKER_CONFIG's body: ``key=value`` lines (MixAll.properties2String)."""
    out: dict[str, str] = {}
    for line in bytes(body).decode("utf-8", "replace").splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip():
            out[key.strip()] = value.strip()
    return out
