"""The live backend and a POP group (RocketMQ 5: gRPC consumers through a rocketmq-proxy), against
the fake cluster: the brokers list no client of it; -b PROXY asks the proxy's remoting port, which
answers GET_CONSUMER_CONNECTION_LIST from its own table (bodies written by hand as the 5.3.3 proxy
answered on a real run, pop.md section 2)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mqctl_testkit.fakebodies import Reply
from mqctl_testkit.fakecluster import FakeCluster, FakeServer
from mqctl_testkit.live_scenario import build_model, run_cli

from mqctl.backends.live import LiveBackend
from mqctl.errors import NotFoundError

V5_3_3 = 479  # MQVersion.Version.V5_3_3.ordinal()
PROXY_BODY = (
    '{"connectionSet":[{"clientAddr":"127.0.0.1:46234","clientId":"vm@22464@0@1sodkfy0i",'
    '"language":"JAVA","version":479}],"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET",'
    '"consumeType":"CONSUME_ACTIVELY","messageModel":"CLUSTERING","subscriptionTable":{"TopicPop":'
    '{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*","subVersion":1,'
    '"tagsSet":[],"topic":"TopicPop"}}}'
)


def _proxy_answer(code: int, fields: dict[str, str], _version: int) -> Reply:
    if code == 203 and fields.get("consumerGroup") == "GroupPop":
        return Reply(body=PROXY_BODY.encode())
    return Reply(206, f"the consumer group[{fields.get('consumerGroup')}] not online")


@pytest.fixture
def cluster() -> Iterator[tuple[FakeCluster, FakeServer]]:
    c = FakeCluster(build_model())
    proxy = FakeServer("proxy", _proxy_answer)
    proxy.version = V5_3_3
    yield c, proxy
    proxy.close()
    c.close()


def test_connection_at_a_proxy_lists_its_grpc_clients(cluster: tuple[FakeCluster, FakeServer]) -> None:
    c, proxy = cluster
    with LiveBackend(c.ns, timeout=5.0) as be:
        conn = be.consumer_connection("GroupPop", at=proxy.addr)
    assert [x.client_id for x in conn.connections] == ["vm@22464@0@1sodkfy0i"]
    assert conn.consume_type == "CONSUME_ACTIVELY"
    assert (conn.via, conn.via_proxy, conn.via_version) == (proxy.addr, True, V5_3_3)
    assert proxy.codes() == [203]  # the proxy is asked, no broker is
    assert all(203 not in s.codes() for s in c.brokers.values())


def test_connection_at_a_broker_is_no_proxy(cluster: tuple[FakeCluster, FakeServer]) -> None:
    c, _proxy = cluster
    with LiveBackend(c.ns, timeout=5.0) as be:
        conn = be.consumer_connection("G1", at=c.brokers["broker-a"].addr)
    assert conn.via_proxy is False


def test_nobody_at_the_proxy_is_not_found(cluster: tuple[FakeCluster, FakeServer]) -> None:
    c, proxy = cluster
    with LiveBackend(c.ns, timeout=5.0) as be, pytest.raises(NotFoundError, match="at " + proxy.addr):
        be.consumer_connection("G1", at=proxy.addr)


def test_cli_says_the_version_column_is_the_proxys(cluster: tuple[FakeCluster, FakeServer]) -> None:
    c, proxy = cluster
    run = run_cli("consumerConnection", "-g", "GroupPop", "-b", proxy.addr, "-n", c.ns, "-o", "plain")
    assert run.code == 0, run.err
    assert "vm@22464@0@1sodkfy0i" in run.out and "V5_3_3" in run.out
    assert "rocketmq-proxy" in run.err and "#Version is the proxy's own version (V5_3_3)" in run.err
