"""consumerProgress over time: samples of a group's offsets, the statuses and rates a window of
them gives, and the message a stuck queue waits on (``--watch``, ``--history``, ``--why``)."""

from __future__ import annotations

from mqctl.model.clients import StoredMessage
from mqctl.model.positions import QueueSpan
from mqctl.model.queues import MessageQueue
from mqctl.records import record

# One sample per line, in the pipe output and in a --history file.
SAMPLE_SCHEMA = "mqctl/consumerProgress.sample/v1"

WHY_SCHEMA = "mqctl/consumerProgress.why/v1"

# Queue and group statuses, least severe first (``--max-status`` compares by this order).
S_OK = "OK"
S_WARN = "WARN"
S_REWIND = "REWIND"
S_STOP = "STOP"
S_STALL = "STALL"
S_STUCK = "STUCK"
STATUSES = (S_OK, S_WARN, S_REWIND, S_STOP, S_STALL, S_STUCK)

# Time to drain: no lag; lag / (consume - produce); consume <= produce; rates not known yet.
D_DRAINED = "drained"
D_DRAINING = "draining"
D_NEVER = "never"
D_UNKNOWN = "unknown"


def severity(status: str) -> int:
    """The status's rank in ``STATUSES`` (OK is 0)."""
    return STATUSES.index(status)


@record(frozen=True, slots=True)
class QueuePoint:
    """One queue in one sample: the offsets consumerProgress reads."""

    queue: MessageQueue
    broker_offset: int
    consumer_offset: int
    pull_offset: int | None = None  # live clusters (the consumer's last pull); None: not known
    committed: bool = True
    lag_ms: int | None = (
        0  # age of the oldest unconsumed message when sampled (0: none or not asked; None: unreadable)
    )
    min_offset: int | None = None

    @property
    def lag(self) -> int:
        return max(self.broker_offset - self.consumer_offset, 0)

    @property
    def inflight(self) -> int:
        return 0 if self.pull_offset is None else max(self.pull_offset - self.consumer_offset, 0)


@record(frozen=True, slots=True)
class Sample:
    """A group's offsets at one instant: one consumerProgress read."""

    group: str
    at_ms: int
    points: tuple[QueuePoint, ...]
    missing_brokers: tuple[str, ...] = ()  # brokers that did not answer: their queues are absent
    backend: str = "store"
    topic: str | None = None  # -t: the sample covers this topic only
    client: str | None = None  # a broadcasting group's client instance (HOST/clientId): its own offsets

    @property
    def complete(self) -> bool:
        return not self.missing_brokers


@record(frozen=True, slots=True)
class Rules:
    """The window statuses are judged over. ``window``: the last N samples a queue appears in;
    ``min_frozen_ms``: how long a committed offset must stand still before STALL, STOP or STUCK
    (a consumer persists offsets every 5 s, a broker flushes them every 5 s: shorter is noise)."""

    window: int = 10
    min_frozen_ms: int = 10_000


@record(frozen=True, slots=True)
class Rates:
    """Messages per second over a window, and the time to drain the lag at those rates."""

    consume: float | None  # committed-offset advance per second; None: fewer than two points
    produce: float | None  # broker-offset advance per second
    drain: str  # D_*
    drain_s: float | None = None  # seconds, with D_DRAINING (0.0 with D_DRAINED)


@record(frozen=True, slots=True)
class QueueWatch:
    """A queue's latest point with what its window says."""

    point: QueuePoint
    status: str
    reason: str  # why, in a few words ("committed 120 for 18s, broker 300 -> 340")
    rates: Rates
    points: int  # samples in its window
    span_ms: int  # time from the window's first sample to its last
    stale: bool = False  # its broker did not answer the newest sample: the last known values


@record(frozen=True, slots=True)
class WatchView:
    """A group's window evaluated: per queue and rolled up (the worst status wins)."""

    sample: Sample  # the newest
    queues: tuple[QueueWatch, ...]
    status: str
    rates: Rates
    window: int  # Rules.window
    samples: int  # samples in the group's window (at most ``window``)
    span_ms: int

    @property
    def lag(self) -> int:
        return sum(q.point.lag for q in self.queues)

    @property
    def incomplete(self) -> bool:
        return not self.sample.complete

    def counts(self) -> dict[str, int]:
        """How many queues have each status, in severity order (statuses with none left out)."""
        out = {s: sum(1 for q in self.queues if q.status == s) for s in STATUSES}
        return {s: n for s, n in out.items() if n}


@record(frozen=True, slots=True)
class StuckMessage:
    """The message a queue's committed offset points at, and its copies in the retry topic."""

    group: str
    queue: MessageQueue
    committed: int  # the committed offset
    offset: int  # where the message was looked up (the min offset when committed lies below it)
    message: StoredMessage | None
    note: str | None  # why there is no message, or why it is not at the committed offset
    now_ms: int
    retry_topic: str
    retry_copies: tuple[StoredMessage, ...] = ()  # newest first
    retry_scanned: tuple[QueueSpan, ...] = ()  # the retry-queue ranges looked at
    retry_note: str | None = None  # no retry topic, nothing in it, ...

    @property
    def age_ms(self) -> int | None:
        return None if self.message is None else max(self.now_ms - self.message.store_timestamp, 0)

    @property
    def retry_entries(self) -> int:
        return sum(s.end - s.start for s in self.retry_scanned)
