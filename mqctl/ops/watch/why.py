"""The stuck message: what a queue's committed offset points at, and whether the group's retry
topic holds a copy of it (``consumerProgress --why``, and STUCK/STALL queues under --watch).

A push consumer commits the smallest offset still in its process queue: one message that never
finishes (a hang, an orderly consumer suspending the queue again and again) pins the committed
offset while pulls go on. The message at that offset is the one to look at. A retried copy in
``%RETRY%<group>`` carries the original's id in ORIGIN_MESSAGE_ID (the broker's send-back sets the
offset id, a client's fallback the UNIQ_KEY) and keeps its UNIQ_KEY; the retry queues' newest
entries are read one by one, bounded, and the ranges looked at are reported.
"""

from __future__ import annotations

import time

from mqctl.backends.base import Backend
from mqctl.errors import NotFoundError, UsageError
from mqctl.model import (
    RETRY_PREFIX,
    QueueOffset,
    QueuePoint,
    QueueSpan,
    QueueStat,
    StoredMessage,
    StuckMessage,
)

# The retry queue entries read per queue by default ("the last few hundred").
RETRY_SCAN = 200


def find_queue(backend: Backend, group: str, broker: str, queue_id: int, topic: str | None) -> QueueStat:
    """The group's queue ``topic/broker/queue_id`` (``topic`` None: the one topic of the group
    with that broker and queue id) from one consume-stats read."""
    stats = backend.consume_stats(group, topic, detail=True)
    hits = [
        q
        for q in sorted(stats.queues, key=lambda s: s.queue.sort_key())
        if q.queue.broker_name == broker and q.queue.queue_id == queue_id and topic in (None, q.queue.topic)
    ]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        names = ", ".join(f"{q.queue.topic}/{broker}/{queue_id}" for q in hits)
        raise UsageError(
            f"queue {broker}:{queue_id} of group {group} is ambiguous: {names}", "give TOPIC/BROKER/QID"
        )
    where = f"{topic}/{broker}/{queue_id}" if topic else f"{broker}:{queue_id}"
    known = sorted({q.queue.broker_name for q in stats.queues})
    raise NotFoundError(
        f"group {group} has no queue {where}",
        f"its brokers: {', '.join(known) or 'none'}; `consumerProgress -g {group}` lists its queues",
    )


def is_copy_of(candidate: StoredMessage, original: StoredMessage) -> bool:
    """A retried copy names the original in ORIGIN_MESSAGE_ID (offset id or UNIQ_KEY) or keeps its
    UNIQ_KEY."""
    props = dict(candidate.properties)
    origin = props.get("ORIGIN_MESSAGE_ID")
    ids = {original.msg_id, original.unique_key} - {None}
    if origin is not None and origin in ids:
        return True
    return original.unique_key is not None and candidate.unique_key == original.unique_key


def retry_copies(
    backend: Backend, group: str, original: StoredMessage, limit: int = RETRY_SCAN
) -> tuple[tuple[StoredMessage, ...], tuple[QueueSpan, ...], str | None]:
    """Copies of ``original`` among the newest ``limit`` entries of each queue of the group's retry
    topic (newest first), the ranges read, and a note when there is nothing to read."""
    retry = f"{RETRY_PREFIX}{group}"
    if original.queue.topic == retry:
        return (), (), "the message is itself in the retry topic"
    try:
        stats = backend.consume_stats(group, retry, detail=True)
    except NotFoundError:
        return (), (), f"no retry topic {retry}"
    found: list[StoredMessage] = []
    spans: list[QueueSpan] = []
    for q in sorted(stats.queues, key=lambda s: s.queue.sort_key()):
        start = max(q.min_offset or 0, q.broker_offset - max(limit, 0))
        if start >= q.broker_offset:
            continue
        spans.append(QueueSpan(q.queue, start, q.broker_offset))
        for off in range(q.broker_offset - 1, start - 1, -1):
            m = backend.message_at(QueueOffset(q.queue, off))
            if m is not None and is_copy_of(m, original):
                found.append(m)
    found.sort(key=lambda m: -m.store_timestamp)
    return tuple(found), tuple(spans), None if spans else f"{retry} holds no messages"


def stuck_message(
    backend: Backend,
    group: str,
    stat: QueueStat,
    *,
    now_ms: int | None = None,
    retry_scan: int = RETRY_SCAN,
) -> StuckMessage:
    """The message at ``stat``'s committed offset (at its min offset when the committed one was
    deleted already) and its copies in the retry topic."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    c, retry = stat.consumer_offset, f"{RETRY_PREFIX}{group}"
    if c >= stat.broker_offset:
        return StuckMessage(group, stat.queue, c, c, None, "nothing unconsumed: committed = max", now, retry)
    offset, note = c, None
    if stat.min_offset is not None and c < stat.min_offset:
        offset, note = (
            stat.min_offset,
            f"committed {c} lies below min {stat.min_offset}: the first stored one",
        )
    message = backend.message_at(QueueOffset(stat.queue, offset))
    if message is None:
        return StuckMessage(group, stat.queue, c, offset, None, "the message is gone (retention)", now, retry)
    copies, spans, retry_note = retry_copies(backend, group, message, retry_scan)
    return StuckMessage(group, stat.queue, c, offset, message, note, now, retry, copies, spans, retry_note)


def explain(
    backend: Backend,
    group: str,
    ref: tuple[str | None, str, int],
    *,
    now_ms: int | None = None,
    retry_scan: int = RETRY_SCAN,
) -> StuckMessage:
    """``--why TOPIC/BROKER/QID``: find the queue, then its stuck message."""
    topic, broker, qid = ref
    stat = find_queue(backend, group, broker, qid, topic)
    from mqctl.model.pop import parse_pop_retry

    if parse_pop_retry(stat.queue.topic, group) is not None:  # a POP group's retry queue
        from mqctl.ops.watch.pop import RetryReader, pop_stuck_message

        reader = RetryReader(retry_scan)
        copies = reader.read(backend, stat)
        now = int(time.time() * 1000) if now_ms is None else now_ms
        return pop_stuck_message(group, stat, copies, reader.scanned, now)
    return stuck_message(backend, group, stat, now_ms=now_ms, retry_scan=retry_scan)


def stat_from_point(point: QueuePoint) -> QueueStat:
    """A watched queue's latest point as the QueueStat ``stuck_message`` takes."""
    return QueueStat(
        point.queue, point.broker_offset, point.consumer_offset, 0, point.pull_offset, point.min_offset
    )
