"""LiveBackend in-process against the fake cluster: the requests it sends (one per broker, pages
continued at consume-queue file ends), what it makes of the answers, and how one broker's fault
stays that broker's. Expected values come from the scenario's model (live_scenario.py)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from mqctl_testkit.fakecluster import FakeCluster, signature_ok
from mqctl_testkit.fakemodel import java_hash, tags_code
from mqctl_testkit.fakeserver import FakeServer
from mqctl_testkit.live_scenario import ACCESS_KEY, MINUTE, SECRET, T0, build_model, ts

from mqctl.backends.live import LiveBackend  # noqa: E402
from mqctl.errors import ExitStatus, MqctlError  # noqa: E402
from mqctl.model import MessageQueue, QueueOffset, QueueSpan, QueueTime, Target, parse_subexpr  # noqa: E402
from mqctl.remoting.signing import Credentials  # noqa: E402

A0, A1 = MessageQueue("Orders", "broker-a", 0), MessageQueue("Orders", "broker-a", 1)


@pytest.fixture(scope="module")
def shared() -> Iterator[FakeCluster]:
    c = FakeCluster(build_model(), namesrvs=2)
    yield c
    c.close()


@pytest.fixture
def cluster(shared: FakeCluster) -> Iterator[FakeCluster]:
    shared.reset()
    yield shared
    shared.reset()


def backend(cluster: FakeCluster, **kw: object) -> LiveBackend:
    return LiveBackend(cluster.ns, timeout=5.0, request_timeout=kw.pop("request_timeout", 2.0), **kw)  # type: ignore[arg-type]


def test_consume_stats_one_request_per_broker(cluster: FakeCluster) -> None:
    with backend(cluster) as be:
        stats = be.consume_stats("G1")
    got = {(q.queue.topic, q.queue.broker_name, q.queue.queue_id): q for q in stats.queues}
    a1 = got[("Orders", "broker-a", 1)]
    assert (a1.broker_offset, a1.consumer_offset, a1.pull_offset, a1.min_offset) == (12, 2, 5, 4)
    assert len(got) == 6 and stats.consume_tps == 1.5 + 0.125 and not stats.failures
    assert [s.codes().count(208) for s in cluster.brokers.values()] == [1, 1]
    assert sorted(
        r.ext_fields["topic"] for s in cluster.brokers.values() for r in s.requests if r.code == 202
    ) == [
        "%RETRY%G1",
        "%RETRY%G1",
        "Orders",
        "Orders",
    ]


def test_work_handed_before_the_backend_is_entered_runs_while_its_first_request_is_out() -> None:
    """``when_idle`` before ``with``: kept until the client exists, then run while the name
    server holds the first request (this one never answers)."""
    seen: list[int] = []

    def work() -> None:
        end = time.monotonic() + 2.0
        while not ns.requests and time.monotonic() < end:
            time.sleep(0.005)
        seen.append(len(ns.requests))

    with FakeServer("silent") as ns:
        be = LiveBackend(ns.addr, timeout=2.0, request_timeout=0.3)
        be.when_idle(work)
        with be, pytest.raises(MqctlError):
            be.topic_route("T")
    assert seen == [1]


def test_consume_stats_hands_its_decoder_to_the_wait_before_asking(
    cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The patterns that read a broker's ConsumeStats are compiled while the brokers answer."""
    from mqctl.backends import live

    order: list[object] = []
    ask = LiveBackend.ask
    monkeypatch.setattr(LiveBackend, "when_idle", lambda self, work: order.append(work))
    monkeypatch.setattr(LiveBackend, "ask", lambda self, requests: order.append("ask") or ask(self, requests))
    with backend(cluster) as be:
        be.consume_stats("G1", detail=False)  # mqadmin's columns: one round
    assert order == [live._prepare_stats_decoder, "ask"]
    live._prepare_stats_decoder()
    from mqctl.remoting import bodies

    assert "match" in vars(bodies._STATS_AS_WRITTEN) and "match" in vars(bodies._ENTRY_AS_WRITTEN)


def test_a_group_without_retry_topic_is_found_by_its_subscription_config_name(cluster: FakeCluster) -> None:
    # G4 has a subscription config on broker-b only, no retry topic, no offsets: asked on every
    # broker; whether it exists is a name lookup (the configs of every group are not built).
    with backend(cluster) as be:
        stats = be.consume_stats("G4", detail=False)
        with pytest.raises(MqctlError) as missing:
            be.consume_stats("NoSuchGroup", detail=False)
        built = dict(be._groups)
    assert stats.queues == () and not stats.failures
    assert missing.value.exit_status == ExitStatus.NOT_FOUND
    assert [s.codes().count(208) for s in cluster.brokers.values()] == [1, 1]
    assert built == {}


def test_broker_tables(cluster: FakeCluster) -> None:
    with backend(cluster) as be:
        configs = be.topic_configs("broker-a")
        groups = be.subscription_groups("broker-b")
        names = be.broker_names()
    topics = cluster.model.broker("broker-a").topics
    assert {n: (c.read_queue_nums, c.write_queue_nums, c.perm) for n, c in configs.items()} == {
        n: (len(t.queues), len(t.queues), 6) for n, t in topics.items()
    }
    assert set(groups) == {"G1", "G2", "G4", "TOOLS_CONSUMER"}
    assert list(names) == ["broker-b", "broker-a"]  # the name server's order


def test_tag_scan_continues_where_each_consume_queue_file_ends(cluster: FakeCluster) -> None:
    with backend(cluster) as be:
        (count,) = be.count_tag_matches([QueueSpan(A0, 3, 25)], parse_subexpr("TagA || Aa"))
    msgs = cluster.model.broker("broker-a").topics["Orders"].queues[0].msgs
    hashes = {java_hash("TagA"), java_hash("Aa")}
    assert count.matched == sum(1 for m in msgs[3:25] if m.tags and tags_code(m.tags) in hashes) == 13
    pages = [
        (int(r.ext_fields["index"]), int(r.ext_fields["count"]))
        for r in cluster.broker("broker-a").requests
        if r.code == 321
    ]
    assert pages == [(3, 22), (10, 15), (20, 5)]  # files of 10 units: [0,10) [10,20) [20,30)


def test_store_times_and_positions_without_a_message(cluster: FakeCluster) -> None:
    model = cluster.model
    positions = [QueueOffset(A0, 3), QueueOffset(A1, 2), QueueOffset(A0, 25), QueueOffset(A1, 11)]
    with backend(cluster) as be:
        got = be.store_times(positions)
    # A1 offset 2 expired (min 4); A0 offset 25 is the max: no message yet
    assert got == [ts(model, "broker-a", "Orders", 0, 3), -1, -1, ts(model, "broker-a", "Orders", 1, 11)]


def test_offsets_for_times_are_the_brokers_lower_search(cluster: FakeCluster) -> None:
    times = [T0 - MINUTE, T0 + 4 * MINUTE, T0 + 4 * MINUTE + 1, T0 + 99 * MINUTE]
    with backend(cluster) as be:
        got = be.offsets_for_times([QueueTime(A0, t, "lower") for t in times] + [QueueTime(A1, T0, "lower")])
    assert got == [0, 4, 5, 25, 4]  # before the data: min; exact hit; the next; after: max; A1's min
    assert all(r.ext_fields["boundaryType"] == "LOWER" for r in cluster.broker("broker-a").requests)


@pytest.mark.parametrize("mode", ["garbage", "oversized", "truncated", "close_mid_frame", "silent", "slow"])
def test_a_broken_broker_is_a_failure_of_its_own(cluster: FakeCluster, mode: str) -> None:
    bad = cluster.broker("broker-b")
    if mode == "slow":
        bad.delay = 1.0  # beyond the 0.3 s request timeout
    else:
        bad.mode = mode
    with backend(cluster, request_timeout=0.3) as be:
        stats = be.consume_stats("G1", detail=False)
    assert {q.queue.broker_name for q in stats.queues} == {"broker-a"}
    (failure,) = stats.failures
    assert (failure.broker_name, failure.addr, failure.exit_status) == ("broker-b", bad.addr, 4)
    assert bad.addr in failure.message


@pytest.mark.parametrize("mode", ["garbage", "close_mid_frame"])
def test_a_name_server_breaking_the_protocol_is_skipped_for_the_next(cluster: FakeCluster, mode: str) -> None:
    bad, good = cluster.namesrvs
    bad.mode = mode
    with LiveBackend(f"{bad.addr};{good.addr}") as be:
        assert len(be.consume_stats("G1", detail=False).queues) == 6
    with LiveBackend(bad.addr) as be, pytest.raises(MqctlError) as caught:
        be.topic_route("Orders")
    assert caught.value.exit_status == ExitStatus.UNREACHABLE
    assert caught.value.message.startswith(f"name server {bad.addr}: ")


def test_every_broker_denying_is_exit_8_not_unreachable(cluster: FakeCluster) -> None:
    """Fixed in live.py merge_stats: it turned every all-brokers failure into UnreachableError
    (exit 4), even when each broker answered 16 NO_PERMISSION (then 5; a denial is 8 now)."""
    cluster.set_acl(ACCESS_KEY, SECRET, namesrv=False)
    with backend(cluster) as be, pytest.raises(MqctlError) as caught:
        be.consume_stats("G1")
    assert caught.value.exit_status == ExitStatus.DENIED
    for s in cluster.brokers.values():
        s.down()
    with backend(cluster) as be, pytest.raises(MqctlError) as caught:
        be.consume_stats("G1")
    assert caught.value.exit_status == ExitStatus.UNREACHABLE


def test_signed_requests_pass_the_brokers_check(cluster: FakeCluster) -> None:
    cluster.set_acl(ACCESS_KEY, SECRET)
    with backend(cluster, credentials=Credentials(ACCESS_KEY, SECRET)) as be:
        conn = be.consumer_connection("G1")
        info = be.running_info("G1", "10.0.0.6@2222")
    assert [c.client_id for c in conn.connections] == ["10.0.0.5@1111", "10.0.0.6@2222"]
    assert [mq for mq, _pq in info.queues] == [MessageQueue("Orders", "broker-b", 0)]
    requests = [r for s in cluster.servers() for r in s.requests]
    assert requests and all(signature_ok(dict(r.ext_fields), r.body, ACCESS_KEY, SECRET) for r in requests)


# --- bugs these tests found (fixed; kept as regressions) ---------------------------------------


def test_reset_plan_with_a_broker_down_names_the_broker(cluster: FakeCluster) -> None:
    from mqctl.ops.reset import plan_reset

    cluster.broker("broker-b").down()
    with backend(cluster) as be, pytest.raises(MqctlError) as caught:
        plan_reset(be, "G1", "Orders", Target("time", T0))
    assert caught.value.exit_status == ExitStatus.UNREACHABLE and "broker-b" in caught.value.message


def test_a_refused_consume_queue_query_is_an_error_not_zero_matches(cluster: FakeCluster) -> None:
    cluster.broker("broker-a").errors = {321: (16, "no permission for QUERY_CONSUME_QUEUE")}
    with backend(cluster) as be, pytest.raises(MqctlError) as caught:
        be.count_tag_matches([QueueSpan(A0, 3, 25)], parse_subexpr("TagA"))  # today: matched 0
    assert caught.value.exit_status == ExitStatus.DENIED  # 16 NO_PERMISSION: who asks may not
