"""STUCK for a POP group: a message popped again and again and never acknowledged.

A POP consumer's committed offset moves at pop time, so a message that is never acknowledged does
not pin it (the classic STUCK of a push consumer): the topic's queues look caught up. What shows it
is the group's POP retry topic: each time the message's invisible time runs out, the broker revives
it there (``PopReviveService.reviveRetry``: same UNIQ_KEY, RECONSUME_TIME + 1, 1ST_POP_TIME kept),
and the next pop hands it out again. One revived copy is a normal redelivery (a slow or restarted
consumer); the same message revived again with a growing reconsume count, and still coming back at
its cadence, is STUCK. The copies sit on the retry topic's queue, which carries the status.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from mqctl.model import QueueOffset, StoredMessage, StuckMessage
from mqctl.records import field, record

if TYPE_CHECKING:
    from mqctl.backends.base import Backend
    from mqctl.model import GroupProgress, MessageQueue, QueueStat, WatchView

# Revived copies of one message before it counts as stuck: one is a normal redelivery; two mean
# it was handed out three times and never acknowledged.
STUCK_COPIES = 2


def _key(m: StoredMessage) -> str:
    return m.unique_key or m.msg_id


def stuck_copies(
    copies: Iterable[StoredMessage], now_ms: int, rounds: int = STUCK_COPIES
) -> list[StoredMessage]:
    """The copies (oldest first) of the message that is stuck now among ``copies`` (one retry
    queue's entries), or []: at least ``rounds`` copies of one message with strictly growing
    reconsume times, the newest no older than twice the gap between its last two (the revive
    cadence: a message acknowledged at last stops coming back, and stops counting)."""
    by_key: dict[str, list[StoredMessage]] = {}
    for m in copies:
        by_key.setdefault(_key(m), []).append(m)
    best: list[StoredMessage] = []
    for ms in by_key.values():
        ms = sorted(ms, key=lambda m: (m.reconsume_times, m.store_timestamp))
        times = [m.reconsume_times for m in ms]
        if len(ms) < rounds or any(b <= a for a, b in zip(times, times[1:])):
            continue
        gap = ms[-1].store_timestamp - ms[-2].store_timestamp
        if now_ms - ms[-1].store_timestamp > 2 * max(gap, 1):
            continue
        if len(ms) > len(best):
            best = ms
    return best


def pop_stuck_message(
    group: str, stat: QueueStat, copies: Sequence[StoredMessage], scanned: tuple, now_ms: int
) -> StuckMessage:
    """The stuck message of a POP retry queue (``copies``: the queue's entries read, oldest first)."""
    stuck = stuck_copies(copies, now_ms)
    topic = stat.queue.topic
    if not stuck:
        note = f"no message came back {STUCK_COPIES} times or more, still cycling, among the entries read"
        return StuckMessage(
            group, stat.queue, stat.consumer_offset, stat.consumer_offset, None, note, now_ms, topic
        )
    newest = stuck[-1]
    # handed out: the first pop from the topic, then each copy the group popped again (below its
    # committed offset on the retry queue)
    handed = 1 + sum(1 for m in stuck if m.queue_offset < stat.consumer_offset)
    note = (
        f"POP: handed out {handed} times, never acknowledged; revived into {topic} "
        f"{len(stuck)} times (reconsume {stuck[0].reconsume_times}..{newest.reconsume_times})"
    )
    return StuckMessage(
        group,
        stat.queue,
        stat.consumer_offset,
        newest.queue_offset,
        newest,
        note,
        now_ms,
        topic,
        tuple(reversed(stuck)),
        scanned,
    )


@record
class RetryReader:
    """The entries of a group's POP retry queues read so far (each read once): the newest ``limit``
    at the first sample, then what arrived since, at most ``limit`` per sample."""

    limit: int = 200
    seen: dict[MessageQueue, list[StoredMessage]] = field(default_factory=dict)
    next_offset: dict[MessageQueue, int] = field(default_factory=dict)

    def read(self, backend: Backend, stat: QueueStat) -> list[StoredMessage]:
        from mqctl.model import QueueSpan

        q = stat.queue
        low = max(stat.min_offset or 0, stat.broker_offset - self.limit)
        start = max(self.next_offset.get(q, low), low)
        got = self.seen.setdefault(q, [])
        for off in range(start, stat.broker_offset):
            m = backend.message_at(QueueOffset(q, off))
            if m is not None:
                got.append(m)
        self.next_offset[q] = max(start, stat.broker_offset)
        del got[: max(len(got) - self.limit, 0)]
        self.scanned = (QueueSpan(q, low, stat.broker_offset),)
        return got

    scanned: tuple = ()


def mark_stuck(
    backend: Backend,
    progress: GroupProgress,
    view: WatchView,
    stuck: dict[MessageQueue, StuckMessage],
    reader: RetryReader,
    notes: list[str],
) -> WatchView:
    """The view with each POP retry queue whose newest entries hold a stuck message marked STUCK
    (added when the view lacks the queue, as with -t), its message put in ``stuck``."""
    from mqctl.errors import MqctlError
    from mqctl.model import QueuePoint, QueueWatch
    from mqctl.ops.watch.rules import drain, worst
    from mqctl.records import replace

    assert progress.pop is not None
    queues = {w.point.queue: w for w in view.queues}
    for stat in progress.pop.retry_queues:
        try:
            copies = reader.read(backend, stat)
        except MqctlError as e:
            notes.append(f"the POP retry queue {stat.queue.topic}/{stat.queue.broker_name}: {e.message}")
            continue
        found = pop_stuck_message(progress.group, stat, copies, reader.scanned, view.sample.at_ms)
        if found.message is None:
            continue
        reason = f"{found.note}: uniqKey {found.message.unique_key or found.message.msg_id}"
        w = queues.get(stat.queue)
        if w is None:
            point = QueuePoint(
                stat.queue,
                stat.broker_offset,
                stat.consumer_offset,
                stat.consumer_offset,
                True,
                0,
                stat.min_offset,
            )
            lag = point.lag
            from mqctl.model import Rates

            w = QueueWatch(point, "STUCK", reason, Rates(None, None, *drain(lag, None, None)), 1, 0)
        queues[stat.queue] = replace(w, status="STUCK", reason=reason)
        stuck[stat.queue] = found
    ordered = tuple(sorted(queues.values(), key=lambda w: w.point.queue.sort_key()))
    return replace(view, queues=ordered, status=worst(w.status for w in ordered))
