"""Pure decoders of RocketMQ remoting bodies (remoting.md 7) into mqctl's model types.

Bytes in, typed values out, no I/O. Every decoder raises only ``ProtocolError`` for a body that
does not parse or binds the wrong types; fastjson's dialect (unquoted int keys, objects as map
keys, BrowserCompatible strings) is read by ``mqctl.fastjson`` behind a depth guard
(``bodies_json``). Maps keep the JSON's order: the peer's own map order is what mqadmin prints.

The decoders live in four modules, all re-exported here:

* ``bodies``: name-server and broker admin bodies (route, cluster, consume stats, topic stats,
  reset offsets, name lists, the broker's config tables);
* ``bodies_client``: bodies a consumer's SDK writes or the broker builds from its heartbeats
  (ConsumerConnection 203, ConsumerRunningInfo 307);
* ``bodies_queue``: QUERY_CONSUME_QUEUE (321) and VIEW_MESSAGE_BY_ID (33);
* ``bodies_json``: shared parsing and Java-lenient field access.

No request mqctl sends carries a body (GET_CONSUME_STATS' ``topicList`` is a header field), so
there are no encoders.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mqctl.errors import ProtocolError, StoreCorruptError
from mqctl.lazyre import compile_now, lazy
from mqctl.model import BrokerData, ConsumeStats, MessageQueue, QueueData, QueueStat, TopicRoute
from mqctl.records import record
from mqctl.remoting.bodies_json import (
    INT32,
    INT64,
    MQ_KEY_AS_WRITTEN,
    as_list,
    as_map,
    bean,
    get_float,
    get_int,
    get_str,
    message_queue,
    parse_object,
    parse_object_keyed,
    run_store_decoder,
    to_int,
)

if TYPE_CHECKING:
    from mqctl.model import SubscriptionGroup, TopicConfig
    from mqctl.remoting.bodies_client import decode_consumer_connection, decode_running_info
    from mqctl.remoting.bodies_queue import (
        CqAnswer,
        CqEntry,
        decode_query_consume_queue,
        decode_stored_message,
    )

# Decoders of the client and queue bodies live in their own modules, loaded on first use (a
# consumerProgress needs neither): re-exported here by name.
_ELSEWHERE = {
    "decode_consumer_connection": "bodies_client",
    "decode_running_info": "bodies_client",
    "CqAnswer": "bodies_queue",
    "CqEntry": "bodies_queue",
    "decode_query_consume_queue": "bodies_queue",
    "decode_stored_message": "bodies_queue",
}


def __getattr__(name: str) -> Any:
    where = _ELSEWHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"mqctl.remoting.{where}"), name)
    globals()[name] = value  # asked once: a function's import of it in a loop is a dict look-up
    return value


__all__ = [
    "ClusterInfo",
    "CqAnswer",
    "CqEntry",
    "TopicOffset",
    "decode_cluster_info",
    "decode_consume_stats",
    "decode_consumer_connection",
    "decode_consumer_offsets_body",
    "decode_name_list",
    "decode_query_consume_queue",
    "decode_reset_offset_body",
    "decode_running_info",
    "decode_stored_message",
    "decode_subscription_group_names",
    "decode_subscription_groups_body",
    "decode_topic_config_names",
    "decode_topic_configs",
    "decode_topic_route",
    "decode_topic_stats",
    "subscription_group_from_props",
]


@record(frozen=True, slots=True)
class ClusterInfo:
    """GET_BROKER_CLUSTER_INFO (106): broker groups by name, and each cluster's broker names."""

    brokers: dict[str, BrokerData]
    clusters: dict[str, tuple[str, ...]]


@record(frozen=True, slots=True)
class TopicOffset:
    """One queue of GET_TOPIC_STATS_INFO (202): min offset, max offset (next to write), last store time."""

    min_offset: int
    max_offset: int
    last_update_timestamp: int


# ---------------------------------------------------------------------------------------------
# Routes (105, 106)


def _queue_data(raw: Any, what: str) -> QueueData:
    obj = bean(raw, what)
    name = get_str(obj, "brokerName", what)
    if name is None:
        raise ProtocolError(f"{what}: brokerName is missing")
    # Java int defaults (0), not the model's: a property the peer left out was 0 on its side.
    return QueueData(
        broker_name=name,
        read_queue_nums=get_int(obj, "readQueueNums", what, 0, INT32),
        write_queue_nums=get_int(obj, "writeQueueNums", what, 0, INT32),
        perm=get_int(obj, "perm", what, 0, INT32),
        topic_sys_flag=get_int(obj, "topicSysFlag", what, 0, INT32),
    )


def _broker_data(raw: Any, what: str, name_default: str | None = None) -> BrokerData:
    obj = bean(raw, what)
    name = get_str(obj, "brokerName", what, name_default)
    if name is None:
        raise ProtocolError(f"{what}: brokerName is missing")
    addrs: list[tuple[int, str]] = []
    for key, addr in as_map(obj.get("brokerAddrs"), f"{what}.brokerAddrs").items():
        if addr is None:
            continue
        if not isinstance(addr, str) or not isinstance(key, (int, str)) or isinstance(key, bool):
            raise ProtocolError(f"{what}.brokerAddrs: expected broker id -> address, got {key!r}: {addr!r}")
        # Default encoding writes the Long id bare; BrowserCompatible (version >= 401) quotes it.
        addrs.append((to_int(key, f"{what}.brokerAddrs key"), addr))
    return BrokerData(broker_name=name, cluster=get_str(obj, "cluster", what, "") or "", addrs=tuple(addrs))


def decode_topic_route(body: bytes, topic: str) -> TopicRoute:
    """TopicRouteData (remoting.md 7.2), either encoding; queue and broker datas in the body's order."""
    what = f"route of topic {topic!r}"
    doc = parse_object(body, what)
    queue_list = as_list(doc.get("queueDatas"), f"{what}: queueDatas")
    broker_list = as_list(doc.get("brokerDatas"), f"{what}: brokerDatas")
    return TopicRoute(
        topic=topic,
        queue_datas=tuple(_queue_data(q, f"{what}: queueDatas[{i}]") for i, q in enumerate(queue_list)),
        broker_datas=tuple(_broker_data(b, f"{what}: brokerDatas[{i}]") for i, b in enumerate(broker_list)),
    )


def decode_cluster_info(body: bytes) -> ClusterInfo:
    """ClusterInfo (remoting.md 7.3)."""
    what = "cluster info"
    doc = parse_object(body, what)
    brokers: dict[str, BrokerData] = {}
    for name, raw in as_map(doc.get("brokerAddrTable"), f"{what}: brokerAddrTable").items():
        if not isinstance(name, str):
            raise ProtocolError(f"{what}: broker name {name!r} is not a string")
        brokers[name] = _broker_data(raw, f"{what}: broker {name!r}", name)
    clusters: dict[str, tuple[str, ...]] = {}
    for cluster, names in as_map(doc.get("clusterAddrTable"), f"{what}: clusterAddrTable").items():
        if not isinstance(cluster, str):
            raise ProtocolError(f"{what}: cluster name {cluster!r} is not a string")
        clusters[cluster] = _strings(names, f"{what}: cluster {cluster!r}")
    return ClusterInfo(brokers, clusters)


def _strings(value: Any, what: str) -> tuple[str, ...]:
    items = as_list(value, what)
    if not all(isinstance(s, str) for s in items):
        raise ProtocolError(f"{what}: expected an array of strings")
    return tuple(items)


def decode_name_list(body: bytes, key: str) -> list[str]:
    """TopicList (``topicList``), GroupList (``groupList``), consumer ids (``consumerIdList``), 7.4."""
    what = f"{key} body"
    return list(_strings(parse_object(body, what).get(key), what))


# ---------------------------------------------------------------------------------------------
# Offsets by queue (208, 202, 222)


def _plain_offsets(raw: Any) -> tuple[int, int, int, int | None] | None:
    """An OffsetWrapper whose fields are all JSON integers in range (what brokers write), read
    at once: (brokerOffset, consumerOffset, lastTimestamp, pullOffset); None for anything else."""
    if type(raw) is not dict or "$ref" in raw:
        return None
    fields = (raw.get("brokerOffset", 0), raw.get("consumerOffset", 0), raw.get("lastTimestamp", 0))
    pull = raw.get("pullOffset")
    low, high = INT64
    for v in (*fields, 0 if pull is None else pull):
        if type(v) is not int or not low <= v <= high:
            return None
    if "pullOffset" in raw and pull is None:
        return None  # an explicit null: the typed reading decides
    return (*fields, pull)


# ConsumeStats as every broker writes it (fastjson, bean fields in name order, no spaces): read by
# these two patterns, no JSON parser (the overview reads one body per group and topic). Anything
# else -- other fields, escapes, an empty broker name, a number out of range -- is parsed.
_STATS_AS_WRITTEN = lazy(
    r'\{"consumeTps":(-?\d{1,20}(?:\.\d{1,20})?(?:E-?\d{1,3})?),"offsetTable":\{(.*)\}\}', re.DOTALL
)
_ENTRY_AS_WRITTEN = lazy(
    "(" + MQ_KEY_AS_WRITTEN + "):"
    r'\{"brokerOffset":(-?\d{1,19}),"consumerOffset":(-?\d{1,19}),"lastTimestamp":(-?\d{1,19})'
    r'(?:,"pullOffset":(-?\d{1,19}))?\}(,|$)'
)
# an entry's own text beside its groups (and ',"pullOffset":' beside that group, when it is there)
_ENTRY_FIXED = len(':{"brokerOffset":,"consumerOffset":,"lastTimestamp":}')


def _consume_stats_as_written(body: bytes, group: str) -> ConsumeStats | None:
    """``decode_consume_stats``' answer for a body in the brokers' own form; None for any other.
    The entries are found in one pass; they are the whole table when their lengths add up to it
    (matches do not overlap, so they then tile it), each but the last ending in a comma."""
    try:
        m = _STATS_AS_WRITTEN.fullmatch(bytes(body).decode("utf-8"))
    except UnicodeDecodeError:
        return None
    if m is None:
        return None
    text = m.group(2)
    entries = _ENTRY_AS_WRITTEN.findall(text)
    if not entries and text:
        return None
    covered, table = 0, {}
    for key, broker, qid, topic, b, c, t, pull, sep in entries:
        covered += len(key) + len(b) + len(c) + len(t) + len(sep) + (len(pull) + 14 if pull else 0)
        mq = MessageQueue(topic, broker, int(qid))
        table[key] = (mq, int(b), int(c), int(t), int(pull) if pull else None)
    if covered + _ENTRY_FIXED * len(entries) != len(text) or (entries and entries[-1][8]):
        return None
    low, high = INT64
    for mq, b, c, t, pull in table.values():
        if mq.queue_id > INT32[1] or not (low <= b <= high and low <= c <= high and low <= t <= high):
            return None
        if pull is not None and not low <= pull <= high:
            return None
    rows = tuple(QueueStat(*v, min_offset=None, committed=None) for v in table.values())
    return ConsumeStats(group=group, queues=rows, consume_tps=float(m.group(1)))


def prepare_consume_stats() -> None:
    """Compile what ``decode_consume_stats`` reads a broker's body with (while it is on its way)."""
    compile_now(_STATS_AS_WRITTEN, _ENTRY_AS_WRITTEN)


def decode_consume_stats(body: bytes, group: str, broker_name_hint: str | None = None) -> ConsumeStats:
    """One broker's ConsumeStats (remoting.md 7.5), rows in the body's order.

    ``pullOffset`` is absent from 4.x and 5.0 brokers (-> None: unknown, not zero). ``min_offset``
    and ``committed`` are not in the body (None). ``broker_name_hint`` (the broker asked) fills a
    key without brokerName.
    """
    fast = _consume_stats_as_written(body, group)
    if fast is not None:
        return fast
    what = f"consume stats of {group!r}"
    doc = bean(parse_object_keyed(body, what), what)
    rows = []
    for key, raw in as_map(doc.get("offsetTable"), f"{what}: offsetTable").items():
        mq = message_queue(key, f"{what}: offsetTable key", broker_name_hint)
        offsets = _plain_offsets(raw)
        if offsets is None:  # anything but plain integers: the typed reading, with its errors
            w = f"{what}: queue {mq.topic}/{mq.broker_name}/{mq.queue_id}"
            wrapper = bean(raw, w)
            offsets = (
                get_int(wrapper, "brokerOffset", w),
                get_int(wrapper, "consumerOffset", w),
                get_int(wrapper, "lastTimestamp", w),
                get_int(wrapper, "pullOffset", w) if "pullOffset" in wrapper else None,
            )
        rows.append(QueueStat(mq, *offsets, min_offset=None, committed=None))
    return ConsumeStats(group=group, queues=tuple(rows), consume_tps=get_float(doc, "consumeTps", what))


def decode_topic_stats(body: bytes) -> dict[MessageQueue, TopicOffset]:
    """TopicStatsTable (remoting.md 7.9); ``topicPutTps`` is not kept."""
    what = "topic stats"
    doc = parse_object_keyed(body, what)
    out: dict[MessageQueue, TopicOffset] = {}
    for key, raw in as_map(doc.get("offsetTable"), f"{what}: offsetTable").items():
        mq = message_queue(key, f"{what}: offsetTable key")
        w = f"{what}: queue {mq.topic}/{mq.broker_name}/{mq.queue_id}"
        obj = bean(raw, w)
        out[mq] = TopicOffset(
            min_offset=get_int(obj, "minOffset", w),
            max_offset=get_int(obj, "maxOffset", w),
            last_update_timestamp=get_int(obj, "lastUpdateTimestamp", w),
        )
    return out


def decode_reset_offset_body(body: bytes) -> dict[MessageQueue, int]:
    """ResetOffsetBody (remoting.md 7.8): the Java map form or the C++ list form."""
    what = "reset offset body"
    table = parse_object(body, what).get("offsetTable")
    out: dict[MessageQueue, int] = {}
    if isinstance(table, list):
        # ResetOffsetBodyForC: [{"brokerName","offset","queueId","topic"}, ...]
        for i, raw in enumerate(table):
            w = f"{what}: offsetTable[{i}]"
            mq = message_queue(raw, w)
            out[mq] = get_int(bean(raw, w), "offset", w)
        return out
    for key, offset in as_map(table, f"{what}: offsetTable").items():
        mq = message_queue(key, f"{what}: offsetTable key")
        if offset is None:
            continue  # a null Long: nothing to reset that queue to
        out[mq] = to_int(offset, f"{what}: offset of {mq.topic}/{mq.broker_name}/{mq.queue_id}")
    return out


# ---------------------------------------------------------------------------------------------
# The broker's config tables (43, 21, 201): the same documents as its config/*.json files


_PLAIN_NAME = lazy(r"[%|a-zA-Z0-9_-]+")  # the broker's rule for topic and group names


def holds_broadcast_entry(body: bytes, group: str) -> bool:
    """Whether a GET_ALL_CONSUMER_OFFSET body may hold ``group``'s ``topic@group@broadcast``
    entries, without decoding it: False only when the key's tail is absent from a body that is
    one object with its braces balanced (a cut body is decoded, and said to be damaged). A name
    fastjson would escape is never ruled out (True)."""
    if _PLAIN_NAME.fullmatch(group) is None:
        return True
    text = body.strip()
    whole = text[:1] == b"{" and text[-1:] == b"}" and text.count(b"{") == text.count(b"}")
    return not whole or (b"@" + group.encode() + b'@broadcast"') in body


def decode_consumer_offsets_body(body: bytes) -> dict[str, dict[int, int]]:
    """GET_ALL_CONSUMER_OFFSET (remoting.md 7.10): ``"topic@group"`` -> {queueId: offset}."""
    from mqctl.store.offsets import decode_consumer_offsets

    return run_store_decoder(decode_consumer_offsets, body, "consumer offsets body").offsets


def decode_topic_configs(body: bytes) -> dict[str, TopicConfig]:
    """TopicConfigSerializeWrapper (remoting.md 7.11): topic -> TopicConfig, in the body's order."""
    from mqctl.store.metadata import decode_topics

    return run_store_decoder(decode_topics, body, "topic configs body")


def decode_topic_config_names(body: bytes) -> frozenset[str]:
    """The topic names of a TopicConfigSerializeWrapper (remoting.md 7.11), their configs unread."""
    from mqctl.store.metadata import decode_topic_names

    return frozenset(run_store_decoder(decode_topic_names, body, "topic configs body"))


def subscription_group_from_props(name: str, props: Mapping[str, Any]) -> SubscriptionGroup:
    """A SubscriptionGroupConfig's properties -> SubscriptionGroup (the store's reading, Java defaults)."""
    from mqctl.store.metadata import subscription_group

    if not isinstance(props, Mapping):
        raise ProtocolError(f"subscription group {name!r}: expected an object")
    try:
        return subscription_group(name, props, "subscription groups body")
    except StoreCorruptError as exc:
        raise ProtocolError(exc.message) from None


def decode_subscription_group_names(body: bytes) -> frozenset[str]:
    """The group names of a SubscriptionGroupWrapper (remoting.md 7.12), their configs unread."""
    from mqctl.store.metadata import decode_subscription_groups

    return frozenset(run_store_decoder(decode_subscription_groups, body, "subscription groups body"))


def decode_subscription_groups_body(body: bytes) -> dict[str, SubscriptionGroup]:
    """SubscriptionGroupWrapper (remoting.md 7.12): group -> SubscriptionGroup, in the body's order."""
    from mqctl.store.metadata import decode_subscription_groups

    groups = run_store_decoder(decode_subscription_groups, body, "subscription groups body")
    return {name: subscription_group_from_props(name, props) for name, props in groups.items()}
