"""A broadcasting group on the fake cluster (-n): the clients' heartbeats say BROADCASTING, so
consumerProgress lists the client instances the broker knows and exits 7; with the clients' files
each client is marked connected or not; a reset refuses a connected client; the brokers'
topic@group@broadcast entries (GET_ALL_CONSUMER_OFFSET) are read for what they are; a clustering
group's read asks nothing more than before."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mqctl_testkit.broadcast_store import BC_A, BC_B, write_client
from mqctl_testkit.fakecluster import FakeCluster
from mqctl_testkit.fakemodel import Broker, Client, Cluster, Msg, Online, Queue, Topic
from mqctl_testkit.live_scenario import MINUTE, NOW, build_model, cli_env, run_here

G, T = "GroupBc", "TopicBc"
T0 = NOW - 60 * MINUTE


def _q(n: int) -> Queue:
    return Queue([Msg(T0 + i * MINUTE, "TagA" if i % 2 == 0 else "TagB") for i in range(n)])


def model() -> Cluster:
    """TopicBc: broker-a 0..2 (10, 10, 0 messages), broker-b 0..1 (10, 10); GroupBc online
    BROADCASTING with clients bcA and bcC; the 5.1+ brokers' GroupBc@broadcast pull positions."""
    a, b = Broker("broker-a"), Broker("broker-b")
    a.topics = {T: Topic([_q(10), _q(10), Queue()]), f"%RETRY%{G}": Topic([Queue()])}
    b.topics = {T: Topic([_q(10), _q(10)]), f"%RETRY%{G}": Topic([Queue()])}
    a.offsets = {f"{G}@broadcast": {T: {0: 4, 1: 4, 2: 0}}, "G2": {T: {0: 3}}}
    b.offsets = {f"{G}@broadcast": {T: {0: 9, 1: 9}}}
    a.groups = b.groups = [G, "G2"]
    clients = [Client("192.0.2.2@bcA", "192.0.2.2:1", []), Client("192.0.2.3@bcC", "192.0.2.3:2", [])]
    online = Online(clients, {T: "*"}, message_model="BROADCASTING")
    return Cluster([b, a], {G: online})


@pytest.fixture(scope="module")
def cluster() -> Iterator[FakeCluster]:
    c = FakeCluster(model())
    yield c
    c.close()


@pytest.fixture
def hosts(tmp_path: Path) -> Path:
    root = tmp_path / "hosts"
    for host, cid, offs in (("hostA", "192.0.2.2@bcA", BC_A), ("hostB", "192.0.2.2@bcB", BC_B)):
        p = write_client(root, host, cid, offs)
        old = time.time() - 60
        os.utime(p, (old, old))
    return root


def test_the_clients_say_broadcasting_exit_7_listing_them(cluster: FakeCluster) -> None:
    r = run_here("consumerProgress", "-g", G, "-n", cluster.ns, "-o", "json", "--now-ms", str(NOW))
    assert r.code == 7, r.err
    doc = json.loads(r.out)
    assert doc["modelFrom"] == "clients" and doc["backend"] == "live"
    assert [c["clientId"] for c in doc["connected"]] == ["192.0.2.2@bcA", "192.0.2.3@bcC"]
    pulls = {(q["brokerName"], q["queueId"]): q["pullOffset"] for q in doc["brokerPullOffsets"]["queues"]}
    assert pulls == {
        ("broker-a", 0): 4,
        ("broker-a", 1): 4,
        ("broker-a", 2): 0,
        ("broker-b", 0): 9,
        ("broker-b", 1): 9,
    }
    assert "broadcasting consumer group" in r.error_line()
    text = run_here("consumerProgress", "-g", G, "-n", cluster.ns, "-o", "plain")
    assert "Client instances the broker knows (2 online)" in text.out and "192.0.2.3@bcC" in text.out
    # -t: the broker's table would be meaningless numbers; it is not printed
    with_topic = run_here("consumerProgress", "-g", G, "-t", T, "-n", cluster.ns, "-o", "plain")
    assert with_topic.code == 7 and "#Diff" not in with_topic.out


def test_each_client_connected_or_not(cluster: FakeCluster, hosts: Path) -> None:
    r = run_here(
        "consumerProgress",
        "-g",
        G,
        "-n",
        cluster.ns,
        "--client-offsets",
        str(hosts),
        "-o",
        "json",
        "--now-ms",
        str(NOW),
    )
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert [(c["client"], c["connected"], c["totals"]["diff"]) for c in doc["clients"]] == [
        ("hostA/192.0.2.2@bcA", True, 22),
        ("hostB/192.0.2.2@bcB", False, 0),
    ]
    assert doc["connectedWithoutFile"] == ["192.0.2.3@bcC"] and "192.0.2.3@bcC" in r.err


def test_a_connected_client_is_never_reset(cluster: FakeCluster, hosts: Path, tmp_path: Path) -> None:
    a = hosts / "hostA/.rocketmq_offsets/192.0.2.2@bcA" / G / "offsets.json"
    before = a.read_bytes()
    env = cli_env(MQCTL_JOURNAL_DIR=str(tmp_path / "j"))
    args = [
        "resetOffsetByTime",
        "-g",
        G,
        "-t",
        T,
        "--to-earliest",
        "-n",
        cluster.ns,
        "--client-offsets",
        str(a),
    ]
    r = run_here(*args, "--execute", env=env)
    assert r.code == 5 and "192.0.2.2@bcA is connected to the brokers" in r.error_line()
    assert a.read_bytes() == before and not (tmp_path / "j").exists()
    b = hosts / "hostB/.rocketmq_offsets/192.0.2.2@bcB" / G / "offsets.json"
    ok = run_here(*args[:-1], str(b), "--execute", env=env)
    assert ok.code == 0, ok.err


def test_the_overview_marks_the_broadcasting_group(cluster: FakeCluster) -> None:
    doc = json.loads(run_here("consumerProgress", "-n", cluster.ns, "-o", "json").out)
    rows = {r["group"]: r for r in doc["rows"]}
    assert (rows[G]["model"], rows[G]["progressOn"], rows[G]["diffTotal"]) == (
        "BROADCASTING",
        "clients",
        None,
    )
    assert rows["G2"]["progressOn"] == "broker"


def test_a_clustering_groups_read_asks_nothing_more() -> None:
    """G1 commits offsets: no connection list and no offset table are asked to tell its model."""
    c = FakeCluster(build_model())
    try:
        r = run_here("consumerProgress", "-g", "G1", "-n", c.ns, "-o", "plain")
        assert r.code == 0, r.err
        codes = [code for s in c.servers() for code in s.codes()]
        assert 203 not in codes and 43 not in codes
    finally:
        c.close()


def test_one_groups_pull_offsets_or_every_groups(cluster: FakeCluster) -> None:
    from mqctl.backends.live import LiveBackend
    from mqctl.model import MessageQueue

    with LiveBackend(cluster.ns) as b:
        every = b.broadcast_pull_offsets()
        mine = b.broadcast_pull_offsets(G)
        none = b.broadcast_pull_offsets("G2")  # committed offsets only: no @broadcast entry
        other = b.broadcast_pull_offsets("GroupB")  # a name inside "GroupBc": not GroupBc's entries
    want = {
        MessageQueue(T, "broker-a", 0): 4,
        MessageQueue(T, "broker-a", 1): 4,
        MessageQueue(T, "broker-a", 2): 0,
    }
    want |= {MessageQueue(T, "broker-b", 0): 9, MessageQueue(T, "broker-b", 1): 9}
    assert every == {G: want} and mine == {G: want}
    assert none == {} and other == {}


def test_after_the_overview_its_offset_tables_are_used_once(cluster: FakeCluster) -> None:
    """The overview's GET_ALL_CONSUMER_OFFSET answers serve the broadcast pull positions asked
    right after it (one snapshot, no second round); a later question asks the brokers again."""
    from mqctl.backends.live import LiveBackend

    with LiveBackend(cluster.ns) as b:
        b.groups_overview()
        tables = b.requests[43]
        first = b.broadcast_pull_offsets()
        assert b.requests[43] == tables == 2  # one per broker, by the overview only
        second = b.broadcast_pull_offsets()
        assert b.requests[43] == 4
    with LiveBackend(cluster.ns) as fresh:
        alone = fresh.broadcast_pull_offsets()
    assert first == second == alone and set(alone) == {G}
