"""The groups overview's consume stats: GET_CONSUME_STATS (208) for each (group, topic) pair of a
broker's offset table, with the topic named (the broker then skips its scan of the whole table),
merged into what 208 without a topic answers for the group (fakebodies.py writes 208 by the
broker's rules: read queues, an online group's unsubscribed topics left out, a static topic's
negative committed offset kept). Expected values by hand from the model; a broker whose table
cannot be read is asked 208 without a topic per group, as mqadmin asks."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mqctl_testkit.fakecluster import FakeCluster
from mqctl_testkit.fakemodel import Cluster, Queue, Topic
from mqctl_testkit.live_scenario import T0, _queue, build_model

from mqctl.backends.live import LiveBackend


def _model() -> Cluster:
    """The live scenario plus what 208's rules decide:

    * ``Wide`` (broker-a): 4 queues, 2 read, 4 written; GW committed on all 4 (208: queues 0-1);
    * ``Narrow`` (broker-b): 4 queues, 4 read, 2 written; GN committed on 0 and 2 (208: all 4);
    * ``Logical`` (broker-a): a static topic; GS has no committed offset on its queue 1;
    * G1 (online, subscribed to Orders and its retry topic) also committed on TopicTest: 208
      leaves TopicTest out, asked with the topic or not;
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


def _stats_asked(cluster: FakeCluster) -> list[tuple[str, str, str | None]]:
    """(broker, group, topic or None) of every GET_CONSUME_STATS the brokers received."""
    return sorted(
        (
            (s.name, r.ext_fields["consumerGroup"], r.ext_fields.get("topic"))
            for s in cluster.servers()
            for r in s.requests
            if r.code == 208
        ),
        key=str,
    )


def _ts(cluster: FakeCluster, broker: str, topic: str, qid: int, offset: int) -> int:
    return cluster.model.broker(broker).topics[topic].queues[qid].msgs[offset].store_ts


def _pairs(cluster: FakeCluster) -> list[tuple[str, str, str | None]]:
    """Every (broker, group, topic) of the brokers' offset tables (the model's input)."""
    return sorted(
        ((b.name, g, t) for b in cluster.model.brokers for g, topics in b.offsets.items() for t in topics),
        key=str,
    )


def test_one_208_per_group_and_topic_of_each_offset_table(cluster: FakeCluster) -> None:
    for detail in (False, True):
        _, requests = _overview(cluster, detail=detail)
        # 21: each broker's topics, to ask a group's connections where its retry topic is
        assert requests[43] == 2 and requests[201] == 2 and requests[21] == 2 and 317 not in requests
        # G1's TopicTest is asked too (the broker leaves it out); a group without a topic in a
        # broker's table (G3 on broker-b) is not asked there at all
        assert _stats_asked(cluster) == _pairs(cluster)
        assert requests[208] == len(_pairs(cluster))


def test_the_same_stats_as_208_without_a_topic(cluster: FakeCluster) -> None:
    got, _ = _overview(cluster, detail=True)
    with LiveBackend(cluster.ns, timeout=20) as backend:
        for group, (_found, tps, failures, rows) in got.items():
            asked = [(b, 208, {"consumerGroup": group}) for b in ("broker-a", "broker-b")]
            one = backend.merge_stats(
                group, asked, backend.ask(asked)
            )  # no topic: the broker walks its table
            assert tps == one.consume_tps and failures == []
            assert rows == sorted(
                (q.queue.topic, q.queue.broker_name, q.queue.queue_id, q.broker_offset, q.consumer_offset,
                 q.last_timestamp, q.pull_offset)
                for q in one.queues
            ), group  # fmt: skip


def test_read_queues_only(cluster: FakeCluster) -> None:
    got, _ = _overview(cluster)
    # by hand: Wide's read queues 0 and 1, 6 messages each, committed 1 and 2 (nothing pulled beyond)
    assert got["GW"][3] == [
        ("Wide", "broker-a", 0, 6, 1, _ts(cluster, "broker-a", "Wide", 0, 0), 1),
        ("Wide", "broker-a", 1, 6, 2, _ts(cluster, "broker-a", "Wide", 1, 1), 2),
    ]
    # Narrow: all 4 read queues though only 2 are written; no committed offset reads as 0
    assert [r[:5] for r in got["GN"][3]] == [
        ("Narrow", "broker-b", q, 5, c) for q, c in enumerate((5, 0, 1, 0))
    ]


def test_a_static_topic_keeps_its_negative_committed_offset(cluster: FakeCluster) -> None:
    got, _ = _overview(cluster)
    assert [r[:5] for r in got["GS"][3]] == [
        ("Logical", "broker-a", 0, 4, 2),
        ("Logical", "broker-a", 1, 3, -1),
    ]


def test_an_online_group_keeps_only_its_subscribed_topics(cluster: FakeCluster) -> None:
    got, _ = _overview(cluster)
    assert {r[0] for r in got["G1"][3]} == {"Orders", "%RETRY%G1"}
    assert got["G1"][1] == 1.625  # 1.5 on broker-a + 0.125 on broker-b
    g1 = {r[:3]: r[6] for r in got["G1"][3]}
    assert g1[("Orders", "broker-a", 0)] == 6 and g1[("Orders", "broker-b", 0)] == 8  # max(committed, pulled)


def test_a_broker_whose_table_cannot_be_read_walks_its_own(cluster: FakeCluster) -> None:
    whole, _ = _overview(cluster)
    cluster.broker("broker-b").errors[43] = (1, "No consumer offset in this broker")
    mixed, requests = _overview(cluster)
    asked = _stats_asked(cluster)
    assert [(g, t) for b, g, t in asked if b == "broker-b"] == sorted(((g, None) for g in mixed), key=str)
    assert [(b, g, t) for b, g, t in asked if b == "broker-a"] == [
        p for p in _pairs(cluster) if p[0] == "broker-a"
    ]
    assert set(mixed) <= set(whole)
    for group, (_found, tps, failures, rows) in mixed.items():
        assert (tps, failures, rows) == whole[group][1:], group


def test_a_broker_down_fails_every_groups_stats_there(cluster: FakeCluster) -> None:
    cluster.broker("broker-b").down()
    got, _ = _overview(cluster)
    assert all(failures == ["broker-b"] for _f, _t, failures, _r in got.values())
    assert [b for b, _g, _t in _stats_asked(cluster)] == ["broker-a"] * len(
        [p for p in _pairs(cluster) if p[0] == "broker-a"]
    )  # nothing on broker-b


def test_groups_come_in_mqadmins_order_whatever_the_name_servers_list_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """mqadmin puts the topic list into a HashSet and walks it: the overview's retry-topic groups
    come in that order even when the name server lists its topics otherwise (here reversed; the
    client works the order out while the brokers answer, or after them)."""
    from mqctl_testkit import fakebodies
    from mqctl_testkit.fakemodel import hashset_order

    from mqctl.model import FOUND_RETRY_TOPIC

    model = build_model()
    names = [f"Grp{i:02d}" for i in range(20)]
    for broker in model.brokers:
        for g in names:
            broker.topics[f"%RETRY%{g}"] = Topic([Queue()])
    monkeypatch.setattr(fakebodies, "hashset_order", lambda items: list(reversed(hashset_order(items))))
    c = FakeCluster(model)
    try:
        with LiveBackend(c.ns, timeout=20) as backend:
            overviews = backend.groups_overview()
            listed = [ov.ref.name for ov in overviews if FOUND_RETRY_TOPIC in ov.ref.found_in]
            online = {ov.ref.name: len(ov.connection.connections) for ov in overviews if ov.connection}
    finally:
        c.close()
    sent = list(reversed(hashset_order(model.topic_names())))  # what the name server listed
    expected = [t.removeprefix("%RETRY%") for t in hashset_order(sent) if t.startswith("%RETRY%")]
    assert listed == list(dict.fromkeys(expected))
    assert listed != list(reversed(listed))  # the list was not already in that order
    assert online == {"G1": 2}  # each group's connections are its own, asked in the list's order


def test_connections_are_asked_where_the_groups_retry_topic_is() -> None:
    """Clients register only with the brokers they heartbeat to, which hold the group's retry
    topic; mqadmin asks a broker of that topic's route. G7's clients heartbeat to broker-a alone
    (its retry topic is there only) while broker-b comes first: the overview asks broker-b for
    every group with the tables, then G7 again at broker-a, and shows G7's two clients. G1's retry
    topic is on both brokers: broker-b's answer stands (no second request)."""
    from mqctl_testkit.fakemodel import Client, Online

    model = build_model()
    a = model.broker("broker-a")
    a.topics["OnlyA"] = Topic([_queue(3, T0)])
    a.topics["%RETRY%G7"] = Topic([Queue()])
    a.offsets["G7"] = {"OnlyA": {0: 1}}
    a.groups.append("G7")
    model.online["G7"] = Online(
        clients=[
            Client("10.0.0.7@1", "10.0.0.7:1", [("OnlyA", "broker-a", 0)]),
            Client("10.0.0.8@2", "10.0.0.8:2", []),
        ],
        subscriptions={"OnlyA": "*"},
        heartbeats_to=("broker-a",),
    )
    assert [b.name for b in model.brokers][0] == "broker-b"
    c = FakeCluster(model)
    try:
        with LiveBackend(c.ns, timeout=20) as backend:
            overviews = {ov.ref.name: ov for ov in backend.groups_overview()}
        asked = sorted(
            (s.name, r.ext_fields["consumerGroup"]) for s in c.servers() for r in s.requests if r.code == 203
        )
    finally:
        c.close()
    clients = overviews["G7"].connection
    assert clients is not None and sorted(x.client_id for x in clients.connections) == [
        "10.0.0.7@1",
        "10.0.0.8@2",
    ]
    assert [x for x in asked if x[1] == "G7"] == [("broker-a", "G7"), ("broker-b", "G7")]
    assert [x for x in asked if x[1] == "G1"] == [("broker-b", "G1")]
    assert overviews["G1"].connection is not None
