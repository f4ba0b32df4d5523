"""backends/live_before.py: what a sampler keeps of the name servers' answers. A name server just
restarted first knows no route, then routes and a cluster with only the brokers that registered
again (measured on a real 5.3.3 cluster: TOPIC_NOT_EXIST for 4-8 s, then one broker of two). The
routes and clusters below are written by hand; each expected value is read off them."""

from __future__ import annotations

from mqctl.backends.live_before import Before
from mqctl.errors import UnreachableError
from mqctl.model import BrokerData, QueueData, TopicRoute
from mqctl.remoting.bodies import ClusterInfo

NS = "10.0.0.9:9876"
A = BrokerData("broker-a", "C", ((0, "10.0.0.1:10911"),))
B = BrokerData("broker-b", "C", ((0, "10.0.0.2:10911"),))
QA, QB = QueueData("broker-a", 4, 4), QueueData("broker-b", 8, 8)
BOTH = TopicRoute("T", (QA, QB), (A, B))
ONLY_A = TopicRoute("T", (QA,), (A,))
ONLY_B = TopicRoute("T", (QB,), (B,))


def test_a_broker_missing_from_a_route_is_kept_for_one_refresh_then_dropped() -> None:
    before = Before()
    before.keep({"T": BOTH}, None)
    # the restarted name server knows broker-a only: broker-b is still asked, said once
    kept = before.route("T", ONLY_A, NS)
    assert kept == TopicRoute("T", (QA, QB), (A, B))
    assert before.notes == [
        f"name server {NS}'s route of T lacks broker-b (restarted, not registered again yet?): still "
        "asked until the next refresh of the routes"
    ]
    # one refresh later broker-b is still not there: taken out of the cluster, dropped silently
    before.notes.clear()
    before.keep({"T": kept}, None)
    assert before.route("T", ONLY_A, NS) == ONLY_A and before.notes == []
    before.keep({"T": ONLY_A}, None)
    assert before.route("T", ONLY_A, NS) == ONLY_A and before.notes == []


def test_a_broker_back_by_the_next_refresh_is_the_name_servers_again() -> None:
    before = Before()
    before.keep({"T": BOTH}, None)
    assert before.route("T", ONLY_B, NS).broker_names == ("broker-b", "broker-a")  # a kept, at the end
    before.keep({"T": before.route("T", BOTH, NS)}, None)  # both registered again
    assert before.carried == {"T": set()}
    # a later loss of broker-a is a new one: kept once more
    assert before.route("T", ONLY_B, NS).broker_names == ("broker-b", "broker-a")


def test_a_route_the_name_server_has_none_of_and_nothing_learnt() -> None:
    before = Before()
    assert before.no_route("T", NS) is None and before.notes == []
    assert before.route("T", ONLY_A, NS) == ONLY_A  # nothing learnt: the answer as it is
    before.keep({"T": BOTH}, None)
    assert before.no_route("T", NS) == BOTH
    assert before.notes == [
        f"name server {NS} has no route for T (restarted, the brokers not registered again yet?): the "
        "route learnt before is used"
    ]


def test_a_cluster_without_a_broker_keeps_it_once() -> None:
    before = Before()
    old = ClusterInfo({"broker-a": A, "broker-b": B}, {"C": ("broker-a", "broker-b")})
    before.keep({}, old)
    partial = ClusterInfo({"broker-b": B}, {"C": ("broker-b",)})
    kept = before.cluster_info(partial, NS)
    assert kept == ClusterInfo({"broker-b": B, "broker-a": A}, {"C": ("broker-b", "broker-a")})
    assert before.notes == [
        f"name server {NS}'s cluster lacks broker-a (restarted, not registered again yet?): still asked "
        "until the next refresh of the routes"
    ]
    before.keep({}, kept)
    assert before.cluster_info(partial, NS) == partial  # still gone one refresh later: dropped


def test_name_servers_away_and_back_are_said_once_each() -> None:
    before = Before()
    before.away(UnreachableError("name server 10.0.0.9:9876: Connection refused"))
    before.away(UnreachableError("name server 10.0.0.9:9876: Connection refused"))
    assert before.away_this_round and len(before.notes) == 1
    since = before.away_since
    assert before.notes[0] == (
        f"name server 10.0.0.9:9876: Connection refused (since {since}); the routes and brokers "
        "learnt before are used until a name server answers"
    )
    before.new_round()
    assert not before.away_this_round
    before.answered()
    before.answered()
    assert before.notes[1:] == [f"a name server answers again (none did since {since})"]
