"""The groups overview's consume stats from one GET_BROKER_CONSUME_STATS (317) per broker
instead of one GET_CONSUME_STATS (208) per group and broker.

For every group of its subscription-group table, 317 answers what 208 answers for that group
(AdminBrokerProcessor.fetchAllConsumeStatsInBroker vs getConsumeStats, 4.9.7, 5.3.3 and 5.5.1):
the same topics (the group's committed ones, less those an online group does not subscribe to,
less those without a topic config), the same max offset, committed offset (negative read as 0)
and store time of each queue, the same TPS (one figure per topic that 208 adds up). Where it
does not, the group's 208 on that broker is asked as before:

* 317 counts a topic's *write* queues, 208 its *read* queues. The broker's own topic configs
  (GET_ALL_TOPIC_CONFIG, 21, asked with 317) correct it: queues at or above the read count are
  dropped; a topic with fewer write than read queues lacks queues -> 208. So does an answer
  whose queues are not exactly the config's (a config changed between the two requests), a
  topic without a config, and a per-topic entry with no queue at all (its topic is unknown);
* a 5.x static topic (logical queues) keeps a negative committed offset in 208 -> 208;
* a group missing from the table (no subscription config on that broker) -> 208, unless the
  broker's offset table (GET_ALL_CONSUMER_OFFSET, read anyway) has no topic of the group: then
  208 would answer empty stats, and they are empty here without asking;
* a broker that answers 317 or 21 with an error code (an ACL that refuses it, a broker
  without it) -> 208 for every group on it (and 201 for its group list);
* 317 carries no pull offsets (its OffsetWrapper leaves pullOffset at 0): ``pull_offset`` is
  None (unknown), and ``groups_overview(detail=True)``, which reports them, keeps 208.

A broker that cannot be reached fails every group's stats on it with that error, as 208 would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from mqctl.errors import MqctlError
from mqctl.model import ConsumeStats
from mqctl.remoting.codes import RequestCode, ResponseCode

if TYPE_CHECKING:
    from mqctl.backends.live_net import Request
    from mqctl.model import QueueStat
    from mqctl.remoting.bodies_brokerstats import BrokerStats, QueueCounts
    from mqctl.remoting.frame import RemotingCommand

# What one broker's round gave: its 317 answer with its queue counts; the error that stopped
# it from answering (every group fails on it); or None: ask 208 for each group (and 201).
Answer = tuple["BrokerStats", "QueueCounts"] | MqctlError | None


def requests(brokers: Sequence[str]) -> list[Request]:
    """317 and 21 for each broker (isOrder false: every topic, as 208 reads them)."""
    out: list[Request] = []
    for b in brokers:
        out += [
            (b, RequestCode.GET_BROKER_CONSUME_STATS, {"isOrder": "false"}),
            (b, RequestCode.GET_ALL_TOPIC_CONFIG, {}),
        ]
    return out


def answers(brokers: Sequence[str], results: Sequence[RemotingCommand | MqctlError]) -> dict[str, Answer]:
    """Each broker's Answer from its two results (in ``requests``' order)."""
    from mqctl.errors import AccessDeniedError
    from mqctl.remoting.bodies_brokerstats import decode_broker_consume_stats, decode_queue_counts

    out: dict[str, Answer] = {}
    for i, b in enumerate(brokers):
        stats, configs = results[2 * i], results[2 * i + 1]
        if isinstance(stats, AccessDeniedError) or isinstance(configs, AccessDeniedError):
            # An account without the cluster-wide rights (5.x ACL 2.0 treats 317 and 21 as admin
            # requests) may still read each group: 208 per group, whose own answers then tell.
            out[b] = None
        elif isinstance(stats, MqctlError):
            out[b] = stats
        elif isinstance(configs, MqctlError):
            out[b] = configs
        elif stats.code != ResponseCode.SUCCESS or configs.code != ResponseCode.SUCCESS:
            out[b] = None
        else:
            try:
                out[b] = (decode_broker_consume_stats(stats.body, b), decode_queue_counts(configs.body))
            except MqctlError:
                out[b] = None  # a body that does not read: 208, whose own errors then tell
    return out


def groups_with_topics(table: dict[str, dict[int, int]]) -> set[str]:
    """The groups a broker's offset table gives topics to (ConsumerOffsetManager.whichTopicByConsumer:
    keys that Java's ``split("@")`` cuts into exactly two parts, the group second)."""
    out = set()
    for key in table:
        parts = key.split("@")
        while parts and not parts[-1]:
            parts.pop()  # String.split drops trailing empty strings
        if len(parts) == 2:
            out.add(parts[1])
    return out


def stats_of(group: str, answer: Answer, has_topics: set[str] | None) -> ConsumeStats | MqctlError | None:
    """The group's stats on one broker as 208 would answer them, or None: ask 208.
    ``has_topics``: the groups the broker's offset table gives topics to (None: not read)."""
    if answer is None or isinstance(answer, MqctlError):
        return answer
    stats, counts = answer
    parts = stats.groups.get(group)
    if parts is None:
        return ConsumeStats(group, ()) if has_topics is not None and group not in has_topics else None
    queues: list[QueueStat] = []
    tps = 0.0
    for part in parts:
        tps += part.consume_tps  # 208 adds each topic's TPS the same way, in the same topic order
        topics = {q.queue.topic for q in part.queues}
        if len(topics) != 1:
            return None
        (topic,) = topics
        if topic in counts.static or topic not in counts.counts:
            return None
        read, write = counts.counts[topic]
        if write < read or sorted(q.queue.queue_id for q in part.queues) != list(range(write)):
            return None
        queues += [q for q in part.queues if q.queue.queue_id < read]
    return ConsumeStats(group, tuple(queues), tps)
