"""POP groups (RocketMQ 5 consumers through a proxy) against the in-memory backend: recognised by
their POP retry topic or the brokers' remembered subscription, never by a classic retry topic; what
consumerProgress says of them. Expected values are worked out by hand from the clusters below."""

from __future__ import annotations

import io

from mqctl_testkit.memory_backend import MemoryBackend, Queue

from mqctl.model import TopicConfig
from mqctl.model.pop import parse_pop_retry, pop_owner, pop_retry_name
from mqctl.ops import pop, progress
from mqctl.render import overview as overview_render
from mqctl.render import progress as render

NOW = 100_000
T = "TopicPop"
G = "GroupPop"
RV1 = "%RETRY%GroupPop_TopicPop"
A, B = "broker-a", "broker-b"


def pop_cluster(*, retry: bool = True, **kw) -> MemoryBackend:  # type: ignore[no-untyped-def]
    """TopicPop: 5 messages in each of a0, a1, b0; GroupPop popped a0 to 5, a1 to 3, b0 to 5.
    broker-a holds RV1 (retry v1) with 4 revived messages, popped again up to 3."""
    topics = {A: {T: TopicConfig(T, 2, 2)}, B: {T: TopicConfig(T, 1, 1)}}
    queues = {
        (A, T, 0): Queue([(10 + i, "TagA") for i in range(5)]),
        (A, T, 1): Queue([(20 + i, "TagB") for i in range(5)]),
        (B, T, 0): Queue([(30 + i, "TagA") for i in range(5)]),
    }
    committed = {G: {(A, T, 0): 5, (A, T, 1): 3, (B, T, 0): 5}}
    if retry:
        topics[A][RV1] = TopicConfig(RV1, 1, 1)
        queues[(A, RV1, 0)] = Queue([(50 + i, "TagA") for i in range(4)])
        committed[G][(A, RV1, 0)] = 3
    return MemoryBackend(topics, queues, committed, groups={A: [G], B: [G]}, **kw)


def test_retry_topic_names_both_versions() -> None:
    assert pop_retry_name(G, T) == RV1
    assert pop_retry_name(G, T, 2) == "%RETRY%GroupPop+TopicPop"
    assert parse_pop_retry("%RETRY%GroupPop+TopicPop", G).topic == T  # type: ignore[union-attr]
    assert parse_pop_retry(RV1, G).version == 1  # type: ignore[union-attr]
    assert parse_pop_retry("%RETRY%GroupPop", G) is None  # the classic one
    assert parse_pop_retry(RV1, G, {"Other"}) is None  # v1 is ambiguous: the topic must exist
    # mqadmin lists "GroupPop_TopicPop" as a group; its owner is GroupPop on TopicPop
    owner = pop_owner(RV1, {G, "x"}, {T, "Pop"})
    assert owner is not None and (owner.group, owner.topic) == (G, T)
    assert pop_owner("%RETRY%Other_TopicPop", {G}, {T}) is None


def test_pop_group_found_by_its_retry_topic_and_numbers_split() -> None:
    b = pop_cluster()
    b.wheel_readable = False  # in flight cannot be counted: unknown, never 0
    p = progress.group_progress(b, G, now_ms=NOW)
    assert p.pop is not None and p.pop.info.certain
    assert [r.name for r in p.pop.info.retry_topics] == [RV1]
    # waiting: a1 has 5 - 3 = 2 never popped; the retry topic 4 - 3 = 1 revived, not popped again
    assert p.pop.waiting == 2
    assert p.pop.retry_backlog == ((RV1, 1),)
    assert p.pop.inflight is None and p.inflight_unknown
    assert p.pop.not_done is None  # unknown while in flight is


def test_pop_output_never_shows_inflight_as_zero() -> None:
    b = pop_cluster()
    b.wheel_readable = False
    p = progress.group_progress(b, G, now_ms=NOW)
    out = io.StringIO()
    render.plain(p, out)
    lines = out.getvalue().splitlines()
    row = next(line for line in lines if line.startswith(T))
    assert row.split()[6] == "N/A"  # #Inflight: popped-not-acked cannot be read over the wire
    assert "Consume Inflight Total: N/A" in lines
    doc = render.json_doc(p, "live")
    assert doc["totals"]["inflight"] is None and all(r["inflight"] is None for r in doc["rows"])
    assert doc["pop"]["waiting"] == 2 and doc["pop"]["retryBacklog"] == {RV1: 1}
    table = io.StringIO()
    render.table(p, table)
    assert "in flight (popped, not acknowledged yet): unknown" in table.getvalue()


def test_retry_topic_without_offsets_is_asked_for_its_backlog() -> None:
    """A message revived and never popped again: the group has no offset on its retry topic, so
    GET_CONSUME_STATS of the group lacks it; its 4 messages all wait."""
    b = pop_cluster()
    del b.committed[G][(A, RV1, 0)]
    p = progress.group_progress(b, G, now_ms=NOW)
    assert p.pop is not None and p.pop.retry_backlog == ((RV1, 4),)


def test_pop_group_before_any_revive_found_by_the_brokers_subscription() -> None:
    b = pop_cluster(retry=False)
    assert pop.detect(b, G, b.consume_stats(G)) is None  # nothing says POP yet
    b.compensated[(G, T)] = "TagA"
    info = pop.detect(b, G, b.consume_stats(G))
    assert info is not None and not info.certain and info.recent == (T,)
    assert info.expressions == ((T, "TagA"),)


def test_classic_group_asks_nothing_more() -> None:
    b = pop_cluster(retry=False)
    b.topics[A]["%RETRY%" + G] = TopicConfig("%RETRY%" + G, 1, 1)
    b.compensated[(G, T)] = "*"
    p = progress.group_progress(b, G, now_ms=NOW)
    assert p.pop is None and not p.inflight_unknown
    assert b.calls["topic_configs"] == 0 and b.calls["recent_subscriptions"] == 0


def _someone_else_online() -> dict:
    from mqctl.model import Connection, ConsumerConnection

    return {"Other": ConsumerConnection("Other", (Connection("c@1", "10.0.0.1:1", "JAVA", 479),), ())}


def test_connection_of_a_pop_group_says_its_clients_are_behind_a_proxy() -> None:
    import pytest

    from mqctl.errors import NotFoundError
    from mqctl.ops.connection import consumer_connection

    b = pop_cluster(connections=_someone_else_online())
    with pytest.raises(NotFoundError) as exc:
        consumer_connection(b, G)
    assert "consumes in POP mode (POP retry topic %RETRY%GroupPop_TopicPop)" in exc.value.message
    assert exc.value.hint is not None and f"consumerConnection -g {G} -b PROXY_HOST:PORT" in exc.value.hint
    # a group that is no POP group keeps the broker's answer
    plain = pop_cluster(retry=False, connections=_someone_else_online())
    with pytest.raises(NotFoundError, match="not online"):
        consumer_connection(plain, G)


def test_allocate_of_a_pop_group_says_there_is_no_allocation() -> None:
    import pytest

    from mqctl.errors import NotAvailableError, NotFoundError
    from mqctl.ops.rebalance import rebalance_check

    with pytest.raises(NotAvailableError, match="POP has no client-side allocation"):
        rebalance_check(pop_cluster(connections=_someone_else_online()), G)
    with pytest.raises(NotFoundError):
        rebalance_check(pop_cluster(retry=False, connections=_someone_else_online()), G)


def test_overview_types_pop_groups_and_leaves_out_the_retry_topic_mqadmin_lists() -> None:
    from mqctl.model import ConsumerConnection

    b = pop_cluster(connections={"Other": ConsumerConnection("Other", (), ())})
    summaries = {g.group: g for g in progress.all_groups(b, now_ms=NOW)}
    # mqadmin's overview lists %RETRY%GroupPop_TopicPop as a group "GroupPop_TopicPop"
    assert "GroupPop_TopicPop" not in summaries
    g = summaries[G]
    assert g.consume_type == "CONSUME_POP"
    assert any("left out GroupPop_TopicPop" in n for n in g.notes)
    assert any("consumes in POP mode" in n for n in g.notes)
    out = io.StringIO()
    overview_render.groups_plain(list(summaries.values()), out)
    row = next(line for line in out.getvalue().splitlines() if line.startswith(G))
    assert row.split()[3] == "POP"  # #Group #Count #Version #Type


def test_overview_leaves_a_classic_offline_group_alone() -> None:
    b = pop_cluster(retry=False)
    b.topics[A]["%RETRY%" + G] = TopicConfig("%RETRY%" + G, 1, 1)
    b.committed[G][(A, "%RETRY%" + G, 0)] = 0
    (g,) = progress.all_groups(b, now_ms=NOW)
    assert g.consume_type is None and not g.notes
    assert b.calls["topic_configs"] == 0


def _revived(b: MemoryBackend, at: list[int], key: str = "UNIQ-1") -> None:
    """broker-a's RV1 entries 0..3 are copies of one message, revived at ``at`` (reconsume 1..4)."""
    from mqctl.model import MessageQueue, QueueOffset, StoredMessage

    rq = MessageQueue(RV1, A, 0)
    for i, t in enumerate(at):
        b.stored[QueueOffset(rq, i)] = StoredMessage(
            rq, i, 9000 + i, f"M{i}", t, 1, "h:1", "h:2", i + 1, 10, "TagA", "k3", key
        )


def test_watch_marks_the_pop_retry_queue_stuck_with_its_message() -> None:
    from mqctl.model import MessageQueue, Rules
    from mqctl.ops.watch.sampler import GroupSampler

    b = pop_cluster()
    _revived(b, [40_000, 55_000, 70_000, 85_000])
    rq = MessageQueue(RV1, A, 0)
    for topic in (None, T):  # with -t the retry queue is not a row of its own: added
        tick = GroupSampler(b, G, topic, Rules()).take(now_ms=90_000)
        status = {w.point.queue: w.status for w in tick.view.queues}
        assert status[rq] == "STUCK" and tick.view.status == "STUCK"
        assert tick.stuck[rq].message is not None and tick.stuck[rq].message.unique_key == "UNIQ-1"
        assert all(s == "OK" for q, s in status.items() if q != rq)


def test_watch_one_redelivery_per_message_is_ok() -> None:
    from mqctl.model import Rules
    from mqctl.ops.watch.sampler import GroupSampler

    b = pop_cluster()
    for i in range(4):
        _revived(b, [40_000 + i], key=f"UNIQ-{i}")  # four messages, each revived once
    tick = GroupSampler(b, G, None, Rules()).take(now_ms=90_000)
    assert tick.view.status == "OK" and not tick.stuck


def test_why_on_a_pop_retry_queue_names_the_message_that_keeps_coming_back() -> None:
    from mqctl.ops.watch import why

    b = pop_cluster()
    _revived(b, [40_000, 55_000, 70_000, 85_000])
    sm = why.explain(b, G, (RV1, A, 0), now_ms=90_000)
    assert sm.message is not None and (sm.message.unique_key, sm.message.reconsume_times) == ("UNIQ-1", 4)
    assert len(sm.retry_copies) == 4 and "never acknowledged" in (sm.note or "")


def test_inflight_counted_from_checkpoints_minus_acks() -> None:
    """a0: a pop of offsets 0..3 at 90 s, invisible 20 s, offsets 0 and 2 acknowledged (an ack and
    a batch ack): 1 and 3 in flight. a1: a pop of 3..4 whose invisible time ended (revive at 95 s):
    not in flight any more. RV1: a pop of the retry copy at offset 2, invisible 60 s, unacked."""
    from mqctl.model import MessageQueue
    from mqctl.model.pop import PopAck, PopCheckpoint

    b = pop_cluster()
    b.wheel_cks = [
        PopCheckpoint(A, T, 0, G, 0, 90_000, 20_000, (0, 1, 2, 3)),
        PopCheckpoint(A, T, 1, G, 3, 75_000, 20_000, (3, 4)),
        PopCheckpoint(A, RV1, 0, G, 2, 95_000, 60_000, (2,)),
        PopCheckpoint(A, T, 0, "Other", 0, 90_000, 20_000, (0, 1)),  # another group's
    ]
    b.wheel_acks = [PopAck(A, T, 0, G, 0, 90_000, (0,)), PopAck(A, T, 0, G, 0, 90_000, (2,))]
    p = progress.group_progress(b, G, now_ms=NOW)
    assert p.pop is not None and p.pop.inflight == 3 and not p.inflight_unknown
    assert dict(p.pop.inflight_by_queue) == {MessageQueue(T, A, 0): 2, MessageQueue(RV1, A, 0): 1}
    by_queue = {(r.broker_name, r.topic, r.queue_id): r.inflight for r in p.rows}
    assert by_queue == {(A, T, 0): 2, (A, T, 1): 0, (B, T, 0): 0, (A, RV1, 0): 1}
    # waiting 2 (a1) + retry backlog 1 + in flight 3
    assert p.pop.not_done == 6
    out = io.StringIO()
    render.plain(p, out)
    assert "Consume Inflight Total: 3" in out.getvalue()


def test_the_exporter_round_marks_a_pop_retry_queue_stuck_and_leaves_out_its_retry_topic_row() -> None:
    """The fleet round (mqctl exporter) judges a POP group as --watch does. pop_cluster: TopicPop's
    lag a1 5 - 3 = 2; RV1 4 - 3 = 1 (retry lag); RV1's copies revived at 40, 55, 70 and 85 s are
    one message still coming back at 90 s: STUCK on RV1, named. The overview lists RV1 as a group
    "GroupPop_TopicPop" (mqadmin's reading): no group, left out of the round."""
    from mqctl.model import MessageQueue, Rules
    from mqctl.ops.watch.fleet import FleetSampler

    b = pop_cluster()
    _revived(b, [40_000, 55_000, 70_000, 85_000])
    rnd = FleetSampler(b, Rules()).take(now_ms=90_000)
    assert [g.group for g in rnd.groups] == [G]
    (g,) = rnd.groups
    assert g.unsupported is None and g.tick is not None
    rq = MessageQueue(RV1, A, 0)
    status = {w.point.queue: w.status for w in g.tick.view.queues}
    assert status[rq] == "STUCK" and g.tick.view.status == "STUCK"
    assert all(s == "OK" for q, s in status.items() if q != rq)
    assert g.tick.stuck[rq].message is not None and g.tick.stuck[rq].message.unique_key == "UNIQ-1"
    lags = {(r.topic, r.broker_name, r.queue_id): r.lag for r in g.tick.progress.rows}
    assert lags == {(T, A, 0): 0, (T, A, 1): 2, (T, B, 0): 0, (RV1, A, 0): 1}
    assert g.tick.progress.inflight_unknown
