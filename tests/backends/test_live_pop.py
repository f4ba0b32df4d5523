"""The live backend and a POP group (RocketMQ 5: gRPC consumers through a rocketmq-proxy), against
the fake cluster: the brokers list no client of it; -b PROXY asks the proxy's remoting port, which
answers GET_CONSUMER_CONNECTION_LIST from its own table (bodies written by hand as the 5.3.3 proxy
answered on a real run, pop.md section 2)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from mqctl_testkit.fakebodies import Reply
from mqctl_testkit.fakecluster import FakeCluster, FakeServer
from mqctl_testkit.fakemodel import Topic
from mqctl_testkit.live_scenario import build_model, cli_env, run_here

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
    run = run_here("consumerConnection", "-g", "GroupPop", "-b", proxy.addr, "-n", c.ns, "-o", "plain")
    assert run.code == 0, run.err
    assert "vm@22464@0@1sodkfy0i" in run.out and "V5_3_3" in run.out
    assert "rocketmq-proxy" in run.err and "#Version is the proxy's own version (V5_3_3)" in run.err


# --- a POP group on the fake brokers: GP pops TopicTest (3 messages per queue) ------------------

GP, RV1 = "GP", "%RETRY%GP_TopicTest"


@pytest.fixture
def pop_cluster() -> Iterator[FakeCluster]:
    """GP popped every TopicTest queue to 2 of 3 (a: 0..3, b: 0..3); broker-a revived one message
    into RV1, popped again (offset 1 of 1). No %RETRY%GP: its clients are behind a proxy."""
    model = build_model()
    for b in model.brokers:
        b.offsets["GP"] = {"TopicTest": dict.fromkeys(range(4), 2)}
        b.groups.append("GP")
    a = model.broker("broker-a")
    a.topics[RV1] = Topic([a.topics["%RETRY%G2"].queues[0]])
    a.offsets["GP"][RV1] = {0: 0}
    c = FakeCluster(model)
    yield c
    c.close()


def _online(c: FakeCluster) -> None:
    for b in c.model.brokers:
        b.compensated[("GP", "TopicTest")] = "*"


def test_progress_of_a_pop_group_over_the_wire(pop_cluster: FakeCluster) -> None:
    run = run_here("consumerProgress", "-g", "GP", "-n", pop_cluster.ns, "-o", "json")
    assert run.code == 0, run.err
    doc = json.loads(run.out)
    assert doc["pop"]["retryTopics"] == [RV1] and doc["pop"]["waiting"] == 8  # 8 queues, 1 left each
    assert doc["totals"]["inflight"] is None
    plain = run_here("consumerProgress", "-g", "GP", "-n", pop_cluster.ns, "-o", "plain")
    assert "Consume Inflight Total: N/A" in plain.out, plain.err


def test_reset_of_a_pop_group_that_pops_now_is_online(pop_cluster: FakeCluster, tmp_path: Path) -> None:
    _online(pop_cluster)
    env = cli_env(MQCTL_JOURNAL_DIR=str(tmp_path))
    args = ("resetOffsetByTime", "-n", pop_cluster.ns, "-g", "GP", "-t", "TopicTest", "--to-earliest")
    dry = run_here(*args, "--output", "table", env=env)
    assert dry.code == 0, dry.err
    assert "POP group" in dry.out and "popped within the last 10 minutes: online" in dry.out
    run = run_here(*args, "--execute", env=env)
    assert run.code == 0, run.err
    assert all(b.offsets["GP"]["TopicTest"] == dict.fromkeys(range(4), 0) for b in pop_cluster.model.brokers)
    sent = [c for s in pop_cluster.brokers.values() for c in s.codes()]
    assert sent.count(222) == 8 and 15 not in sent  # the server-side reset, queue by queue


def test_reset_refused_where_a_broker_resets_only_through_registered_clients(
    pop_cluster: FakeCluster, tmp_path: Path
) -> None:
    """apache/rocketmq #9038: useServerSideResetOffset=false, a POP group popping through a proxy."""
    _online(pop_cluster)
    for b in pop_cluster.model.brokers:
        b.server_side_reset = False
    env = cli_env(MQCTL_JOURNAL_DIR=str(tmp_path))
    args = ("resetOffsetByTime", "-n", pop_cluster.ns, "-g", "GP", "-t", "TopicTest", "--to-earliest")
    dry = run_here(*args, "--output", "table", env=env)
    assert dry.code == 0 and "--execute is refused there" in dry.out, dry.out + dry.err
    run = run_here(*args, "--execute", env=env)
    assert run.code == 5
    assert "useServerSideResetOffset=false" in run.error_line()
    sent = [c for s in pop_cluster.brokers.values() for c in s.codes()]
    assert 222 not in sent and 15 not in sent
    assert all(b.offsets["GP"]["TopicTest"] == dict.fromkeys(range(4), 2) for b in pop_cluster.model.brokers)


def test_online_push_group_refused_where_the_server_side_reset_is_off(
    pop_cluster: FakeCluster, tmp_path: Path
) -> None:
    """A 5.x broker with useServerSideResetOffset=false resets an online group's WHOLE topic by the
    request's time through its clients: mqctl's explicit per-queue request (time 0) would send every
    client to its queues' start. Refused, nothing sent."""
    for b in pop_cluster.model.brokers:
        b.server_side_reset = False
    env = cli_env(MQCTL_JOURNAL_DIR=str(tmp_path))
    run = run_here(
        "resetOffsetByTime",
        "-n",
        pop_cluster.ns,
        "-g",
        "G1",
        "-t",
        "Orders",
        "--to-latest",
        "--execute",
        env=env,
    )
    assert run.code == 5 and "useServerSideResetOffset=false" in run.error_line()
    assert 222 not in [c for s in pop_cluster.brokers.values() for c in s.codes()]
