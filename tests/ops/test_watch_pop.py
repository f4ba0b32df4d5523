"""STUCK for POP groups: the same message revived again and again into the group's POP retry
topic (same UNIQ_KEY, reconsume times 1, 2, 3, ..., still coming back at its cadence) is STUCK on
the retry queue; one revived copy is a normal redelivery; a message acknowledged at last stops
counting. Times and keys below are made by hand (the cadence of pop.md section 5: ~15 s)."""

from __future__ import annotations

from mqctl.model import MessageQueue, QueueStat, StoredMessage
from mqctl.ops.watch.pop import RetryReader, pop_stuck_message, stuck_copies

RQ = MessageQueue("%RETRY%GroupPop_TopicPop", "broker-a", 0)


def copy(offset: int, key: str, reconsume: int, at: int) -> StoredMessage:
    return StoredMessage(
        RQ, offset, 1000 + offset, f"MSG{offset}", at, 1, "h:1", "h:2", reconsume, 100, "TagA", "k", key
    )


def test_one_redelivery_is_not_stuck() -> None:
    assert stuck_copies([copy(0, "U1", 1, 10_000)], now_ms=12_000) == []


def test_the_same_message_back_again_and_again_is_stuck() -> None:
    entries = [
        copy(0, "U1", 1, 10_000),
        copy(1, "U2", 1, 11_000),
        copy(2, "U1", 2, 25_000),
        copy(3, "U1", 3, 40_000),
    ]
    got = stuck_copies(entries, now_ms=45_000)
    assert [(m.queue_offset, m.reconsume_times) for m in got] == [(0, 1), (2, 2), (3, 3)]


def test_a_message_acknowledged_at_last_stops_counting() -> None:
    entries = [copy(0, "U1", 1, 10_000), copy(1, "U1", 2, 25_000)]
    assert stuck_copies(entries, now_ms=50_000)  # 25 s since the last copy, gap 15 s: still cycling
    assert stuck_copies(entries, now_ms=56_000) == []  # > 2 gaps: it was acknowledged


def test_copies_must_grow_in_reconsume_times() -> None:
    """Two different sends with the same key (a producer's resend) are no revive cycle."""
    entries = [copy(0, "U1", 1, 10_000), copy(1, "U1", 1, 25_000)]
    assert stuck_copies(entries, now_ms=26_000) == []


def test_the_stuck_message_names_the_newest_copy() -> None:
    stat = QueueStat(RQ, 4, 3, 0, 3, 0)
    entries = [copy(0, "U1", 1, 10_000), copy(2, "U1", 2, 25_000), copy(3, "U1", 3, 40_000)]
    sm = pop_stuck_message("GroupPop", stat, entries, (), 41_000)
    assert sm.message is not None and sm.message.queue_offset == 3 and sm.offset == 3
    assert [m.queue_offset for m in sm.retry_copies] == [3, 2, 0]  # newest first
    # copies 0 and 2 were popped again (committed 3), copy 3 waits: handed out 1 + 2 times
    assert sm.note == (
        "POP: handed out 3 times, never acknowledged; revived into %RETRY%GroupPop_TopicPop 3 times (reconsume 1..3)"
    )


class _Messages:
    def __init__(self, entries: list[StoredMessage]) -> None:
        self.entries = {m.queue_offset: m for m in entries}
        self.asked: list[int] = []

    def message_at(self, position):  # type: ignore[no-untyped-def]
        self.asked.append(position.offset)
        return self.entries.get(position.offset)


def test_retry_entries_are_read_once_across_samples() -> None:
    backend = _Messages([copy(i, f"U{i}", 1, 1000 * i) for i in range(6)])
    reader = RetryReader(limit=4)
    assert [m.queue_offset for m in reader.read(backend, QueueStat(RQ, 5, 5, 0, 5, 0))] == [1, 2, 3, 4]  # type: ignore[arg-type]
    assert [m.queue_offset for m in reader.read(backend, QueueStat(RQ, 6, 6, 0, 6, 0))] == [2, 3, 4, 5]  # type: ignore[arg-type]
    assert backend.asked == [1, 2, 3, 4, 5]
