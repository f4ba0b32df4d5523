"""Queues and what brokers answer about them: routes, topic configs, consume stats; and what names
a backend (BackendTarget, BackendWarning). The types nearly every command needs (positions in
queues are in ``positions``, offset writes in ``writes``: a read loads neither)."""

from __future__ import annotations

from enum import Enum

from mqctl.records import field, record

PERM_READ = 4

PERM_WRITE = 2

RETRY_PREFIX = "%RETRY%"

# Backend.store_times' answer for a message that should exist but cannot be read (a damaged store:
# a missing or zeroed commit log); -1 is "no message there" by the broker's own rules.
TIME_UNREADABLE = -2


def java_compare_key(s: str) -> str:
    """A sort key ordering strings as Java's ``String.compareTo`` does: by UTF-16 code units. Code
    point order differs only where a character outside the BMP meets one in U+E000-U+FFFF (its
    surrogates sort below); such characters become their surrogate pair, so the key is ``s``
    itself for nearly every name (no codec: looking up the UTF-16 one costs a command ~1 ms)."""
    if s.isascii() or max(s) <= "\uffff":
        return s
    return "".join(c if c <= "\uffff" else _surrogates(ord(c) - 0x10000) for c in s)


def _surrogates(v: int) -> str:
    return chr(0xD800 | v >> 10) + chr(0xDC00 | v & 0x3FF)


# Java's integer ranges: the broker holds an offset in a long, a queue id in an int.
JAVA_INT = (-(2**31), 2**31 - 1)
JAVA_LONG = (-(2**63), 2**63 - 1)


def java_split(s: str, sep: str) -> list[str]:
    """Java's ``s.split(sep)`` for a one-character literal ``sep``: trailing empty strings are
    dropped (``"a@@".split("@")`` is ``["a"]``, ``"@"`` gives no part at all), and a string
    without the separator, even an empty one, is a one-item list."""
    if sep not in s:
        return [s]
    parts = s.split(sep)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


@record(frozen=True, slots=True)
class MessageQueue:
    """RocketMQ's MessageQueue: topic, brokerName, queueId."""

    topic: str
    broker_name: str
    queue_id: int

    def sort_key(self) -> tuple[str, str, int]:
        """MessageQueue.compareTo's order: topic, broker name (Java string order), queue id."""
        return (java_compare_key(self.topic), java_compare_key(self.broker_name), self.queue_id)


@record(frozen=True, slots=True)
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


@record(frozen=True, slots=True)
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


@record(frozen=True, slots=True)
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


@record(frozen=True, slots=True)
class TopicRoute:
    """A topic's route, in the name server's order (a store backend reproduces that order)."""

    topic: str
    queue_datas: tuple[QueueData, ...]
    broker_datas: tuple[BrokerData, ...] = ()

    @property
    def broker_names(self) -> tuple[str, ...]:
        return tuple(q.broker_name for q in self.queue_datas)


@record(frozen=True, slots=True)
class QueueStat:
    """One queue of a group's consume stats (GET_CONSUME_STATS' OffsetWrapper, plus min offset)."""

    queue: MessageQueue
    broker_offset: int  # next offset to be written (max), clamped >= 0
    consumer_offset: int  # committed offset; "none" reads as 0, as the broker clamps it
    last_timestamp: (
        int | None
    )  # store time (ms) of the message at consumer_offset - 1; 0 none, None unreadable
    pull_offset: int | None = None  # max(consumer offset, last pull offset); None: not known (a store, 4.x)
    min_offset: int | None = None  # None when not asked for (live: one more request per topic)
    committed: bool | None = True  # False: the group has no committed offset here; None: unknown


@record(frozen=True, slots=True)
class BrokerFailure:
    """A broker that could not answer one question: its name, address and why."""

    broker_name: str
    addr: str | None
    message: str
    exit_status: int = 4


@record(frozen=True, slots=True)
class ConsumeStats:
    """A group's consume stats merged over the brokers that answered (examineConsumeStats)."""

    group: str
    queues: tuple[QueueStat, ...]
    consume_tps: float = 0.0
    failures: tuple[BrokerFailure, ...] = ()


class BackendKind(str, Enum):
    """Where a backend's answers come from, and so what it can know. A ``str`` enum: journals,
    plans and samples record the value ("store", "live")."""

    STORE = "store"  # a broker's files: no clients, TPS or pull offsets; cheap lag times
    LIVE = "live"  # a running cluster: clients, TPS and pull offsets; lag times cost requests

    @property
    def reads_files(self) -> bool:
        """Answers come from files on this machine (flushed by the broker every ~5 s)."""
        return self is BackendKind.STORE

    @property
    def knows_runtime(self) -> bool:
        """It knows what lives only in a running broker's memory: clients, TPS, pull offsets."""
        return self is BackendKind.LIVE

    def __str__(self) -> str:
        return self.value


@record(frozen=True, slots=True)
class BackendTarget:
    """Which cluster a backend reads: enough to open it again (a journal records it for undo)."""

    kind: BackendKind
    stores: tuple[tuple[str, str], ...] = ()  # store: (broker name, store root)
    namesrv: str | None = None  # live: "host:port;host:port"

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", BackendKind(self.kind))  # "store" from a journal or a plan

    def describe(self) -> str:
        if self.kind.reads_files:
            return ", ".join(f"{n}={p}" for n, p in self.stores)
        return f"name server {self.namesrv}"


@record(frozen=True, slots=True)
class BackendWarning:
    """Something a backend noticed while answering ("consumerOffset.json is empty; using .bak")."""

    source: str  # a broker name, an address, or "" for the backend as a whole
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.message}" if self.source else self.message
