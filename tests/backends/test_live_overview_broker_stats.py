"""The groups overview from GET_BROKER_CONSUME_STATS (317): one request per broker answers what
GET_CONSUME_STATS (208) answers per group, corrected where the broker's two requests differ
(fakebodies.py writes each by the broker's rules: 208 over read queues, 317 over write queues,
317 without pull offsets and always clamping committed offsets), and 208 per group wherever 317
cannot answer the same numbers. Expected values by hand from the model; the path without 317
(a broker that refuses it) is the old one, request for request."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mqctl_testkit.fakecluster import FakeCluster
from mqctl_testkit.fakemodel import Cluster, Queue, Topic
from mqctl_testkit.live_scenario import T0, _queue, build_model

from mqctl.backends.live import LiveBackend

NOT_SUPPORTED = (3, " request type 317 not supported")


def _model() -> Cluster:
    """The live scenario plus what makes the two requests differ:

    * ``Wide`` (broker-a): 4 queues, 2 read, 4 written; GW committed on all 4 (208: queues 0-1);
    * ``Narrow`` (broker-b): 4 queues, 4 read, 2 written; GN committed on 0 and 2 (317: 0-1 only);
    * ``Logical`` (broker-a): a static topic; GS has no committed offset on its queue 1;
    * G1 (online, subscribed to Orders and its retry topic) also committed on TopicTest: both
      requests leave TopicTest out;
    * G3 (broker-a) keeps committed offsets but has no subscription config anywhere.
    """
    model = build_model()
    a, b = model.broker("broker-a"), model.broker("broker-b")
    a.topics["Wide"] = Topic([_queue(6, T0 + 11_000 + q) for q in range(4)], read=2, write=4)
    b.topics["Narrow"] = Topic([_queue(5, T0 + 13_000 + q) for q in range(4)], read=4, write=2)
    a.topics["Logical"] = Topic([_queue(4, T0 + 17_000), _queue(3, T0 + 19_000)], static=True)
    a.offsets["GW"] = {"Wide": {0: 1, 1: 2, 2: 3, 3: 4}}
    b.offsets["GN"] = {"Narrow": {0: 5, 2: 1}}
    a.offsets["GS"] = {"Logical": {0: 2}}
    a.offsets["G1"]["TopicTest"] = {0: 1}
    for broker in (a, b):
        broker.groups += ["GW", "GN", "GS"]
    b.topics["Empty"] = Topic([Queue()])
    return model


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    c = FakeCluster(_model())
    yield c
    c.close()


def _overview(cluster: FakeCluster, detail: bool = False) -> tuple[dict[str, tuple], dict[int, int]]:
    """group -> (found in, tps, failures, queues as (topic, broker, id, max, committed, last, pull)),
    and the requests sent by code."""
    for s in cluster.servers():
        s.requests.clear()
    with LiveBackend(cluster.ns, timeout=20) as backend:
        out = {}
        for ov in backend.groups_overview(detail=detail):
            st = ov.stats
            assert st is not None, ov
            rows = sorted(
                (q.queue.topic, q.queue.broker_name, q.queue.queue_id, q.broker_offset, q.consumer_offset,
                 q.last_timestamp, q.pull_offset)
                for q in st.queues
            )  # fmt: skip
            out[ov.ref.name] = (ov.ref.found_in, st.consume_tps, [f.broker_name for f in st.failures], rows)
        return out, dict(backend.requests)


def _stats_asked(cluster: FakeCluster) -> list[tuple[str, str]]:
    """(broker, group) of every GET_CONSUME_STATS the brokers received."""
    return sorted(
        (s.name, r.ext_fields["consumerGroup"])
        for s in cluster.servers()
        for r in s.requests
        if r.code == 208
    )


def _ts(cluster: FakeCluster, broker: str, topic: str, qid: int, offset: int) -> int:
    return cluster.model.broker(broker).topics[topic].queues[qid].msgs[offset].store_ts


def test_one_request_per_broker_and_208_only_where_317_cannot_answer(cluster: FakeCluster) -> None:
    _, requests = _overview(cluster)
    assert requests[317] == 2 and requests[21] == 2 and 201 not in requests
    # GN on broker-b (2 write < 4 read queues), GS on broker-a (static topic), G3 on broker-a (no
    # subscription config); G3 has no offsets on broker-b: empty there without asking.
    assert _stats_asked(cluster) == [("broker-a", "G3"), ("broker-a", "GS"), ("broker-b", "GN")]
    # with detail (pull offsets, min offsets, committed flags): 208 per group and broker, as before
    got, requests = _overview(cluster, detail=True)
    assert 317 not in requests and requests[208] == 2 * len(got)


def test_the_same_stats_as_208_per_group_pull_offsets_aside(cluster: FakeCluster) -> None:
    fast, _ = _overview(cluster)
    for s in cluster.servers():
        s.errors[317] = NOT_SUPPORTED
    slow, requests = _overview(cluster)
    assert 317 in requests and requests[208] == 2 * len(slow)  # the old path: 208 per group and broker
    assert list(fast) == list(slow)  # the same groups in the same order
    for group in slow:
        found, tps, failures, rows = slow[group]
        assert fast[group][:3] == (found, tps, failures), group
        # a pull offset is known where 208 answered (G3, GS, GN here), unknown (None) from 317
        assert [r[:6] for r in fast[group][3]] == [r[:6] for r in rows], group
        assert all(f[6] in (None, r[6]) for f, r in zip(fast[group][3], rows)), group


def test_write_queues_beyond_the_read_ones_are_dropped(cluster: FakeCluster) -> None:
    got, _ = _overview(cluster)
    # by hand: Wide's read queues 0 and 1, 6 messages each, committed 1 and 2
    assert got["GW"][3] == [
        ("Wide", "broker-a", 0, 6, 1, _ts(cluster, "broker-a", "Wide", 0, 0), None),
        ("Wide", "broker-a", 1, 6, 2, _ts(cluster, "broker-a", "Wide", 1, 1), None),
    ]


def test_missing_queues_and_static_topics_come_from_208(cluster: FakeCluster) -> None:
    got, _ = _overview(cluster)
    assert ("broker-b", "GN") in _stats_asked(cluster) and ("broker-a", "GN") not in _stats_asked(cluster)
    assert [r[:5] for r in got["GN"][3]] == [
        ("Narrow", "broker-b", q, 5, c) for q, c in enumerate((5, 0, 1, 0))
    ]
    # 208 keeps a static topic's missing committed offset negative (317 would say 0)
    assert [r[:5] for r in got["GS"][3]] == [
        ("Logical", "broker-a", 0, 4, 2),
        ("Logical", "broker-a", 1, 3, -1),
    ]


def test_an_online_group_keeps_only_its_subscribed_topics(cluster: FakeCluster) -> None:
    got, _ = _overview(cluster)
    assert not [b for b, g in _stats_asked(cluster) if g == "G1"]  # from 317 on both brokers
    assert {r[0] for r in got["G1"][3]} == {"Orders", "%RETRY%G1"}
    assert got["G1"][1] == 1.625  # 1.5 on broker-a + 0.125 on broker-b


def test_detail_keeps_the_pull_offsets(cluster: FakeCluster) -> None:
    fast, _ = _overview(cluster)
    got, _ = _overview(cluster, detail=True)
    g1 = {r[:3]: r[6] for r in got["G1"][3]}
    assert g1[("Orders", "broker-a", 0)] == 6 and g1[("Orders", "broker-b", 0)] == 8  # max(committed, pulled)
    assert {r[6] for r in fast["G1"][3]} == {None}  # 317 has none


def test_a_broker_that_refuses_317_is_asked_as_before(cluster: FakeCluster) -> None:
    fast, _ = _overview(cluster)
    cluster.broker("broker-b").errors[317] = (16, "no permission for GET_BROKER_CONSUME_STATS")
    mixed, requests = _overview(cluster)
    assert requests[201] == 1  # broker-b's group list
    asked = _stats_asked(cluster)
    assert [g for b, g in asked if b == "broker-b"] == sorted(mixed)  # every group on broker-b
    assert [g for b, g in asked if b == "broker-a"] == ["G3", "GS"]
    for group, (found, tps, failures, rows) in mixed.items():
        assert (found, tps, failures, [r[:6] for r in rows]) == (
            fast[group][:3] + ([r[:6] for r in fast[group][3]],)
        ), group


def test_a_broker_down_fails_every_groups_stats_there(cluster: FakeCluster) -> None:
    cluster.broker("broker-b").down()
    got, _ = _overview(cluster)
    assert all(failures == ["broker-b"] for _f, _t, failures, _r in got.values())
    assert _stats_asked(cluster) == [("broker-a", "G3"), ("broker-a", "GS")]  # nothing retried on broker-b
