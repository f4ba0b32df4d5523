"""Answers about POP consumers: a broker's remembered subscription (QUERY_SUBSCRIPTION_BY_CONSUMER),
a broker's settings (GET_BROKER_CONFIG), the POP checkpoints and acknowledgements in its timer
wheel (VIEW_MESSAGE_BY_ID of rmq_sys_wheel_timer's entries)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.errors import ProtocolError, StoreError
from mqctl.remoting.bodies_json import get_int, get_str, parse_object

if TYPE_CHECKING:
    from mqctl.model.pop import PopAck, PopCheckpoint


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


def decode_wheel_entry(body: bytes, broker: str) -> PopCheckpoint | PopAck | None:
    """A message of the timer wheel (the VIEW_MESSAGE_BY_ID body): a POP checkpoint or an
    acknowledgement bound for the revive topic, else None (a user's timer message)."""
    from mqctl.model.pop import ACK_TAG, BATCH_ACK_TAG, CK_TAG, REVIVE_TOPIC_PREFIX, PopAck, PopCheckpoint
    from mqctl.store.commitlog import decode_record

    try:
        rec = decode_record(bytes(body), 0, check_crc=False)
    except StoreError as exc:
        raise ProtocolError(f"timer wheel message: {exc.message}") from None
    tag = rec.properties.get("TAGS")
    if tag not in (CK_TAG, ACK_TAG, BATCH_ACK_TAG):
        return None
    if not rec.properties.get("REAL_TOPIC", rec.topic).startswith(REVIVE_TOPIC_PREFIX):
        return None
    doc = parse_object(rec.body, f"POP {tag} message")
    group = get_str(doc, "c", f"POP {tag} message") or ""
    what = f"POP {tag} of {group}"
    topic, qid = get_str(doc, "t", what) or "", get_int(doc, "q", what)
    start, pop_time = get_int(doc, "so", what), get_int(doc, "pt", what)
    name = get_str(doc, "bn", what) or broker
    if tag == CK_TAG:
        diffs = doc.get("d")
        if isinstance(diffs, list) and all(isinstance(d, int) for d in diffs):
            offsets = tuple(start + d for d in diffs)
        else:
            offsets = tuple(range(start, start + get_int(doc, "n", what)))
        return PopCheckpoint(name, topic, qid, group, start, pop_time, get_int(doc, "it", what), offsets)
    if tag == ACK_TAG:
        return PopAck(name, topic, qid, group, start, pop_time, (get_int(doc, "ao", what),))
    listed = doc.get("aol")
    if not isinstance(listed, list) or not all(isinstance(o, int) for o in listed):
        raise ProtocolError(f"{what}: aol is not a list of offsets")
    return PopAck(name, topic, qid, group, start, pop_time, tuple(listed))
