"""Plain data passed between layers (backends -> ops -> render)."""

from __future__ import annotations

from dataclasses import dataclass, field

PERM_READ = 4
PERM_WRITE = 2

RETRY_PREFIX = "%RETRY%"
DLQ_PREFIX = "%DLQ%"


@dataclass(frozen=True, order=False, slots=True)
class MessageQueue:
    """RocketMQ's MessageQueue: topic, brokerName, queueId."""

    topic: str
    broker_name: str
    queue_id: int

    def sort_key(self) -> tuple[bytes, bytes, int]:
        # Java String.compareTo compares UTF-16 code units; utf-16-be bytes order the same way.
        return (self.topic.encode("utf-16-be"), self.broker_name.encode("utf-16-be"), self.queue_id)


@dataclass(frozen=True, slots=True)
class TopicConfig:
    name: str
    read_queue_nums: int = 16
    write_queue_nums: int = 16
    perm: int = 6
    order: bool = False
    topic_filter_type: str = "SINGLE_TAG"
    topic_sys_flag: int = 0
    attributes: dict[str, str] = field(default_factory=dict)

    @property
    def readable(self) -> bool:
        return bool(self.perm & PERM_READ)


@dataclass(frozen=True, slots=True)
class QueueOffsets:
    """min and max (next offset to be written) of one consume queue."""

    min_offset: int
    max_offset: int


@dataclass(frozen=True, slots=True)
class ProgressRow:
    """One consumerProgress row, with mqctl's extra columns."""

    topic: str
    broker_name: str
    queue_id: int
    broker_offset: int
    consumer_offset: int
    min_offset: int
    last_timestamp: int  # epoch ms of the message at consumerOffset-1, 0 when none
    inflight: int = 0
    client_ip: str | None = None
    committed: bool = True  # False when the group has no committed offset for this queue
    oldest_unconsumed_timestamp: int = 0  # store time of the first unconsumed message, 0 when none
    lag_ms: int = 0  # now - oldest_unconsumed_timestamp, 0 when nothing is unconsumed
    matched_diff: int | None = None  # --tags: exact count of unconsumed messages whose tag matches

    @property
    def diff(self) -> int:
        """mqadmin's Diff: negative when the committed offset lies above the broker's max."""
        return self.broker_offset - self.consumer_offset

    @property
    def lag(self) -> int:
        """Messages left to consume: the diff, never below zero (what totals and gates add up)."""
        return max(self.broker_offset - self.consumer_offset, 0)

    @property
    def above_max(self) -> bool:
        """Committed offset beyond the queue's end (a recreated queue, a bad reset)."""
        return self.consumer_offset > self.broker_offset

    @property
    def queue(self) -> MessageQueue:
        return MessageQueue(self.topic, self.broker_name, self.queue_id)


# ------------------------------------------------------------------------------------------------
# What a broker answers (the Backend Protocol's result types). Field names follow the broker's
# own JSON where one exists; every backend fills the same types.


@dataclass(frozen=True, slots=True)
class QueueData:
    """One broker's share of a topic in a route (TopicRouteData.queueDatas)."""

    broker_name: str
    read_queue_nums: int
    write_queue_nums: int
    perm: int = 6
    topic_sys_flag: int = 0

    @property
    def readable(self) -> bool:
        return bool(self.perm & PERM_READ)


@dataclass(frozen=True, slots=True)
class BrokerData:
    """A broker group of a route (TopicRouteData.brokerDatas): broker id -> "ip:port"; id 0 = master."""

    broker_name: str
    cluster: str = ""
    addrs: tuple[tuple[int, str], ...] = ()

    @property
    def master_addr(self) -> str | None:
        return next((a for i, a in self.addrs if i == 0), None)

    def select_addr(self) -> str | None:
        """The master if there is one, else any other (BrokerData.selectBrokerAddr)."""
        return self.master_addr or (self.addrs[0][1] if self.addrs else None)


@dataclass(frozen=True, slots=True)
class TopicRoute:
    """A topic's route, in the name server's order (a store backend reproduces that order)."""

    topic: str
    queue_datas: tuple[QueueData, ...]
    broker_datas: tuple[BrokerData, ...] = ()

    @property
    def broker_names(self) -> tuple[str, ...]:
        return tuple(q.broker_name for q in self.queue_datas)


@dataclass(frozen=True, slots=True)
class QueueStat:
    """One queue of a group's consume stats (GET_CONSUME_STATS' OffsetWrapper, plus min offset)."""

    queue: MessageQueue
    broker_offset: int  # next offset to be written (max), clamped >= 0
    consumer_offset: int  # committed offset; "none" reads as 0, as the broker clamps it
    last_timestamp: int  # store time (ms) of the message at consumer_offset - 1; 0 when none
    pull_offset: int = 0  # max(consumer offset, last pull offset); 0 when the backend cannot know
    min_offset: int | None = None  # None when not asked for (live: one more request per topic)
    committed: bool | None = True  # False: the group has no committed offset here; None: unknown


@dataclass(frozen=True, slots=True)
class BrokerFailure:
    """A broker that could not answer one question: its name, address and why."""

    broker_name: str
    addr: str | None
    message: str
    exit_status: int = 4


@dataclass(frozen=True, slots=True)
class ConsumeStats:
    """A group's consume stats merged over the brokers that answered (examineConsumeStats)."""

    group: str
    queues: tuple[QueueStat, ...]
    consume_tps: float = 0.0
    failures: tuple[BrokerFailure, ...] = ()


@dataclass(frozen=True, slots=True)
class QueueOffset:
    """A position in a queue: (queue, offset)."""

    queue: MessageQueue
    offset: int


@dataclass(frozen=True, slots=True)
class QueueSpan:
    """A half-open range [start, end) of queue offsets."""

    queue: MessageQueue
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class TagCount:
    """Tag-hash matches in a span; with verification, the matches whose real tag differs too."""

    matched: int
    collisions: int | None = None  # None unless verified against the messages themselves


@dataclass(frozen=True, slots=True)
class Connection:
    """One consumer client connected to a broker (ConsumerConnection.connectionSet)."""

    client_id: str
    client_addr: str
    language: str
    version: int


@dataclass(frozen=True, slots=True)
class Subscription:
    """A group's subscription to a topic (SubscriptionData)."""

    topic: str
    sub_string: str | None
    expression_type: str | None = "TAG"
    tags: tuple[str, ...] = ()
    codes: tuple[int, ...] = ()
    sub_version: int = 0


@dataclass(frozen=True, slots=True)
class ConsumerConnection:
    """A group's connections and subscriptions (GET_CONSUMER_CONNECTION_LIST)."""

    group: str
    connections: tuple[Connection, ...]
    subscriptions: tuple[Subscription, ...]  # in the broker's order
    consume_type: str | None = None  # CONSUME_PASSIVELY (push) | CONSUME_ACTIVELY (pull) | CONSUME_POP
    message_model: str | None = None  # CLUSTERING | BROADCASTING
    consume_from_where: str | None = None


@dataclass(frozen=True, slots=True)
class ProcessQueueInfo:
    """A client's view of one assigned queue (ConsumerRunningInfo.mqTable value)."""

    commit_offset: int = 0
    cached_msg_min_offset: int = 0
    cached_msg_max_offset: int = 0
    cached_msg_count: int = 0
    cached_msg_size_mib: int = 0
    last_pull_timestamp: int = 0
    last_consume_timestamp: int = 0
    dropped: bool = False
    locked: bool = False


@dataclass(frozen=True, slots=True)
class ConsumerRunningInfo:
    """What one client reports about itself (GET_CONSUMER_RUNNING_INFO, relayed by a broker)."""

    client_id: str
    properties: tuple[tuple[str, str], ...] = ()
    queues: tuple[tuple[MessageQueue, ProcessQueueInfo], ...] = ()  # push/pull consumers' mqTable
    pop_queues: tuple[MessageQueue, ...] = ()  # pop consumers' mqPopTable keys
    subscriptions: tuple[Subscription, ...] = ()

    def property(self, name: str) -> str | None:
        return next((v for k, v in self.properties if k == name), None)


@dataclass(frozen=True, slots=True)
class SubscriptionGroup:
    """A broker's subscription-group config (subscriptionGroup.json / GET_ALL_SUBSCRIPTIONGROUP_CONFIG)."""

    name: str
    consume_enable: bool = True
    consume_broadcast_enable: bool = True
    consume_message_orderly: bool = False
    retry_queue_nums: int = 1
    retry_max_times: int = 16
    broker_id: int = 0
    group_sys_flag: int = 0


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """The parts of a stored message an operator looks at (the stuck message, --verify-tags)."""

    queue: MessageQueue
    queue_offset: int
    physical_offset: int
    msg_id: str  # the offset message id: store host + commit-log offset, upper-case hex
    store_timestamp: int
    born_timestamp: int
    born_host: str
    store_host: str
    reconsume_times: int
    size: int
    tags: str | None = None
    keys: str | None = None
    unique_key: str | None = None  # UNIQ_KEY: the client-generated id mqadmin and consoles show
    properties: tuple[tuple[str, str], ...] = ()


# Where the groups overview found a group: mqadmin lists groups through their retry topics; the
# brokers' offset tables (and, live, their subscription-group tables) know the rest.
FOUND_RETRY_TOPIC = "retryTopic"
FOUND_OFFSETS = "offsets"
FOUND_SUBSCRIPTION = "subscriptionGroup"


@dataclass(frozen=True, slots=True)
class GroupRef:
    """A group of the overview, with where it was found (``FOUND_*``), in mqadmin's row order."""

    name: str
    found_in: tuple[str, ...]

    @property
    def listed_by_mqadmin(self) -> bool:
        return FOUND_RETRY_TOPIC in self.found_in


def group_of_retry_topic(topic: str) -> str | None:
    """The group a retry topic belongs to, as 5.2+ mqadmin parses it (KeyBuilder.parseGroup): a pop
    retry topic v2 ``%RETRY%group+topic`` names its group before the ``+``."""
    if not topic.startswith(RETRY_PREFIX):
        return None
    parts = topic.split("+")
    name = parts[0] if "+" in topic and len(parts) == 2 else topic
    return name[len(RETRY_PREFIX) :] or None
