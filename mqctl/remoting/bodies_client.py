"""Bodies describing consumer clients: ConsumerConnection (203) and ConsumerRunningInfo (307).

The broker builds ConsumerConnection from the clients' heartbeats; ConsumerRunningInfo is written
by the consumer's own SDK and only relayed, so it is read leniently (remoting.md 7.7): unknown
properties are ignored, missing ones take the Java defaults, numbers may be strings (the C++ SDK
writes longs with ``to_string``), ``droped`` (sic) or ``dropped``, and two known malformed texts
are repaired first: the C++ SDK's ``{"mqTable":},`` when it holds no queue, and a .NET SDK's
leading ``{,`` when it has no queue table.
"""

from __future__ import annotations

from typing import Any

from mqctl.errors import ProtocolError
from mqctl.model import (
    Connection,
    ConsumerConnection,
    ConsumerRunningInfo,
    MessageQueue,
    ProcessQueueInfo,
    Subscription,
)
from mqctl.remoting.bodies_json import (
    INT32,
    INT64,
    as_list,
    as_map,
    bean,
    get_bool,
    get_int,
    get_str,
    message_queue,
    parse_object,
    to_int,
)

__all__ = ["decode_consumer_connection", "decode_running_info", "decode_subscription"]

# LanguageCode by its byte code (remoting.md 3.1), for a peer that writes the code, not the name.
_LANGUAGES = (
    "JAVA",
    "CPP",
    "DOTNET",
    "PYTHON",
    "DELPHI",
    "ERLANG",
    "RUBY",
    "OTHER",
    "HTTP",
    "GO",
    "PHP",
    "OMS",
    "RUST",
    "NODE_JS",
)
_UINT64_MAX = 2**64 - 1


def decode_subscription(raw: Any, what: str, topic_default: str | None = None) -> Subscription:
    """A SubscriptionData object; tagsSet/codeSet as tuples in the body's order."""
    obj = bean(raw, what)
    topic = get_str(obj, "topic", what, topic_default)
    if topic is None:
        raise ProtocolError(f"{what}: topic is missing")
    tags = as_list(obj.get("tagsSet"), f"{what}.tagsSet")
    if not all(isinstance(t, str) for t in tags):
        raise ProtocolError(f"{what}.tagsSet: expected an array of strings")
    codes = as_list(obj.get("codeSet"), f"{what}.codeSet")
    return Subscription(
        topic=topic,
        sub_string=get_str(obj, "subString", what),
        # Missing: SubscriptionData's field initialiser, which fastjson leaves in place.
        expression_type=get_str(obj, "expressionType", what, "TAG"),
        tags=tuple(tags),
        codes=tuple(to_int(c, f"{what}.codeSet", INT32) for c in codes),
        sub_version=get_int(obj, "subVersion", what),
    )


def _connection(raw: Any, what: str) -> Connection:
    obj = bean(raw, what)
    language = obj.get("language")
    if isinstance(language, int) and not isinstance(language, bool) and 0 <= language < len(_LANGUAGES):
        language = _LANGUAGES[language]
    elif language is not None and not isinstance(language, str):
        raise ProtocolError(f"{what}.language: expected a language name, got {language!r}")
    return Connection(
        client_id=get_str(obj, "clientId", what, "") or "",
        client_addr=get_str(obj, "clientAddr", what, "") or "",
        language=language or "",
        version=get_int(obj, "version", what, 0, INT32),
    )


def decode_consumer_connection(body: bytes, group: str) -> ConsumerConnection:
    """ConsumerConnection (remoting.md 7.6); subscriptions in subscriptionTable's order."""
    what = f"connections of {group!r}"
    doc = parse_object(body, what)
    conns = as_list(doc.get("connectionSet"), f"{what}: connectionSet")
    subs = []
    for topic, raw in as_map(doc.get("subscriptionTable"), f"{what}: subscriptionTable").items():
        if not isinstance(topic, str):
            raise ProtocolError(f"{what}: subscriptionTable key {topic!r} is not a topic")
        subs.append(decode_subscription(raw, f"{what}: subscription {topic!r}", topic))
    return ConsumerConnection(
        group=group,
        connections=tuple(_connection(c, f"{what}: connectionSet[{i}]") for i, c in enumerate(conns)),
        subscriptions=tuple(subs),
        consume_type=get_str(doc, "consumeType", what),
        message_model=get_str(doc, "messageModel", what),
        consume_from_where=get_str(doc, "consumeFromWhere", what),
    )


# ---------------------------------------------------------------------------------------------
# ConsumerRunningInfo


def _repair(body: bytes) -> bytes:
    body = bytes(body)
    head = body.lstrip()
    if head.startswith(b'{"mqTable":},'):
        return b'{"mqTable":{},' + head[len(b'{"mqTable":},') :]
    if head.startswith(b"{,"):
        return b"{" + head[2:]
    return body


def _long(obj: Any, key: str, what: str) -> int:
    # An unsigned 64-bit value from a C/C++/Go SDK (e.g. -1 stored in a uint64) reads as Java would
    # have meant it: the same 64 bits, signed.
    n = get_int(obj, key, what, 0, (INT64[0], _UINT64_MAX))
    return n - 2**64 if n > INT64[1] else n


def _process_queue(raw: Any, what: str) -> ProcessQueueInfo:
    obj = bean(raw, what)
    dropped = get_bool(obj, "droped", what, get_bool(obj, "dropped", what, False))
    return ProcessQueueInfo(
        commit_offset=_long(obj, "commitOffset", what),
        cached_msg_min_offset=_long(obj, "cachedMsgMinOffset", what),
        cached_msg_max_offset=_long(obj, "cachedMsgMaxOffset", what),
        cached_msg_count=get_int(obj, "cachedMsgCount", what, 0, INT32),
        cached_msg_size_mib=get_int(obj, "cachedMsgSizeInMiB", what, 0, INT32),
        last_pull_timestamp=_long(obj, "lastPullTimestamp", what),
        last_consume_timestamp=_long(obj, "lastConsumeTimestamp", what),
        dropped=dropped,
        locked=get_bool(obj, "locked", what, False),
    )


def _property_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    from mqctl.fastjson import dumps_compact

    return dumps_compact(value)


def _properties(value: Any, what: str) -> tuple[tuple[str, str], ...]:
    out = []
    for key, item in as_map(value, what).items():
        if item is None:
            continue  # fastjson omits null map values; a peer that writes them meant "unset"
        if isinstance(key, bool) or not isinstance(key, (str, int)):
            raise ProtocolError(f"{what}: property name {key!r} is not a string")
        out.append((str(key), _property_text(item)))
    return tuple(out)


def _subscription_list(value: Any, what: str) -> list[Any]:
    if isinstance(value, dict):
        return list(value.values())  # an SDK that writes the set as topic -> SubscriptionData
    return as_list(value, what)


def decode_running_info(body: bytes, client_id: str) -> ConsumerRunningInfo:
    """ConsumerRunningInfo (remoting.md 7.7), as any SDK writes it."""
    what = f"running info of {client_id!r}"
    doc = parse_object(_repair(body), what)
    queues: list[tuple[MessageQueue, ProcessQueueInfo]] = []
    for key, raw in as_map(doc.get("mqTable"), f"{what}: mqTable").items():
        mq = message_queue(key, f"{what}: mqTable key")
        queues.append((mq, _process_queue(raw, f"{what}: queue {mq.topic}/{mq.broker_name}/{mq.queue_id}")))
    pop = tuple(message_queue(k, f"{what}: mqPopTable key") for k in as_map(doc.get("mqPopTable"), what))
    # A SubscriptionData without a topic names nothing; another SDK's extra entry is not a reason
    # to refuse the whole answer.
    subs = [
        s
        for s in _subscription_list(doc.get("subscriptionSet"), f"{what}: subscriptionSet")
        if not isinstance(s, dict) or s.get("topic") is not None
    ]
    return ConsumerRunningInfo(
        client_id=client_id,
        properties=_properties(doc.get("properties"), f"{what}: properties"),
        queues=tuple(queues),
        pop_queues=pop,
        subscriptions=tuple(
            decode_subscription(s, f"{what}: subscriptionSet[{i}]") for i, s in enumerate(subs)
        ),
    )
