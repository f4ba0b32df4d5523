"""Clients, subscriptions and groups: what only a running cluster knows about its consumers
(connections, running info), the brokers' group tables, and the groups overview."""

from __future__ import annotations

from mqctl.model.queues import PERM_READ, RETRY_PREFIX, BrokerFailure, ConsumeStats, MessageQueue  # noqa: F401
from mqctl.records import record


@record(frozen=True, slots=True)
class Connection:
    """One consumer client connected to a broker (ConsumerConnection.connectionSet)."""

    client_id: str
    client_addr: str
    language: str
    version: int


@record(frozen=True, slots=True)
class Subscription:
    """A group's subscription to a topic (SubscriptionData)."""

    topic: str
    sub_string: str | None
    expression_type: str | None = "TAG"
    tags: tuple[str, ...] = ()
    codes: tuple[int, ...] = ()
    sub_version: int = 0


@record(frozen=True, slots=True)
class ConsumerConnection:
    """A group's connections and subscriptions (GET_CONSUMER_CONNECTION_LIST)."""

    group: str
    connections: tuple[Connection, ...]
    subscriptions: tuple[Subscription, ...]  # in the broker's order
    consume_type: str | None = None  # CONSUME_PASSIVELY (push) | CONSUME_ACTIVELY (pull) | CONSUME_POP
    message_model: str | None = None  # CLUSTERING | BROADCASTING
    consume_from_where: str | None = None
    via: str | None = None  # the address asked (-b), when not a broker of the group's route
    via_proxy: bool = False  # that address is no broker of the cluster: a rocketmq-proxy
    via_version: int | None = None  # the MQVersion the answer came with (a proxy's own)


@record(frozen=True, slots=True)
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


@record(frozen=True, slots=True)
class ConsumerRunningInfo:
    """What one client reports about itself (GET_CONSUMER_RUNNING_INFO, relayed by a broker)."""

    client_id: str
    properties: tuple[tuple[str, str], ...] = ()
    queues: tuple[tuple[MessageQueue, ProcessQueueInfo], ...] = ()  # push/pull consumers' mqTable
    pop_queues: tuple[MessageQueue, ...] = ()  # pop consumers' mqPopTable keys
    subscriptions: tuple[Subscription, ...] = ()

    def property(self, name: str) -> str | None:
        return next((v for k, v in self.properties if k == name), None)


@record(frozen=True, slots=True)
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


@record(frozen=True, slots=True)
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


@record(frozen=True, slots=True)
class GroupRef:
    """A group of the overview, with where it was found (``FOUND_*``), in mqadmin's row order."""

    name: str
    found_in: tuple[str, ...]


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


@record(frozen=True, slots=True)
class GroupOverview:
    """One group of the overview: where it was found, its consume stats and, live, its clients."""

    ref: GroupRef
    stats: ConsumeStats | None  # None when they could not be read (see failure)
    connection: ConsumerConnection | None = None  # None: no client online, or a store
    failure: str | None = None
    failures: tuple[BrokerFailure, ...] = ()  # with failure: the brokers that did not answer, and why
