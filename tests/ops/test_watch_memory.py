"""--watch's ops against the in-memory backend: the test moves the cluster's offsets between
samples; each sample is one group_progress call; the stuck message and its retried copies.
Expected values are worked out by hand from the offsets set below."""

from __future__ import annotations

import pytest
from mqctl_testkit.memory_backend import MemoryBackend, Queue

from mqctl.errors import NotFoundError, UsageError
from mqctl.model import MessageQueue, QueueOffset, Rules, Sample, StoredMessage, TopicConfig
from mqctl.ops import progress
from mqctl.ops.watch import rules as watch
from mqctl.ops.watch import why
from mqctl.records import replace

T, R = "Orders", "%RETRY%G"
A = "broker-a"
Q0, Q1 = MessageQueue(T, A, 0), MessageQueue(T, A, 1)
RULES = Rules(window=10, min_frozen_ms=10_000)


def cluster() -> MemoryBackend:
    """broker-a: Orders q0 = 20 messages (store times 1000, 2000, ...; tags TagA), q1 = 10
    messages; %RETRY%G q0 = 6 messages. G committed q0=10, q1=10 (caught up); pull offset q0=12."""
    topics = {A: {T: TopicConfig(T, 2, 2), R: TopicConfig(R, 1, 1)}}
    queues = {
        (A, T, 0): Queue([(1000 * (i + 1), "TagA") for i in range(20)]),
        (A, T, 1): Queue([(500 * (i + 1), "TagB") for i in range(10)]),
        (A, R, 0): Queue([(30_000 + i, None) for i in range(6)]),
    }
    committed = {"G": {(A, T, 0): 10, (A, T, 1): 10}}
    return MemoryBackend(topics, queues, committed, pull_offsets={("G", A, T, 0): 12})


def produce(b: MemoryBackend, topic: str, qid: int, n: int) -> None:
    q = b.queues[(A, topic, qid)]
    last = q.messages[-1][0] if q.messages else 0
    q.messages += [(last + 1 + i, "TagA") for i in range(n)]


def sample(b: MemoryBackend, t: int) -> tuple[Sample, dict[str, int]]:
    """One consumerProgress -g G read at time t, and the backend calls it made."""
    before = dict(b.calls)
    result = progress.group_progress(b, "G", now_ms=t)
    calls = {k: v - before.get(k, 0) for k, v in b.calls.items() if v - before.get(k, 0)}
    return watch.sample_from_progress(result, b.kind), calls


def test_each_sample_is_one_consumer_progress_read() -> None:
    b = cluster()
    s, calls = sample(b, 20_000)
    # GET_CONSUME_STATS once; lag time for the lagging queue q0 as one batch; the route of
    # %RETRY%G (a remoting client's group, not a POP one: live, the route found the group's brokers
    # already and is cached); nothing else.
    assert calls == {"consume_stats": 1, "store_times": 1, "topic_route": 1}
    assert [(p.queue, p.broker_offset, p.consumer_offset, p.pull_offset) for p in s.points] == [
        (Q0, 20, 10, 12),
        (Q1, 10, 10, 10),
    ]
    # q0's oldest unconsumed message (offset 10) was stored at 11000: 9 s old at 20000.
    assert [p.lag_ms for p in s.points] == [9_000, 0]


def test_stuck_queue_over_replayed_samples() -> None:
    """q0: committed 10 frozen while pulls go 12 -> 15 -> 18 and 5 messages arrive per 5 s: STUCK
    at the third sample (10 s). q1: producer and consumer both +2 per 5 s: OK, drained."""
    b = cluster()
    samples, statuses = [], []
    for step in range(3):
        if step:
            produce(b, T, 0, 5)
            produce(b, T, 1, 2)
            b.committed["G"][(A, T, 1)] += 2
            b.pull_offsets[("G", A, T, 0)] += 3
        s, calls = sample(b, step * 5000)
        assert calls == {"consume_stats": 1, "store_times": 1, "topic_route": 1}
        samples.append(s)
        view = watch.evaluate(samples, RULES)
        statuses.append([q.status for q in view.queues])
    # 1st: new; 2nd: 5 s < 10 s, lag 10 -> 15 grew: WARN; 3rd: STUCK.
    assert statuses == [["OK", "OK"], ["WARN", "OK"], ["STUCK", "OK"]]
    q0, q1 = view.queues
    assert q0.reason == "committed 10 for 10s while pulls went 12 -> 18"
    assert (q0.point.lag, q0.point.inflight) == (20, 8)
    # q0 over 10 s: consume 0/s, produce 10/10 = 1/s: never drains. q1: 0.4/s each way, no lag.
    assert (q0.rates.consume, q0.rates.produce, q0.rates.drain) == (0.0, 1.0, "never")
    assert (q1.rates.consume, q1.rates.produce, q1.rates.drain) == (0.4, 0.4, "drained")
    assert (view.status, view.rates.drain) == ("STUCK", "never")


def test_rewind_and_stop_on_the_memory_backend() -> None:
    b = cluster()
    b.pull_offsets.clear()
    samples = []
    for t, c0 in ((0, 10), (5000, 14), (10000, 6)):  # a reset back to 6 at t=10000
        b.committed["G"][(A, T, 0)] = c0
        samples.append(sample(b, t)[0])
    assert [q.status for q in watch.evaluate(samples, RULES).queues] == ["REWIND", "OK"]
    # Then nothing moves for 12 s (c 6, b 20, no pulls known): once the rewind has left a window
    # of 3, STOP.
    for t in (16000, 22000):
        samples.append(sample(b, t)[0])
    q0 = watch.evaluate(samples, Rules(window=3)).queues[0]
    assert (q0.status, q0.reason) == ("STOP", "nothing moved for 12s with 14 unconsumed")


# ------------------------------------------------------------------------ the stuck message


class RetryBackend(MemoryBackend):
    """The memory backend with retried copies: %RETRY%G entries at ``copies`` carry
    ORIGIN_MESSAGE_ID of the Orders q0 message at offset 10 and reconsume times 1, 2, ..."""

    copies: tuple[int, ...] = (1, 4)

    def message_at(self, position: QueueOffset) -> StoredMessage | None:
        m = super().message_at(position)
        if m is None or position.queue.topic != R or position.offset not in self.copies:
            return m
        original = f"MEM{10:029X}"
        n = self.copies.index(position.offset) + 1
        return replace(m, reconsume_times=n, properties=(("ORIGIN_MESSAGE_ID", original),))


def retry_cluster() -> RetryBackend:
    base = cluster()
    return RetryBackend(base.topics, base.queues, base.committed, pull_offsets=base.pull_offsets)


def test_stuck_message_and_its_retry_copies() -> None:
    b = retry_cluster()
    stat = why.find_queue(b, "G", A, 0, None)
    sm = why.stuck_message(b, "G", stat, now_ms=15_000)
    m = sm.message
    assert m is not None and (m.queue_offset, m.msg_id, m.tags, m.store_timestamp) == (
        10,
        f"MEM{10:029X}",
        "TagA",
        11_000,
    )
    assert (sm.committed, sm.offset, sm.note, sm.age_ms) == (10, 10, None, 4_000)
    # The retry queue holds offsets 0..5, all read (6 < 200), newest first: copies at 4 then 1.
    assert [(c.queue_offset, c.reconsume_times) for c in sm.retry_copies] == [(4, 2), (1, 1)]
    assert [(s.queue, s.start, s.end) for s in sm.retry_scanned] == [(MessageQueue(R, A, 0), 0, 6)]
    assert b.calls["message_at"] == 1 + 6


def test_retry_scan_is_bounded_and_says_how_far_it_looked() -> None:
    b = retry_cluster()
    sm = why.stuck_message(b, "G", why.find_queue(b, "G", A, 0, T), retry_scan=1)
    # Only offset 5 read: no copy there.
    assert (sm.retry_copies, sm.retry_entries) == ((), 1)
    assert [(s.start, s.end) for s in sm.retry_scanned] == [(5, 6)]
    assert b.calls["message_at"] == 2
    sm = why.stuck_message(b, "G", why.find_queue(b, "G", A, 0, T), retry_scan=2)
    assert [c.queue_offset for c in sm.retry_copies] == [4]


def test_stuck_message_edges() -> None:
    b = retry_cluster()
    # Caught up: nothing to show, nothing read.
    sm = why.stuck_message(b, "G", why.find_queue(b, "G", A, 1, None))
    assert (sm.message, sm.note, b.calls["message_at"]) == (None, "nothing unconsumed: committed = max", 0)
    # Committed below min: the first stored message instead.
    b.queues[(A, T, 0)].min = 12
    sm = why.stuck_message(b, "G", why.find_queue(b, "G", A, 0, None))
    assert sm.offset == 12 and sm.note == "committed 10 lies below min 12: the first stored one"
    # No retry topic.
    del b.topics[A][R]
    sm = why.stuck_message(b, "G", why.find_queue(b, "G", A, 0, None))
    assert (sm.retry_note, sm.retry_scanned) == ("no retry topic %RETRY%G", ())


def test_find_queue_not_found_and_ambiguous() -> None:
    b = cluster()
    with pytest.raises(NotFoundError, match="group G has no queue broker-a:7"):
        why.find_queue(b, "G", A, 7, None)
    b.committed["G"][(A, R, 0)] = 6  # the group now reads Orders and its retry topic: two q0s
    with pytest.raises(UsageError, match="ambiguous: %RETRY%G/broker-a/0, Orders/broker-a/0"):
        why.explain(b, "G", (None, A, 0))
    assert why.explain(b, "G", (T, A, 0)).committed == 10
