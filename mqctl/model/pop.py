"""POP consumption (RocketMQ 5: gRPC clients through a proxy): what marks a group as POP and what
its numbers mean.

A POP consumer does not pull queues it owns: it asks a broker to *pop* messages, which the broker
hands out with an invisible time and the client acknowledges one by one. The broker commits the
group's offset when it pops (``PopBufferMergeService.commitOffset`` once the checkpoint is stored),
not when the client acknowledges; a message not acknowledged within its invisible time is revived
into the group's POP retry topic (``PopReviveService.reviveRetry``), ``%RETRY%<group>_<topic>``
(v1, the default of 5.3.3 and 5.5.1) or ``%RETRY%<group>+<topic>`` (v2, ``enableRetryTopicV2``).
"""

from __future__ import annotations

from mqctl.model.queues import RETRY_PREFIX, MessageQueue, QueueStat
from mqctl.records import record

# What a broker's compensation table (ConsumerManager.compensateBasicConsumerInfo) names a POP
# group's consume type; the proxy reports its gRPC clients as CONSUME_ACTIVELY (SimpleConsumer) or
# CONSUME_PASSIVELY (PushConsumer) instead.
CONSUME_POP = "CONSUME_POP"

# Why the in-flight count (popped, not yet acknowledged) is not a number over the wire.
INFLIGHT_UNKNOWN = (
    "unknown for POP: the broker counts popped-but-unacknowledged messages only in memory "
    "(PopInflightMessageCounter, exported to its metrics) and answers no request with it"
)


@record(frozen=True, slots=True)
class PopRetryTopic:
    """A group's POP retry topic for one of its topics."""

    name: str  # %RETRY%group_topic (v1) or %RETRY%group+topic (v2)
    group: str
    topic: str
    version: int  # 1 or 2


def pop_retry_name(group: str, topic: str, version: int = 1) -> str:
    """KeyBuilder.buildPopRetryTopic: v1 ``%RETRY%group_topic``, v2 ``%RETRY%group+topic``."""
    return f"{RETRY_PREFIX}{group}{'+' if version == 2 else '_'}{topic}"


def parse_pop_retry(
    name: str, group: str, topics: set[str] | frozenset[str] | None = None
) -> PopRetryTopic | None:
    """``name`` as a POP retry topic of ``group``, or None. v1 names are ambiguous (``_`` is legal in
    names): with ``topics`` the part after ``group_`` must be one of them."""
    for version, sep in ((2, "+"), (1, "_")):
        head = f"{RETRY_PREFIX}{group}{sep}"
        if name.startswith(head) and len(name) > len(head):
            topic = name[len(head) :]
            if topics is not None and topic not in topics:
                continue
            return PopRetryTopic(name, group, topic, version)
    return None


def pop_owner(
    name: str, groups: set[str] | frozenset[str], topics: set[str] | frozenset[str]
) -> PopRetryTopic | None:
    """``name`` as the POP retry topic of one of ``groups`` on one of ``topics`` (the owner is the
    name minus ``_topic`` / ``+topic``), or None. mqadmin strips only the prefix and lists
    ``group_topic`` as a group of its own (KeyBuilder.parseGroup keeps v1 names whole)."""
    if not name.startswith(RETRY_PREFIX):
        return None
    for topic in sorted(topics, key=len, reverse=True):
        for version, sep in ((2, "+"), (1, "_")):
            tail = f"{sep}{topic}"
            owner = name[len(RETRY_PREFIX) : -len(tail)]
            if name.endswith(tail) and owner in groups:
                return PopRetryTopic(name, owner, topic, version)
    return None


@record(frozen=True, slots=True)
class PopGroup:
    """Why a group is taken as a POP group, and what the brokers keep for it.

    ``retry_topics``: its POP retry topics (from the brokers' topic configs); ``recent``: topics the
    brokers' compensation table holds a subscription for (a POP or heartbeat-less pull request in
    the last ``subscriptionExpiredTimeout``, 10 minutes by default), None when not asked (a store);
    ``classic_retry``: ``%RETRY%group`` exists too (a remoting client heartbeated once);
    ``expressions``: topic -> the subscription expression the brokers remember.
    """

    group: str
    retry_topics: tuple[PopRetryTopic, ...] = ()
    recent: tuple[str, ...] | None = None
    classic_retry: bool = False
    expressions: tuple[tuple[str, str], ...] = ()
    server_side_reset: tuple[tuple[str, bool], ...] = ()  # broker -> useServerSideResetOffset

    @property
    def certain(self) -> bool:
        """A POP retry topic exists: the broker revived a popped message for this group."""
        return bool(self.retry_topics)

    @property
    def retry_names(self) -> frozenset[str]:
        return frozenset(r.name for r in self.retry_topics)

    @property
    def active(self) -> bool:
        """Popped (or pulled without a heartbeat) within the brokers' last 10 minutes."""
        return bool(self.recent)

    def evidence(self) -> str:
        """Why mqctl takes the group as POP, in a few words."""
        parts = []
        if self.retry_topics:
            parts.append("POP retry topic " + ", ".join(r.name for r in self.retry_topics))
        if self.recent:
            parts.append(
                "the brokers hold its subscription to " + ", ".join(self.recent) + " without a client"
            )
        return "; ".join(parts) or "no evidence"


@record(frozen=True, slots=True)
class PopView:
    """consumerProgress of a POP group: what its numbers mean.

    ``waiting``: messages never popped yet (the topics' Diff: the broker commits at pop time);
    ``retry_backlog``: per POP retry topic, messages revived (popped, not acknowledged in time) and
    not popped again yet; ``inflight``: popped and not yet acknowledged, None when it cannot be
    known (``inflight_note`` says why).
    """

    info: PopGroup
    waiting: int
    retry_backlog: tuple[tuple[str, int], ...] = ()
    inflight: int | None = None
    inflight_note: str = INFLIGHT_UNKNOWN
    retry_queues: tuple[QueueStat, ...] = ()  # the POP retry topics' queues (where STUCK shows)
    inflight_by_queue: tuple[tuple[MessageQueue, int], ...] = ()  # queues with messages in flight

    @property
    def retry_total(self) -> int:
        return sum(n for _t, n in self.retry_backlog)

    @property
    def not_done(self) -> int | None:
        """Messages not yet consumed for good: waiting + retry backlog + in flight (None: unknown)."""
        return None if self.inflight is None else self.waiting + self.retry_total + self.inflight


# The brokers' timer wheel: a POP checkpoint ("ck") and each acknowledgement ("ack", "bAck") are
# timer messages for the revive topic, kept in rmq_sys_wheel_timer until their deliver time (the
# checkpoint's revive time): PopMessageProcessor.buildCkMsg, AckMessageProcessor.
TIMER_TOPIC = "rmq_sys_wheel_timer"
REVIVE_TOPIC_PREFIX = "rmq_sys_REVIVE_LOG_"
CK_TAG, ACK_TAG, BATCH_ACK_TAG = "ck", "ack", "bAck"


@record(frozen=True, slots=True)
class PopCheckpoint:
    """A pop of ``offsets`` of one queue at ``pop_time``, invisible for ``invisible_time`` ms
    (PopCheckPoint: so, n, d, pt, it, t, q, c, bn)."""

    broker: str
    topic: str
    queue_id: int
    group: str
    start_offset: int
    pop_time: int
    invisible_time: int
    offsets: tuple[int, ...]

    @property
    def revive_time(self) -> int:
        return self.pop_time + self.invisible_time

    @property
    def key(self) -> tuple[str, int, int, int]:
        return (self.topic, self.queue_id, self.start_offset, self.pop_time)


@record(frozen=True, slots=True)
class PopAck:
    """Acknowledgements of ``offsets`` popped by the checkpoint with the same key (AckMsg: ao, so,
    pt, t, q, c; BatchAckMsg: aol)."""

    broker: str
    topic: str
    queue_id: int
    group: str
    start_offset: int
    pop_time: int
    offsets: tuple[int, ...]

    @property
    def key(self) -> tuple[str, int, int, int]:
        return (self.topic, self.queue_id, self.start_offset, self.pop_time)


@record(frozen=True, slots=True)
class PopWheel:
    """A group's checkpoints and acknowledgements in the brokers' timer wheels, from
    ``since_ms`` on (per broker: the store time the scan went back to, and whether the entry
    limit cut it short)."""

    checkpoints: tuple[PopCheckpoint, ...]
    acks: tuple[PopAck, ...]
    scanned_from: tuple[tuple[str, int], ...] = ()  # broker -> oldest store time read
    capped: tuple[str, ...] = ()  # brokers whose window held more entries than the limit
