"""``LiveBackend.group_presence`` on the fake cluster: what a group without committed offsets asks
to tell whether it broadcasts (its connection list, the route's brokers' offset tables, the
cluster's broker list) goes out in ONE pipelined round; the tables are left unread for clients
that say CLUSTERING; a broker older than 5.1 (no pull offsets) is not asked for its table; a
broker that cannot be reached is followed by the next, and warned about."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mqctl_testkit.fakecluster import FakeCluster
from mqctl_testkit.fakemodel import Broker, Client, Cluster, Msg, Online, Queue, Topic

from mqctl.backends.live import LiveBackend
from mqctl.errors import NotFoundError
from mqctl.model import MessageQueue
from mqctl.ops.broadcast import group_model

G, T = "GroupNoOffsets", "TopicP"
CONN, TABLE, CLUSTER_INFO, STATS = 203, 43, 106, 208


def model(message_model: str | None) -> Cluster:
    """TopicP on broker-a (2 queues) and broker-b (1), G's retry topic on both, no committed
    offset of G; broker-a keeps G's pull positions a0=3, a1=5 (a 5.1+ broker's @broadcast entry),
    broker-b none. ``message_model``: G's clients online with that model (None: offline)."""
    a, b = Broker("broker-a"), Broker("broker-b")
    a.topics = {T: Topic([Queue([Msg(1000)] * 6), Queue([Msg(1000)] * 6)]), f"%RETRY%{G}": Topic([Queue()])}
    b.topics = {T: Topic([Queue([Msg(1000)] * 4)]), f"%RETRY%{G}": Topic([Queue()])}
    a.offsets = {f"{G}@broadcast": {T: {0: 3, 1: 5}}, "Other": {T: {0: 1}}}
    b.offsets = {"Other": {T: {0: 2}}}
    a.groups = b.groups = [G, "Other"]
    online = {}
    if message_model is not None:
        clients = [Client("192.0.2.7@p1", "192.0.2.7:1", [])]
        online[G] = Online(clients, {T: "*"}, message_model=message_model)
    return Cluster([a, b], online)


@pytest.fixture
def offline() -> Iterator[FakeCluster]:
    c = FakeCluster(model(None))
    yield c
    c.close()


def rounds(b: LiveBackend) -> list[list[int]]:
    """Records the request codes of every pipelined round ``b`` sends from now on."""
    sent: list[list[int]] = []
    real = b.net.client.call_many

    def spy(calls, on_answer=None):  # type: ignore[no-untyped-def]
        sent.append(sorted(c.code for c in calls))
        return real(calls, on_answer)

    b.net.client.call_many = spy  # type: ignore[method-assign]
    return sent


A0, A1 = MessageQueue(T, "broker-a", 0), MessageQueue(T, "broker-a", 1)


def test_an_offline_group_is_asked_in_one_round(offline: FakeCluster) -> None:
    with LiveBackend(offline.ns) as b:
        stats = b.consume_stats(G, detail=False)
        assert all(q.consumer_offset == 0 for q in stats.queues)  # nothing committed: the case
        sent = rounds(b)
        seen = b.group_presence(G)
        assert b.take_warnings() == []
    # the connection list to the route's first broker, both tables, the cluster's brokers
    assert sent == [[TABLE, TABLE, CLUSTER_INFO, CONN]]
    assert seen.connection is None and seen.pull_offsets == ((A0, 3), (A1, 5))


def test_the_model_read_from_it_equals_asking_apart(offline: FakeCluster) -> None:
    """What ops.broadcast.group_model concludes from the one round: what the two questions
    asked apart say (the connection list: nobody online; the tables: broker-a's entries)."""
    with LiveBackend(offline.ns) as b:
        m = group_model(b, G, None, rows=[])
    with LiveBackend(offline.ns) as apart:
        pulls = apart.broadcast_pull_offsets(G)
        with pytest.raises(NotFoundError, match="no consumer online"):
            apart.consumer_connection(G)
    assert m is not None and m.source == "topic@group@broadcast" and m.clients == ()
    assert dict(m.pull_offsets) == pulls[G] == {A0: 3, A1: 5}


def test_clustering_clients_leave_the_tables_unread() -> None:
    """Online CLUSTERING: a clustering group, whatever the tables say; a table that failed is not
    warned about (it was not needed)."""
    c = FakeCluster(model("CLUSTERING"))
    try:
        c.broker("broker-b").down()
        with LiveBackend(c.ns) as b:
            b.topic_route(f"%RETRY%{G}")
            sent = rounds(b)
            seen = b.group_presence(G)
            assert b.take_warnings() == []
            assert group_model(b, G, None, rows=[]) is None
        assert sent[0] == [TABLE, TABLE, CLUSTER_INFO, CONN]
        assert seen.connection is not None and seen.connection.message_model == "CLUSTERING"
        assert seen.pull_offsets is None
    finally:
        c.close()


def test_broadcasting_clients_with_their_pull_offsets() -> None:
    c = FakeCluster(model("BROADCASTING"))
    try:
        with LiveBackend(c.ns) as b:
            m = group_model(b, G, None, rows=[])
        assert (
            m is not None and m.source == "clients" and [x.client_id for x in m.clients] == ["192.0.2.7@p1"]
        )
        assert m.pull_offsets == ((A0, 3), (A1, 5))
    finally:
        c.close()


def test_a_4x_broker_is_not_asked_for_its_table(offline: FakeCluster) -> None:
    """4.9.7 (version 407) keeps no pull offsets: once a broker has answered with its version
    (the group's stats), its table is not asked for; one of unknown version still is."""
    offline.broker("broker-a").version = 407
    with LiveBackend(offline.ns) as b:
        b.consume_stats(G, detail=False)
        sent = rounds(b)
        seen = b.group_presence(G)
    assert sent == [[TABLE, CLUSTER_INFO, CONN]]  # broker-b's (5.3.3) only
    assert seen.pull_offsets == ()  # broker-a's @broadcast entry is not read: a 4.x broker writes none
    with LiveBackend(offline.ns) as fresh:  # versions unknown: both asked
        sent = rounds(fresh)
        fresh.topic_route(f"%RETRY%{G}")
        fresh.group_presence(G)
    assert sent[-1] == [TABLE, TABLE, CLUSTER_INFO, CONN]


def test_an_unreachable_first_broker_is_followed_and_warned_about() -> None:
    c = FakeCluster(model("BROADCASTING"))
    try:
        c.broker("broker-a").down()
        with LiveBackend(c.ns) as b:
            seen = b.group_presence(G)
            warnings = b.take_warnings()
        assert seen.connection is not None and seen.connection.message_model == "BROADCASTING"
        assert seen.pull_offsets == ()  # broker-a's entries are out of reach; broker-b has none
        assert [w.source for w in warnings] == ["broker-a"]
        assert "broadcast pull offsets" in warnings[0].message
        assert c.broker("broker-b").codes().count(CONN) == 1
    finally:
        c.close()


def test_a_broker_the_route_lacks_is_asked_in_a_second_round(offline: FakeCluster) -> None:
    """G's retry topic only on broker-a: broker-b's table is asked once the cluster's broker
    list (from the first round) names it."""
    offline.model.broker("broker-b").topics.pop(f"%RETRY%{G}")
    offline.model.broker("broker-b").offsets = {f"{G}@broadcast": {T: {0: 4}}}
    try:
        with LiveBackend(offline.ns) as b:
            b.topic_route(f"%RETRY%{G}")
            sent = rounds(b)
            seen = b.group_presence(G)
        assert sent == [[TABLE, CLUSTER_INFO, CONN], [TABLE]]
        assert seen.pull_offsets == ((A0, 3), (A1, 5), (MessageQueue(T, "broker-b", 0), 4))
    finally:
        offline.model.broker("broker-b").topics[f"%RETRY%{G}"] = Topic([Queue()])


def test_a_cluster_list_that_cannot_be_read_is_asked_again_only_when_needed() -> None:
    """The broker list rides along; when its body cannot be read, a group whose clients say
    CLUSTERING needs no list and gets its answer; an offline group's tables need it, and the
    list asked again on its own says what is wrong with it."""
    from mqctl_testkit.fakebodies import Reply

    from mqctl.errors import ProtocolError

    for message_model in ("CLUSTERING", None):
        c = FakeCluster(model(message_model))
        ns = c.namesrvs[0]
        real = ns.answer
        ns.answer = lambda code, f, v, real=real: (
            Reply(0, None, {}, b"{garbage") if code == CLUSTER_INFO else real(code, f, v)
        )
        try:
            with LiveBackend(c.ns) as b:
                if message_model is None:
                    with pytest.raises(ProtocolError):
                        b.group_presence(G)
                else:
                    assert b.group_presence(G).connection is not None
            assert ns.codes().count(CLUSTER_INFO) == (1 if message_model else 2)
        finally:
            c.close()
