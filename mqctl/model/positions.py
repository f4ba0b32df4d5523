"""Positions in queues and what is asked about them: offsets, spans, times to search for, tag
counts (lag times, filtered lag, resets by time, --why)."""

from __future__ import annotations

from mqctl.model.queues import MessageQueue
from mqctl.records import record


@record(frozen=True, slots=True)
class QueueOffset:
    """A position in a queue: (queue, offset)."""

    queue: MessageQueue
    offset: int


@record(frozen=True, slots=True)
class QueueSpan:
    """A half-open range [start, end) of queue offsets."""

    queue: MessageQueue
    start: int
    end: int


@record(frozen=True, slots=True)
class QueueTime:
    """A time to search a queue for, with the 5.x broker's boundary (``lower``: the first message
    stored at or after it; ``upper``: the last one stored at or before it)."""

    queue: MessageQueue
    timestamp: int
    boundary: str = "lower"


@record(frozen=True, slots=True)
class TagCount:
    """Tag-hash matches in a span; with verification, the matches whose real tag differs too."""

    matched: int
    collisions: int | None = None  # None unless verified against the messages themselves
