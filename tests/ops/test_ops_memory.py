"""ops/ against the in-memory backend: progress rows and totals, reset plans and undo, allocation
inputs, the overview. Every expected value is worked out by hand from the cluster below."""

from __future__ import annotations

from pathlib import Path

import pytest
from mqctl_testkit.memory_backend import MemoryBackend, Queue

from mqctl.errors import NotFoundError, PartialWriteError, RefusedError
from mqctl.model import (
    Connection,
    ConsumerConnection,
    ConsumerRunningInfo,
    MessageQueue,
    ProcessQueueInfo,
    Target,
    TopicConfig,
    parse_subexpr,
)
from mqctl.ops import progress, reset
from mqctl.ops.allocate import readable_queues
from mqctl.ops.journal import read_journal

NOW = 100_000
T = "Orders"
R = "%RETRY%G"
A, B = "broker-a", "broker-b"


def cluster(**kw) -> MemoryBackend:  # type: ignore[no-untyped-def]
    """broker-a: Orders q0 = 6 messages (times 10..60, tags A,B,Aa,BB,A,-), q1 = empty; %RETRY%G q0
    = 2 messages at offsets 3..4 (min 3). broker-b: Orders q0 = 3 messages, q1 = 4 messages with
    min 2 (offsets 2..5). G committed: a/Orders q0=2, a/Orders q1 -, b/Orders q0=5 (above max 3),
    b/Orders q1=3, a/%RETRY%G q0=4."""
    topics = {
        A: {T: TopicConfig(T, 2, 2), R: TopicConfig(R, 1, 1)},
        B: {T: TopicConfig(T, 2, 2)},
    }
    queues = {
        (A, T, 0): Queue([(10, "A"), (20, "B"), (30, "Aa"), (40, "BB"), (50, "A"), (60, None)]),
        (A, T, 1): Queue(),
        (A, R, 0): Queue([(70, "A"), (80, "A")], min=3),
        (B, T, 0): Queue([(15, "A"), (25, "A"), (35, "A")]),
        (B, T, 1): Queue([(45, "B"), (55, "A"), (65, "B"), (75, "A")], min=2),
    }
    committed = {"G": {(A, T, 0): 2, (B, T, 0): 5, (B, T, 1): 3, (A, R, 0): 4}}
    return MemoryBackend(topics, queues, committed, **kw)


def rows_by_queue(p) -> dict:  # type: ignore[no-untyped-def]
    return {(r.broker_name, r.topic, r.queue_id): r for r in p.rows}


# ------------------------------------------------------------------ consumerProgress


def test_progress_rows_totals_and_order() -> None:
    b = cluster()
    p = progress.group_progress(b, "G", now_ms=NOW)
    # MessageQueue order: the retry topic first ('%' sorts before letters), then broker, queue.
    assert [(r.topic, r.broker_name, r.queue_id) for r in p.rows] == [
        (R, A, 0),
        (T, A, 0),
        (T, A, 1),
        (T, B, 0),
        (T, B, 1),
    ]
    r = rows_by_queue(p)  # (broker, topic, queue)
    a0 = r[(A, T, 0)]
    assert (a0.broker_offset, a0.consumer_offset, a0.diff, a0.min_offset) == (6, 2, 4, 0)
    assert a0.last_timestamp == 20  # message at consumerOffset - 1 = offset 1
    assert (a0.oldest_unconsumed_timestamp, a0.lag_ms) == (30, NOW - 30)
    a1 = r[(A, T, 1)]
    assert (a1.diff, a1.committed, a1.last_timestamp, a1.lag_ms) == (0, False, 0, 0)
    b0 = r[(B, T, 0)]
    assert (b0.diff, b0.lag, b0.above_max) == (-2, 0, True)
    b1 = r[(B, T, 1)]
    assert (b1.diff, b1.last_timestamp, b1.oldest_unconsumed_timestamp) == (3, 45, 55)
    retry = r[(A, R, 0)]
    assert (retry.diff, retry.last_timestamp, retry.oldest_unconsumed_timestamp) == (1, 70, 80)
    # Lag totals never go below zero per queue: 4 + 0 + 0 + 3 + 1; mqadmin's raw sum is 6.
    assert (p.diff_total, p.raw_diff_total) == (8, 6)
    assert p.max_lag_ms == NOW - 30
    assert any("above the queue's max" in w for w in p.warnings)


def test_progress_asks_coarse_questions() -> None:
    b = cluster()
    progress.group_progress(b, "G", tags=parse_subexpr("A"), now_ms=NOW)
    # One consume-stats question, one batch of store times, one batch of tag counts: never per queue.
    assert b.calls["consume_stats"] == 1 and b.calls["store_times"] == 1
    assert b.calls["count_tag_matches"] == 1
    assert sum(b.calls.values()) == 3


def test_progress_hands_what_reads_the_stats_to_the_wait_before_asking_for_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The rows' records and the POP check are imported while a live backend waits for the
    consume stats (``Backend.when_idle``), so they are handed over first; once imported (the
    samples of --watch after the first), they are not handed again."""
    b = cluster()
    order: list[str] = []
    ask = b.consume_stats
    b.when_idle = lambda work: order.append(work.args[0])  # type: ignore[method-assign]
    b.consume_stats = lambda *a, **k: order.append("consume_stats") or ask(*a, **k)  # type: ignore[method-assign]
    progress.group_progress(b, "G", now_ms=NOW)  # this test process has imported both
    assert progress._AFTER_STATS == ("mqctl.model.results", "mqctl.ops.pop")
    assert order == ["consume_stats"]
    order.clear()
    monkeypatch.setattr(progress, "_AFTER_STATS", ("not.yet.a", "not.yet.b"))
    progress.group_progress(b, "G", now_ms=NOW)
    assert order == ["not.yet.a", "not.yet.b", "consume_stats"]


def test_repeated_samples_ask_only_for_positions_not_seen() -> None:
    """--watch passes one cache of store times through its samples: the message at a queue
    position never changes, so only a lagging queue whose committed offset moved is asked again."""
    b = cluster()
    asked: list[list[tuple[str, str, int, int]]] = []
    real = b.store_times

    def spy(positions):  # type: ignore[no-untyped-def]
        asked.append(
            sorted((p.queue.broker_name, p.queue.topic, p.queue.queue_id, p.offset) for p in positions)
        )
        return real(positions)

    b.store_times = spy  # type: ignore[method-assign]
    cache: dict = {}
    first = progress.group_progress(b, "G", now_ms=NOW, time_cache=cache)
    # lagging: %RETRY%G q0 from 4 (max 5), a/Orders q0 from 2, b/Orders q1 from 3; a/Orders q1
    # has no messages and b/Orders q0 is above its max: nothing to ask there
    assert asked == [[(A, R, 0, 4), (A, T, 0, 2), (B, T, 1, 3)]]
    again = progress.group_progress(b, "G", now_ms=NOW, time_cache=cache)
    assert len(asked) == 1  # nothing moved: no question at all
    assert [r.oldest_unconsumed_timestamp for r in again.rows] == [
        r.oldest_unconsumed_timestamp for r in first.rows
    ]
    b.committed["G"][(A, T, 0)] = 4
    moved = progress.group_progress(b, "G", now_ms=NOW, time_cache=cache)
    assert asked[1:] == [[(A, T, 0, 4)]]  # only the queue that moved
    assert rows_by_queue(moved)[(A, T, 0)].oldest_unconsumed_timestamp == 50
    assert sorted((p.queue.topic, p.queue.queue_id, p.offset, t) for p, t in cache.items()) == [
        (R, 0, 4, 80),
        (T, 0, 4, 50),
        (T, 1, 3, 55),  # b/Orders q1 starts at offset 2: offset 3 is its second message
    ]


def test_filtered_lag_and_verified_collisions() -> None:
    # 'Aa' and 'BB' share Java's hash; matches counted from each queue's first unconsumed offset.
    p = progress.group_progress(cluster(), "G", tags=parse_subexpr("Aa"), now_ms=NOW)
    assert rows_by_queue(p)[(A, T, 0)].matched_diff == 2  # offsets 2..5: Aa, BB (same hash), A, -
    v = progress.group_progress(cluster(), "G", tags=parse_subexpr("Aa"), verify_tags=True, now_ms=NOW)
    assert rows_by_queue(v)[(A, T, 0)].matched_diff == 1 and v.tag_collisions == 1
    by_b = progress.group_progress(cluster(), "G", tags=parse_subexpr("B || A"), now_ms=NOW)
    got = {k: x.matched_diff for k, x in rows_by_queue(by_b).items()}
    # b/q1 unconsumed offsets 3..5 hold A, B, A; b/q0's committed offset lies past its end.
    assert got == {(A, R, 0): 1, (A, T, 0): 1, (A, T, 1): 0, (B, T, 0): 0, (B, T, 1): 3}
    assert by_b.matched_total == 5


def test_inflight_and_client_ips_from_a_live_like_backend() -> None:
    mq = MessageQueue(T, A, 0)
    conn = ConsumerConnection(
        "G", (Connection("10.0.0.9@1", "10.0.0.9:5000", "JAVA", 479),), (), "CONSUME_PASSIVELY", "CLUSTERING"
    )
    info = ConsumerRunningInfo("10.0.0.9@1", queues=((mq, ProcessQueueInfo()),))
    b = cluster(
        connections={"G": conn},
        running={("G", "10.0.0.9@1"): info},
        pull_offsets={("G", A, T, 0): 5},
        tps=1.5,
    )
    p = progress.group_progress(b, "G", show_client_ip=True, now_ms=NOW)
    r = rows_by_queue(p)
    assert r[(A, T, 0)].inflight == 3 and r[(A, T, 0)].client_ip == "10.0.0.9"
    assert r[(B, T, 0)].client_ip is None and r[(B, T, 0)].inflight == 0  # no pull offset known
    assert p.consume_tps == 1.5


def test_unknown_group_and_topic() -> None:
    with pytest.raises(NotFoundError):
        progress.group_progress(cluster(), "Nope", now_ms=NOW)
    with pytest.raises(NotFoundError):
        progress.group_progress(cluster(), "G", "NoTopic", now_ms=NOW)


def test_overview() -> None:
    conn = ConsumerConnection(
        "G", (Connection("c1", "x:1", "JAVA", 479), Connection("c2", "y:1", "JAVA", 413)), ()
    )
    b = cluster(connections={"G": conn})
    b.committed["H"] = {(B, T, 1): 2}
    groups = progress.all_groups(b, now_ms=NOW)
    assert [(g.group, g.found_in, g.diff_total, g.clients, g.version) for g in groups] == [
        ("G", ("retryTopic", "offsets"), 8, 2, 413),  # version: the oldest client's
        ("H", ("offsets",), 7, 0, None),  # b/q0: none committed, 3 to go; b/q1: 6 - 2
    ]
    assert [g.group for g in progress.sort_groups(groups, "lag")] == ["G", "H"]


# ------------------------------------------------------------------ resetOffsetByTime


def plan(b: MemoryBackend, target: Target, **kw):  # type: ignore[no-untyped-def]
    return {(r.broker_name, r.queue_id): r for r in reset.plan_reset(b, "G", T, target, **kw).rows}


def test_reset_to_a_time_uses_the_brokers_lower_search() -> None:
    rows = plan(cluster(), Target("time", 30))
    # a/q0 times 10..60: first >= 30 is offset 2; b/q0 (15,25,35): offset 2; b/q1 (45..): its min 2.
    assert {k: r.target_offset for k, r in rows.items()} == {(A, 0): 2, (A, 1): 0, (B, 0): 2, (B, 1): 2}
    assert rows[(B, 1)].warnings == ("clamped",)  # 30 is before its oldest retained message (45)
    assert rows[(A, 0)].target_timestamp == 30 and rows[(A, 1)].target_timestamp == -1
    assert rows[(A, 1)].current_offset == -1 and "no-committed-offset" in rows[(A, 1)].warnings
    later = plan(cluster(), Target("time", 61))
    assert later[(A, 0)].target_offset == 6  # after the last message: max


def test_reset_other_targets() -> None:
    assert plan(cluster(), Target("earliest"))[(B, 1)].target_offset == 2
    assert plan(cluster(), Target("latest"))[(A, 0)].target_offset == 6
    shifted = plan(cluster(), Target("shift", -5), broker=A, queue=0)
    assert shifted[(A, 0)].target_offset == 0 and "clamped" in shifted[(A, 0)].warnings
    kept = plan(cluster(), Target("latest"), force=False)
    assert kept[(A, 0)].target_offset == 2 and "kept-not-backwards" in kept[(A, 0)].warnings
    with pytest.raises(RefusedError):
        plan(cluster(), Target("explicit", 8), broker=A, queue=0)  # allowed 0..7


def test_apply_then_undo_through_the_journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MQCTL_JOURNAL_DIR", str(tmp_path))
    b = cluster()
    # broker-a only: b/q0's committed 5 lies above its max 3, and an undo never writes beyond
    # max + 1 (tests/ops/test_write_seam.py).
    rec = reset.apply_plan(b, reset.plan_reset(b, "G", T, Target("latest"), broker=A))
    assert b.committed["G"][(A, T, 0)] == 6 and b.committed["G"][(A, T, 1)] == 0
    assert rec.state == "applied" and read_journal(rec.id).target == b.target()  # the backend reopens from it
    undo = reset.plan_undo(b, read_journal(rec.id))
    reset.apply_plan(b, undo)
    # Back to the start, including the queue that had no committed offset (entry removed).
    assert b.committed["G"] == {(A, T, 0): 2, (B, T, 0): 5, (B, T, 1): 3, (A, R, 0): 4}


def test_partial_write_is_journalled_and_undone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MQCTL_JOURNAL_DIR", str(tmp_path))
    b = cluster()
    b.fail_commit_after = 1  # broker-a takes it, broker-b drops the connection
    with pytest.raises(PartialWriteError) as exc:
        reset.apply_plan(b, reset.plan_reset(b, "G", T, Target("earliest")))
    assert exc.value.applied == [A]
    rec = read_journal("latest")
    assert rec.state == "partial" and rec.applied_brokers == (A,)
    b.fail_commit_after = None
    undo = reset.plan_undo(b, rec)
    assert {(r.broker_name, r.queue_id) for r in undo.rows} == {(A, 0), (A, 1)}  # only what landed
    reset.apply_plan(b, undo)
    assert b.committed["G"][(A, T, 0)] == 2 and (A, T, 1) not in b.committed["G"]


def test_stale_plan_is_refused() -> None:
    b = cluster()
    p = reset.plan_reset(b, "G", T, Target("latest"))
    b.committed["G"][(A, T, 0)] = 3  # a consumer committed since
    with pytest.raises(RefusedError):
        reset.apply_plan(b, p)
    assert b.writes == []


# ------------------------------------------------------------------ allocation inputs


def test_readable_queues_follow_the_route_and_perms() -> None:
    b = MemoryBackend(
        {
            "b2": {"X": TopicConfig("X", read_queue_nums=2)},
            "b1": {"X": TopicConfig("X", read_queue_nums=3, perm=2)},  # write-only: left out
            "b3": {"X": TopicConfig("X", read_queue_nums=1)},
        }
    )
    assert readable_queues(b, "X") == [
        MessageQueue("X", "b2", 0),
        MessageQueue("X", "b2", 1),
        MessageQueue("X", "b3", 0),
    ]
    with pytest.raises(NotFoundError):
        readable_queues(b, "Y")
