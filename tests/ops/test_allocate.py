"""Allocation strategies against allocations worked out by hand from the spec's formulas (7.2)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import pytest
from mqctl_testkit.memory_backend import MemoryBackend

from mqctl.errors import NotFoundError, UsageError
from mqctl.model import MessageQueue, TopicConfig
from mqctl.ops.allocate import allocate_mq, compare, split_ip_list
from mqctl.ops.strategies import (
    Averagely,
    AveragelyByCircle,
    ByConfig,
    ByMachineRoom,
    ConsistentHash,
    MachineRoomNearby,
    RoomResolver,
    build_strategy,
    md5_hash,
    message_queue_str,
    parse_config_queues,
)


def qs(broker: str, n: int, topic: str = "T") -> list[MessageQueue]:
    return [MessageQueue(topic, broker, i) for i in range(n)]


# The in-memory backend of the whole Protocol: broker -> topic -> config, route order = dict order.
FakeBackend = MemoryBackend


def two_brokers(topic: str = "TopicTest", n: int = 4) -> FakeBackend:
    cfg = TopicConfig(topic, read_queue_nums=n, write_queue_nums=n)
    return FakeBackend({"broker-a": {topic: cfg}, "broker-b": {topic: cfg}})


def short(mqs: Sequence[MessageQueue]) -> list[str]:
    return [f"{mq.broker_name[-1]}{mq.queue_id}" for mq in mqs]


# --- AVG / AVG_BY_CIRCLE ----------------------------------------------------------------------


def test_avg_eight_over_three() -> None:
    mq_all = qs("a", 8)
    cids = ["c0", "c1", "c2"]
    got = [short(Averagely().allocate(c, mq_all, cids)) for c in cids]
    assert got == [["a0", "a1", "a2"], ["a3", "a4", "a5"], ["a6", "a7"]]


def test_avg_fewer_queues_than_consumers() -> None:
    mq_all = qs("a", 2)
    cids = ["c0", "c1", "c2"]
    assert [short(Averagely().allocate(c, mq_all, cids)) for c in cids] == [["a0"], ["a1"], []]


def test_avg_even_split() -> None:
    mq_all = qs("a", 6)
    assert short(Averagely().allocate("y", mq_all, ["x", "y"])) == ["a3", "a4", "a5"]


def test_avg_by_circle() -> None:
    mq_all = qs("a", 8)
    cids = ["c0", "c1", "c2"]
    got = [short(AveragelyByCircle().allocate(c, mq_all, cids)) for c in cids]
    assert got == [["a0", "a3", "a6"], ["a1", "a4", "a7"], ["a2", "a5"]]


@pytest.mark.parametrize(
    "strategy", [Averagely(), AveragelyByCircle(), ConsistentHash(), ByMachineRoom(frozenset({"x"}))]
)
def test_preconditions(strategy) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError, match="^currentCID is empty$"):
        strategy.allocate("", qs("a", 1), ["c"])
    with pytest.raises(UsageError, match="^mqAll is null or mqAll empty$"):
        strategy.allocate("c", [], ["c"])
    with pytest.raises(UsageError, match="^cidAll is null or cidAll empty$"):
        strategy.allocate("c", qs("a", 1), [])
    assert strategy.allocate("stranger", qs("a", 1), ["c"]) == []


def test_duplicate_client_id_leaves_queues_unassigned() -> None:
    mq_all = qs("a", 6)
    cids = ["a", "b", "a"]  # "a" takes index 0 twice; index 2's share goes to nobody
    assert short(Averagely().allocate("a", mq_all, cids)) == ["a0", "a1"]
    assert short(Averagely().allocate("b", mq_all, cids)) == ["a2", "a3"]


# --- CONSISTENT_HASH -------------------------------------------------------------------------


def test_md5_hash_known_digest() -> None:
    # md5("abc") = 900150983cd24fb0d6963f7d28e17f72
    assert md5_hash("abc") == 0x90015098
    assert md5_hash("") == 0xD41D8CD9  # md5("") = d41d8cd98f00b204...


def test_message_queue_string() -> None:
    mq = MessageQueue("T", "broker-a", 3)
    assert message_queue_str(mq) == "MessageQueue [topic=T, brokerName=broker-a, queueId=3]"


def _first4(s: str) -> int:
    return int(hashlib.md5(s.encode()).hexdigest()[:8], 16)  # noqa: S324


def test_consistent_hash_md5_ring() -> None:
    cids = ["10.0.0.1", "10.0.0.2"]
    mq_all = qs("broker-a", 6, "TopicTest")
    points = sorted((_first4(f"{c}-{i}"), c) for c in cids for i in range(3))
    expected: dict[str, list[int]] = {c: [] for c in cids}
    for q in range(6):
        h = _first4(f"MessageQueue [topic=TopicTest, brokerName=broker-a, queueId={q}]")
        owner = next((c for p, c in points if p >= h), points[0][1])
        expected[owner].append(q)
    strat = ConsistentHash(3)
    got = {c: [mq.queue_id for mq in strat.allocate(c, mq_all, cids)] for c in cids}
    assert got == expected
    assert sorted(got["10.0.0.1"] + got["10.0.0.2"]) == list(range(6))


def _qid_or(table: dict[str, int]):  # type: ignore[no-untyped-def]
    def h(key: str) -> int:
        if key.startswith("MessageQueue ["):
            return int(key.split("queueId=")[1].rstrip("]"))
        return table[key]

    return h


def test_consistent_hash_equal_hash_overwrites() -> None:
    strat = ConsistentHash(1, hash_fn=_qid_or({"c1-0": 10, "c2-0": 10}))
    assert strat.ring(["c1", "c2"]) == {10: "c2"}  # c2-0 replaced c1-0
    mq_all = [MessageQueue("T", "b", q) for q in (5, 30)]
    assert strat.allocate("c1", mq_all, ["c1", "c2"]) == []
    assert strat.allocate("c2", mq_all, ["c1", "c2"]) == mq_all


def test_consistent_hash_wraps_and_continues_numbering() -> None:
    seen: list[str] = []
    table = {"c1-0": 100, "c1-1": 200, "c2-0": 300}

    def h(key: str) -> int:
        seen.append(key)
        if key.startswith("MessageQueue"):
            return int(key.split("queueId=")[1].rstrip("]"))
        return table[key]

    strat = ConsistentHash(1, hash_fn=h)
    mq_all = [MessageQueue("T", "b", q) for q in (50, 150, 250, 350)]
    # a duplicated id continues at c1-1; 350 is past the last point and wraps to 100 (c1)
    assert [mq.queue_id for mq in strat.allocate("c1", mq_all, ["c1", "c1", "c2"])] == [50, 150, 350]
    assert [mq.queue_id for mq in strat.allocate("c2", mq_all, ["c1", "c1", "c2"])] == [250]
    assert "c1-1" in seen


def test_consistent_hash_zero_and_negative_nodes() -> None:
    assert ConsistentHash(0).allocate("c", qs("a", 3), ["c"]) == []
    with pytest.raises(UsageError, match="illegal virtualNodeCnt :-1"):
        ConsistentHash(-1)


# --- CONFIG / MACHINE_ROOM / MACHINE_ROOM_NEARBY ----------------------------------------------


def test_config_ignores_inputs() -> None:
    strat = ByConfig(parse_config_queues(["broker-a:0,2", "Other/broker-b:1"]))
    got = strat.allocate("", [], [], topic="T")
    assert got == [
        MessageQueue("T", "broker-a", 0),
        MessageQueue("T", "broker-a", 2),
        MessageQueue("Other", "broker-b", 1),
    ]
    with pytest.raises(UsageError):
        parse_config_queues(["broker-a"])
    with pytest.raises(UsageError):
        parse_config_queues(["broker-a:x"])


def test_machine_room() -> None:
    mq_all = qs("hz@b1", 4) + qs("b3", 2) + qs("sh@b2", 3) + qs("bj@b4", 1) + qs("hz@x@y", 1)
    strat = ByMachineRoom(frozenset({"hz", "sh"}))
    cids = ["c0", "c1", "c2"]
    # pre = hz@b1 0-3, sh@b2 0-2 (7 queues); mod = 2, rem = 1
    got = [[f"{mq.broker_name}:{mq.queue_id}" for mq in strat.allocate(c, mq_all, cids)] for c in cids]
    assert got == [["hz@b1:0", "hz@b1:1", "sh@b2:2"], ["hz@b1:2", "hz@b1:3"], ["sh@b2:0", "sh@b2:1"]]


def test_machine_room_nearby() -> None:
    mq_all = qs("hz@b1", 4) + qs("sh@b2", 2) + qs("bj@b3", 2)
    cids = ["c1@hz", "c2@hz", "c3@sh"]
    strat = MachineRoomNearby(Averagely(), RoomResolver())
    assert strat.name == "MACHINE_ROOM_NEARBY-AVG"
    got = {c: [f"{mq.broker_name}:{mq.queue_id}" for mq in strat.allocate(c, mq_all, cids)] for c in cids}
    # own room by AVG among the room's consumers; bj has no consumer: AVG over everyone (1, 1, 0)
    assert got == {
        "c1@hz": ["hz@b1:0", "hz@b1:1", "bj@b3:0"],
        "c2@hz": ["hz@b1:2", "hz@b1:3", "bj@b3:1"],
        "c3@sh": ["sh@b2:0", "sh@b2:1"],
    }


def test_machine_room_nearby_mappings_and_missing_room() -> None:
    mq_all = qs("broker-a", 2) + qs("broker-b", 2)
    resolver = RoomResolver({"broker-a": "r1", "broker-b": "r2"}, {"10.0.0.1": "r1", "10.0.0.2": "r2"})
    strat = MachineRoomNearby(AveragelyByCircle(), resolver)
    assert short(strat.allocate("10.0.0.2", mq_all, ["10.0.0.1", "10.0.0.2"])) == ["b0", "b1"]
    with pytest.raises(UsageError, match="^Machine room is null for consumer id 10.0.0.9$"):
        strat.allocate("10.0.0.1", mq_all, ["10.0.0.1", "10.0.0.9"])
    with pytest.raises(
        UsageError, match=r"^Machine room is null for mq MessageQueue \[topic=T, brokerName=x"
    ):
        MachineRoomNearby().allocate("c@r", qs("x", 1), ["c@r"])


def test_build_strategy() -> None:
    assert build_strategy("avg").name == "AVG"
    assert build_strategy("CONSISTENT_HASH", virtual_nodes=3) == ConsistentHash(3)
    assert (
        build_strategy("MACHINE_ROOM_NEARBY", delegate="AVG_BY_CIRCLE").name
        == "MACHINE_ROOM_NEARBY-AVG_BY_CIRCLE"
    )
    for bad in (dict(name="nope"), dict(name="MACHINE_ROOM"), dict(name="CONFIG")):
        with pytest.raises(UsageError):
            build_strategy(**bad)  # type: ignore[arg-type]


# --- -i parsing and the whole command ---------------------------------------------------------


def test_split_ip_list_java_semantics() -> None:
    assert split_ip_list("a,,b") == ["a", "", "b"]
    assert split_ip_list("a,b,,") == ["a", "b"]
    assert split_ip_list(",") == []
    assert split_ip_list("") == [""]
    assert split_ip_list(" a, b") == [" a", " b"]
    assert split_ip_list("a,a") == ["a", "a"]


def test_spec_worked_example() -> None:
    res = allocate_mq(two_brokers(), ["TopicTest"], ["10.0.0.1", "10.0.0.2", "192.168.1.100"])
    (t,) = res.topics
    assert short(t.mq_all) == ["a3", "a2", "b3", "b0", "a1", "b2", "a0", "b1"]
    assert [(c, short(q)) for c, q in t.result] == [
        ("10.0.0.1", ["a3", "a2", "b3"]),
        ("10.0.0.2", ["b0", "a1", "b2"]),
        ("192.168.1.100", ["a0", "b1"]),
    ]
    assert res.strategy == "AVG" and res.totals == {"10.0.0.1": 3, "10.0.0.2": 3, "192.168.1.100": 2}
    assert res.imbalance == 1


def test_sorted_order_is_the_consumers() -> None:
    res = allocate_mq(two_brokers(), ["TopicTest"], ["192.168.1.100", "10.0.0.2", "10.0.0.1"], sort=True)
    (t,) = res.topics
    assert t.cid_all == ("10.0.0.1", "10.0.0.2", "192.168.1.100")
    assert [(c, short(q)) for c, q in t.result] == [
        ("10.0.0.1", ["a0", "a1", "a2"]),
        ("10.0.0.2", ["a3", "b0", "b1"]),
        ("192.168.1.100", ["b2", "b3"]),
    ]


def test_only_readable_queues_count() -> None:
    backend = FakeBackend(
        {
            "broker-a": {"T": TopicConfig("T", read_queue_nums=2, perm=2)},  # write only
            "broker-b": {"T": TopicConfig("T", read_queue_nums=3, write_queue_nums=8)},
            "broker-c": {},
        }
    )
    res = allocate_mq(backend, ["T"], ["c"])
    assert sorted(short(res.topics[0].mq_all)) == ["b0", "b1", "b2"]


def test_errors() -> None:
    with pytest.raises(NotFoundError, match="TopicNope"):
        allocate_mq(two_brokers(), ["TopicNope"], ["c"])
    unreadable = FakeBackend({"broker-a": {"T": TopicConfig("T", perm=2)}})
    with pytest.raises(NotFoundError, match="^mqAll is null or mqAll empty$"):
        allocate_mq(unreadable, ["T"], ["c"])
    with pytest.raises(UsageError, match="^currentCID is empty$"):
        allocate_mq(two_brokers(), ["TopicTest"], split_ip_list("a,,b"))
    # mqadmin checks per client in -i order: the first client already fails on the empty topic
    with pytest.raises(NotFoundError):
        allocate_mq(unreadable, ["T"], split_ip_list("a,,b"))


def test_multi_topic_totals_show_per_topic_imbalance() -> None:
    cfg = {t: TopicConfig(t, read_queue_nums=4) for t in ("TopicX", "TopicY")}
    backend = FakeBackend({"broker-a": cfg})
    res = allocate_mq(backend, ["TopicX", "TopicY"], ["c1", "c2", "c3"], sort=True)
    # per topic AVG 4 over 3: 2, 1, 1 -> c1 collects the extra queue of every topic
    assert res.totals == {"c1": 4, "c2": 2, "c3": 2}
    assert res.imbalance == 2 and res.queue_count == 8
    assert [mq.topic for mq in res.queues_of("c1")] == ["TopicX", "TopicX", "TopicY", "TopicY"]


def test_compare_moves() -> None:
    backend = FakeBackend({"broker-a": {"T": TopicConfig("T", read_queue_nums=4)}})
    a = allocate_mq(backend, ["T"], ["c1", "c2"], sort=True)  # c1: 0,1  c2: 2,3
    b = allocate_mq(backend, ["T"], ["c1", "c2", "c3"], sort=True)  # c1: 0,1  c2: 2  c3: 3
    moves = compare(a, b)
    assert [(m.queue.queue_id, m.before, m.after) for m in moves] == [(3, ("c2",), ("c3",))]
    assert compare(a, a) == []
