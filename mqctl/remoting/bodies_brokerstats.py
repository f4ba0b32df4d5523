"""What the groups overview asks each broker once: GET_BROKER_CONSUME_STATS (317), the consume
stats of every subscription group of the broker, and the queue counts of GET_ALL_TOPIC_CONFIG
(21), which say how far 317's answer is GET_CONSUME_STATS' (208) for the same group.

317's body is a ConsumeStatsList: ``consumeStatsList`` holds one single-entry map per
subscription group, group -> one ConsumeStats per topic (remoting.md 7.5 each), plus the
broker's address and diff totals, which are not kept.
"""

from __future__ import annotations

from typing import Any

from mqctl.model import ConsumeStats, MessageQueue
from mqctl.records import record
from mqctl.remoting.bodies import consume_stats_of
from mqctl.remoting.bodies_json import INT32, as_list, as_map, bean, get_int, parse_object, parse_object_keyed


@record(frozen=True, slots=True)
class BrokerStats:
    """One broker's 317 answer: every subscription group (the broker's whole table, in the
    body's order) with its per-topic consume stats (no pull offsets: 317 leaves them at 0)."""

    groups: dict[str, list[ConsumeStats]]


@record(frozen=True, slots=True)
class QueueCounts:
    """One broker's topic configs as the two requests read them: topic -> (read queue number,
    write queue number), and its static topics (5.x logical queues, topicQueueMappingDetailMap)."""

    counts: dict[str, tuple[int, int]]
    static: frozenset[str]


def decode_broker_consume_stats(body: bytes, broker_name: str) -> BrokerStats:
    """GET_BROKER_CONSUME_STATS (317) -> BrokerStats. ``broker_name`` fills a queue key without
    brokerName, as for 208."""
    what = "broker consume stats"
    doc = parse_object_keyed(body, what)
    keys: dict[Any, MessageQueue] = {}
    groups: dict[str, list[ConsumeStats]] = {}
    for entry in as_list(doc.get("consumeStatsList"), f"{what}: consumeStatsList"):
        for group, parts in as_map(entry, f"{what}: consumeStatsList entry").items():
            w = f"{what} of {group!r}"
            groups[str(group)] = [
                consume_stats_of(p, str(group), w, broker_name, keys, pull_offsets=False)
                for p in as_list(parts, w)
            ]
    return BrokerStats(groups)


def decode_queue_counts(body: bytes) -> QueueCounts:
    """GET_ALL_TOPIC_CONFIG (21) -> QueueCounts; a count the JSON leaves out is TopicConfig's
    Java default, 16 (as fastjson binds it)."""
    what = "topic configs body"
    doc = parse_object(body, what)
    counts: dict[str, tuple[int, int]] = {}
    for name, raw in as_map(doc.get("topicConfigTable"), f"{what}: topicConfigTable").items():
        w = f"{what}: topic {name!r}"
        config = bean(raw, w)
        counts[str(name)] = (
            get_int(config, "readQueueNums", w, 16, INT32),
            get_int(config, "writeQueueNums", w, 16, INT32),
        )
    mappings = ("topicQueueMappingDetailMap", "topicQueueMappingInfoMap")
    static = frozenset(str(t) for key in mappings for t in as_map(doc.get(key), f"{what}: {key}"))
    return QueueCounts(counts, static)
