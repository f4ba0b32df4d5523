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
        return self.broker_offset - self.consumer_offset

    @property
    def queue(self) -> MessageQueue:
        return MessageQueue(self.topic, self.broker_name, self.queue_id)
