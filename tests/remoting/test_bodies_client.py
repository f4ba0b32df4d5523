"""ConsumerConnection (203) and ConsumerRunningInfo (307) bodies: remoting.md 7.6 and 7.7.

Running-info bodies are written by each SDK; the Java one follows the property list of 7.7, the
C++ one mirrors rocketmq-client-cpp's hand-built text (longs as strings, no expressionType, and
``{"mqTable":},`` when it has no queue), the .NET one a leading ``{,`` without a queue table.
"""

from __future__ import annotations

import pytest

from mqctl.errors import ProtocolError
from mqctl.model import Connection, MessageQueue, ProcessQueueInfo, Subscription
from mqctl.remoting.bodies import decode_consumer_connection, decode_running_info

# 7.6, verbatim except the "[…]" sets, filled as Java leaves them for "*" (empty).
CONNECTION = b"""{"connectionSet":[{"clientAddr":"10.0.0.5:53422","clientId":"10.0.0.5@12345#4567","language":"JAVA","version":479}],
 "consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING",
 "subscriptionTable":{"TopicTest":{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*","subVersion":1704164645006,"tagsSet":[],"topic":"TopicTest"}}}"""

# Two clients, two subscriptions (a tag list and SQL92), table order not alphabetical.
CONNECTION_TAGS = (
    b'{"connectionSet":[{"clientAddr":"10.0.0.5:53422","clientId":"c1","language":"CPP","version":400},'
    b'{"clientAddr":"10.0.0.6:1","clientId":"c2","language":"GO","version":317}],'
    b'"consumeType":"CONSUME_ACTIVELY","messageModel":"BROADCASTING",'
    b'"subscriptionTable":{"Zeta":{"classFilterMode":false,"codeSet":[2598919,2598920],"expressionType":"TAG",'
    b'"subString":"tagA || tagB","subVersion":17,"tagsSet":["tagA","tagB"],"topic":"Zeta"},'
    b'"Alpha":{"expressionType":"SQL92","subString":"a > 5","subVersion":18,"topic":"Alpha"}}}'
)

MQ_JSON = b'{"brokerName":"broker-a","queueId":%d,"topic":"TopicTest"}'
PQ_JAVA = (
    b'{"cachedMsgCount":3,"cachedMsgMaxOffset":1002,"cachedMsgMinOffset":1000,"cachedMsgSizeInMiB":1,'
    b'"commitOffset":1000,"droped":false,"lastConsumeTimestamp":1704164645000,"lastLockTimestamp":0,'
    b'"lastPullTimestamp":1704164645006,"locked":true,"transactionMsgCount":0,"transactionMsgMaxOffset":0,'
    b'"transactionMsgMinOffset":0,"tryUnlockTimes":0}'
)

# 7.7, the Java client's shape.
RUNNING_JAVA = (
    b'{"mqPopTable":{' + MQ_JSON % 7 + b':{"droped":false,"lastPopTimestamp":1,"waitAckCount":2}},'
    b'"mqTable":{'
    + MQ_JSON % 0
    + b":"
    + PQ_JAVA
    + b","
    + MQ_JSON % 1
    + b':{"commitOffset":5,"droped":true}},'
    b'"properties":{"PROP_CLIENT_VERSION":"V5_3_3","PROP_CONSUME_TYPE":"CONSUME_PASSIVELY",'
    b'"PROP_NAMESERVER_ADDR":"127.0.0.1:9876","PROP_CONSUMER_START_TIMESTAMP":"1704164600000",'
    b'"PROP_CONSUMEORDERLY":"false","PROP_THREADPOOL_CORE_SIZE":"20"},'
    b'"statusTable":{"TopicTest":{"consumeFailedMsgs":0,"consumeFailedTPS":0.0,"consumeOKTPS":1.5,'
    b'"consumeRT":2.0,"pullRT":1.0,"pullTPS":3.0}},'
    b'"subscriptionSet":[{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*",'
    b'"subVersion":1704164600001,"tagsSet":[],"topic":"TopicTest"}],"userConsumerInfo":{}}'
)

# rocketmq-client-cpp: pretty-printed queue entries inserted at offset 1, longs via to_string.
RUNNING_CPP = (
    b'{"mqTable":{{\n   "brokerName" : "broker-a",\n   "queueId" : 2,\n   "topic" : "TopicTest"\n}:{\n'
    b'   "cachedMsgCount" : 4,\n   "cachedMsgMaxOffset" : "40",\n   "cachedMsgMinOffset" : "37",\n'
    b'   "commitOffset" : "37",\n   "droped" : false,\n   "lastConsumeTimestamp" : "18446744073709551615",\n'
    b'   "lastPullTimestamp" : "1704164645006",\n   "locked" : false,\n   "tryUnlockTimes" : 0\n}\n},'
    b'"jstack":"","properties":{"PROP_CLIENT_VERSION":"2.2.0","PROP_CONSUME_TYPE":"CONSUME_PASSIVELY"},'
    b'"subscriptionSet":[{"codeSet":[2598919],"subString":"tagA","subVersion":"1704164600002","tagsSet":["tagA"],'
    b'"topic":"TopicTest"}]}'
)
RUNNING_CPP_EMPTY = b'{"mqTable":},"jstack":"","properties":{"PROP_CONSUME_TYPE":"CONSUME_PASSIVELY"}}'
RUNNING_DOTNET_EMPTY = b'{,"properties":{"PROP_THREADPOOL_CORE_SIZE":"2","messageModel":"CLUSTERING"},"subscriptionSet":[{"topic":"T"}]}'


def test_connection_spec_example() -> None:
    cc = decode_consumer_connection(CONNECTION, "g1")
    assert cc.group == "g1"
    assert cc.connections == (Connection("10.0.0.5@12345#4567", "10.0.0.5:53422", "JAVA", 479),)
    assert cc.subscriptions == (
        Subscription("TopicTest", "*", expression_type="TAG", tags=(), codes=(), sub_version=1704164645006),
    )
    assert cc.consume_type == "CONSUME_PASSIVELY"
    assert cc.message_model == "CLUSTERING"
    assert cc.consume_from_where == "CONSUME_FROM_LAST_OFFSET"


def test_connection_tags_order_and_missing_enum() -> None:
    cc = decode_consumer_connection(CONNECTION_TAGS, "g1")
    assert [c.client_id for c in cc.connections] == ["c1", "c2"]
    assert [(c.language, c.version) for c in cc.connections] == [("CPP", 400), ("GO", 317)]
    assert cc.subscriptions == (
        Subscription("Zeta", "tagA || tagB", "TAG", ("tagA", "tagB"), (2598919, 2598920), 17),
        Subscription("Alpha", "a > 5", "SQL92", (), (), 18),
    )
    assert (cc.consume_type, cc.message_model, cc.consume_from_where) == (
        "CONSUME_ACTIVELY",
        "BROADCASTING",
        None,
    )


def test_connection_empty_and_language_code() -> None:
    cc = decode_consumer_connection(b'{"connectionSet":[{"clientId":"x","language":9}]}', "g")
    assert cc.connections == (Connection("x", "", "GO", 0),)
    assert cc.subscriptions == ()
    assert cc.consume_type is None


def test_running_info_java() -> None:
    info = decode_running_info(RUNNING_JAVA, "10.0.0.5@12345#4567")
    assert info.client_id == "10.0.0.5@12345#4567"
    assert info.properties == (
        ("PROP_CLIENT_VERSION", "V5_3_3"),
        ("PROP_CONSUME_TYPE", "CONSUME_PASSIVELY"),
        ("PROP_NAMESERVER_ADDR", "127.0.0.1:9876"),
        ("PROP_CONSUMER_START_TIMESTAMP", "1704164600000"),
        ("PROP_CONSUMEORDERLY", "false"),
        ("PROP_THREADPOOL_CORE_SIZE", "20"),
    )
    assert info.property("PROP_CONSUME_TYPE") == "CONSUME_PASSIVELY"
    assert info.queues == (
        (
            MessageQueue("TopicTest", "broker-a", 0),
            ProcessQueueInfo(
                commit_offset=1000,
                cached_msg_min_offset=1000,
                cached_msg_max_offset=1002,
                cached_msg_count=3,
                cached_msg_size_mib=1,
                last_pull_timestamp=1704164645006,
                last_consume_timestamp=1704164645000,
                dropped=False,
                locked=True,
            ),
        ),
        (MessageQueue("TopicTest", "broker-a", 1), ProcessQueueInfo(commit_offset=5, dropped=True)),
    )
    assert info.pop_queues == (MessageQueue("TopicTest", "broker-a", 7),)
    assert info.subscriptions == (Subscription("TopicTest", "*", "TAG", (), (), 1704164600001),)


def test_running_info_cpp() -> None:
    info = decode_running_info(RUNNING_CPP, "c")
    ((mq, pq),) = info.queues
    assert mq == MessageQueue("TopicTest", "broker-a", 2)
    assert (pq.commit_offset, pq.cached_msg_min_offset, pq.cached_msg_max_offset) == (37, 37, 40)
    assert pq.cached_msg_count == 4
    assert pq.last_pull_timestamp == 1704164645006
    assert pq.last_consume_timestamp == -1  # uint64 all-ones: the C++ SDK's -1
    assert info.subscriptions == (
        Subscription("TopicTest", "tagA", "TAG", ("tagA",), (2598919,), 1704164600002),
    )
    assert info.properties == (("PROP_CLIENT_VERSION", "2.2.0"), ("PROP_CONSUME_TYPE", "CONSUME_PASSIVELY"))


def test_running_info_cpp_without_queues() -> None:
    info = decode_running_info(RUNNING_CPP_EMPTY, "c")
    assert info.queues == ()
    assert info.properties == (("PROP_CONSUME_TYPE", "CONSUME_PASSIVELY"),)


def test_running_info_dotnet_without_queue_table() -> None:
    info = decode_running_info(RUNNING_DOTNET_EMPTY, "c")
    assert info.queues == ()
    assert info.property("messageModel") == "CLUSTERING"
    assert info.subscriptions == (Subscription("T", None, "TAG", (), (), 0),)


def test_running_info_drops_subscriptions_without_topic() -> None:
    info = decode_running_info(b'{"subscriptionSet":[{"subString":"*"},{"topic":"T"}]}', "c")
    assert [s.topic for s in info.subscriptions] == ["T"]


def test_running_info_lenient_values() -> None:
    body = (
        b'{"properties":{"n":12,"f":1.5,"b":true,"o":{"k":[1,2]},"z":null,0:"zero"},'
        b'"mqTable":{'
        + MQ_JSON
        % 3
        + b':{"dropped":"true","locked":1,"cachedMsgSizeInMiB":"2","extra":[1]}},'
        b'"subscriptionSet":{"TopicTest":{"topic":"TopicTest","subString":"*"}},"somethingNew":{"x":1}}'
    )
    info = decode_running_info(body, "c")
    assert info.properties == (("n", "12"), ("f", "1.5"), ("b", "true"), ("o", '{"k":[1,2]}'), ("0", "zero"))
    assert info.queues == (
        (
            MessageQueue("TopicTest", "broker-a", 3),
            ProcessQueueInfo(cached_msg_size_mib=2, dropped=True, locked=True),
        ),
    )
    assert info.subscriptions == (Subscription("TopicTest", "*", "TAG", (), (), 0),)


def test_running_info_minimal() -> None:
    info = decode_running_info(b"{}", "c")
    assert (info.properties, info.queues, info.pop_queues, info.subscriptions) == ((), (), (), ())


@pytest.mark.parametrize(
    "body",
    [
        b'{"mqTable":[]}',
        b'{"mqTable":{"TopicTest":{}}}',
        b'{"mqTable":{' + MQ_JSON % 0 + b':{"commitOffset":"soon"}}}',
        b'{"mqTable":{' + MQ_JSON % 0 + b':{"locked":"perhaps"}}}',
        b'{"mqTable":{' + MQ_JSON % 0 + b':{"commitOffset":18446744073709551616}}}',
        b'{"properties":[]}',
        b'{"subscriptionSet":[{"topic":"T","tagsSet":[1]}]}',
        b'{"subscriptionSet":[{"topic":"T","codeSet":["x"]}]}',
        b'{"mqTable":}',
        b"{,",
    ],
)
def test_running_info_refusals(body: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_running_info(body, "c")


@pytest.mark.parametrize(
    "body",
    [
        b'{"connectionSet":{}}',
        b'{"connectionSet":[{"version":"new"}]}',
        b'{"connectionSet":[{"language":["JAVA"]}]}',
        b'{"subscriptionTable":{"T":{"subVersion":[]}}}',
        b'{"subscriptionTable":{0:{"topic":"T"}}}',
        b'{"consumeType":1}',
    ],
)
def test_connection_refusals(body: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_consumer_connection(body, "g")
