"""What a broker answers: the Backend Protocol's result types, filled alike by every backend.

Field names follow the broker's own JSON where one exists (GET_CONSUME_STATS, TopicRouteData,
ConsumerConnection, ...)."""

from __future__ import annotations

from dataclasses import dataclass, field

PERM_READ = 4
PERM_WRITE = 2

RETRY_PREFIX = "%RETRY%"


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
    pull_offset: int | None = None  # max(consumer offset, last pull offset); None: not known (a store, 4.x)
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


# The broker's predefined groups (rocketmq-store.md 8.2): not users' groups, left out of overviews.
SYSTEM_GROUPS = frozenset(
    {
        "DEFAULT_CONSUMER",
        "DEFAULT_PRODUCER",
        "TOOLS_CONSUMER",
        "SCHEDULE_CONSUMER",
        "FILTERSRV_CONSUMER",
        "__MONITOR_CONSUMER",
        "CLIENT_INNER_PRODUCER",
        "SELF_TEST_P_GROUP",
        "SELF_TEST_C_GROUP",
        "CID_ONS-HTTP-PROXY",
        "CID_ONSAPI_PERMISSION",
        "CID_ONSAPI_OWNER",
        "CID_ONSAPI_PULL",
        "CID_RMQ_SYS_TRANS",
    }
)


def is_system_group(name: str) -> bool:
    return name in SYSTEM_GROUPS or name.startswith("CID_RMQ_SYS_")


def group_of_retry_topic(topic: str) -> str | None:
    """The group a retry topic belongs to, as 5.2+ mqadmin parses it (KeyBuilder.parseGroup): a pop
    retry topic v2 ``%RETRY%group+topic`` names its group before the ``+``."""
    if not topic.startswith(RETRY_PREFIX):
        return None
    parts = topic.split("+")
    name = parts[0] if "+" in topic and len(parts) == 2 else topic
    return name[len(RETRY_PREFIX) :] or None


@dataclass(frozen=True, slots=True)
class QueueTime:
    """A time to search a queue for, with the 5.x broker's boundary (``lower``: the first message
    stored at or after it; ``upper``: the last one stored at or before it)."""

    queue: MessageQueue
    timestamp: int
    boundary: str = "lower"


@dataclass(frozen=True, slots=True)
class OffsetChange:
    """One queue of an offset write: committed offset before (-1 none) and after (-1 removes)."""

    queue: MessageQueue
    before: int
    after: int


@dataclass(frozen=True, slots=True)
class BackendTarget:
    """Which cluster a backend reads: enough to open it again (a journal records it for undo)."""

    kind: str  # "store" | "live"
    stores: tuple[tuple[str, str], ...] = ()  # store: (broker name, store root)
    namesrv: str | None = None  # live: "host:port;host:port"

    def describe(self) -> str:
        if self.kind == "store":
            return ", ".join(f"{n}={p}" for n, p in self.stores)
        return f"name server {self.namesrv}"


@dataclass(frozen=True, slots=True)
class BackendWarning:
    """Something a backend noticed while answering ("consumerOffset.json is empty; using .bak")."""

    source: str  # a broker name, an address, or "" for the backend as a whole
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.message}" if self.source else self.message


@dataclass(frozen=True, slots=True)
class GroupOverview:
    """One group of the overview: where it was found, its consume stats and, live, its clients."""

    ref: GroupRef
    stats: ConsumeStats | None  # None when they could not be read (see failure)
    connection: ConsumerConnection | None = None  # None: no client online, or a store
    failure: str | None = None
