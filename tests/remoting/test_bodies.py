"""Body decoders against the literal examples of remoting.md 7 (fastjson 1.2.83 output).

Where the spec elides with ``…`` or ``{…}`` the gap is filled with plausible values (noted at
each constant); every expected value below is read off the literal text, never off the decoder.
The bodies are reused by test_bodies_fuzz.py as mutation seeds.
"""

from __future__ import annotations

import pytest

from mqctl.errors import ProtocolError
from mqctl.model import BrokerData, MessageQueue, QueueData, SubscriptionGroup, TopicConfig
from mqctl.remoting.bodies import (
    ClusterInfo,
    TopicOffset,
    decode_cluster_info,
    decode_consume_stats,
    decode_consumer_offsets_body,
    decode_name_list,
    decode_reset_offset_body,
    decode_subscription_groups_body,
    decode_topic_configs,
    decode_topic_route,
    decode_topic_stats,
    subscription_group_from_props,
)

# 7.2, verbatim: BrowserCompatible encoding (requester version >= 401): quoted ids.
ROUTE_STANDARD = b"""{"brokerDatas":[{"brokerAddrs":{"0":"10.0.0.1:10911","1":"10.0.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],
 "filterServerTable":{},
 "queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}"""

# 7.2, the same route in the default encoding: ids unquoted, as in `"brokerAddrs":{0:"10.0.0.1:10911"}`.
ROUTE_DEFAULT = b"""{"brokerDatas":[{"brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],
 "filterServerTable":{},
 "queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}"""

# 7.2 BrowserCompatible features: \uXXXX for chars >= 0x7F, "\/" for "/", a long id beyond 2^53
# (its key is a string anyway). Two brokers, deliberately not in name order (name-server order).
ROUTE_ESCAPED = (
    b'{"brokerDatas":[{"brokerAddrs":{"0":"10.0.0.9:10911"},"brokerName":"broker-z",'
    b'"cluster":"East\\/1","enableActingMaster":false},'
    b'{"brokerAddrs":{"9007199254740993":"10.0.0.3:10911","0":"10.0.0.2:10911"},'
    b'"brokerName":"broker-\\u00e4\\u4e2d","cluster":"East\\/1","enableActingMaster":false,"zoneName":"z1"}],'
    b'"filterServerTable":{},"queueDatas":[{"brokerName":"broker-z","perm":4,"readQueueNums":2,'
    b'"topicSysFlag":0,"writeQueueNums":0},{"brokerName":"broker-\\u00e4\\u4e2d","perm":6,'
    b'"readQueueNums":8,"topicSysFlag":1,"writeQueueNums":8}]}'
)

# 7.3, verbatim.
CLUSTER_INFO = (
    b'{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"10.0.0.1:10911"},"brokerName":"broker-a",'
    b'"cluster":"DefaultCluster","enableActingMaster":false}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}}'
)

# 7.5, verbatim with the trailing ", …" removed.
CONSUME_STATS = b"""{"consumeTps":0.0,
 "offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"TopicTest"}:{"brokerOffset":1000,"consumerOffset":990,"lastTimestamp":1704164645006,"pullOffset":1002}}}"""

# 7.5 from a 4.x broker: no pullOffset; consumeTps in Double.toString's exponent form.
CONSUME_STATS_4X = (
    b'{"consumeTps":1.5E-4,"offsetTable":{{"brokerName":"broker-b","queueId":3,"topic":"TopicTest"}:'
    b'{"brokerOffset":7,"consumerOffset":0,"lastTimestamp":0},'
    b'{"brokerName":"broker-b","queueId":1,"topic":"%RETRY%g1"}:{"brokerOffset":2,"consumerOffset":2,'
    b'"lastTimestamp":1704164600000}}}'
)

# 7.8, verbatim without ",…"; and the C++ form with its "…" filled.
RESET_JAVA = b'{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"TopicTest"}:1000}}'
RESET_CPP = (
    b'{"offsetTable":[{"brokerName":"broker-a","offset":1000,"queueId":0,"topic":"TopicTest"},'
    b'{"brokerName":"broker-a","offset":998,"queueId":1,"topic":"TopicTest"}]}'
)

# 7.9 with the "…" filled.
TOPIC_STATS = (
    b'{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"TopicTest"}:'
    b'{"lastUpdateTimestamp":1704164645006,"maxOffset":1000,"minOffset":0},'
    b'{"brokerName":"broker-a","queueId":1,"topic":"TopicTest"}:'
    b'{"lastUpdateTimestamp":0,"maxOffset":0,"minOffset":0}},"topicPutTps":0.0}'
)

# 7.10 with dataVersion as 7.13 and the elisions filled.
CONSUMER_OFFSETS = (
    b'{"dataVersion":{"counter":3,"stateVersion":0,"timestamp":1704164645006},'
    b'"groupTopicMap":{"g1":["TopicTest","%RETRY%g1"]},'
    b'"offsetTable":{"TopicTest@g1":{0:1000,1:998},"%RETRY%g1@g1":{0:0}}}'
)

# 7.11 verbatim, with "<topic>" = TopicTest and the dataVersion elisions filled (7.13).
TOPIC_CONFIGS = (
    b'{"dataVersion":{"counter":1,"stateVersion":0,"timestamp":1704164645006},'
    b'"mappingDataVersion":{"counter":0,"stateVersion":0,"timestamp":1704164645006},'
    b'"topicConfigTable":{"TopicTest":{"attributes":{},"order":false,"perm":6,"readQueueNums":8,'
    b'"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":8}},'
    b'"topicQueueMappingDetailMap":{},"topicQueueMappingInfoMap":{}}'
)

# 7.12 with "<group>" = g1, groupRetryPolicy filled, "…" dropped; g2 is a 4.x-style config with
# only some properties (the rest take the Java defaults).
SUBSCRIPTION_GROUPS = (
    b'{"dataVersion":{"counter":1,"stateVersion":0,"timestamp":1704164645006},"forbiddenTable":{},'
    b'"subscriptionGroupTable":{"g1":{"brokerId":0,"consumeBroadcastEnable":true,"consumeEnable":true,'
    b'"consumeFromMinEnable":true,"consumeMessageOrderly":false,"consumeTimeoutMinute":15,"groupName":"g1",'
    b'"groupRetryPolicy":{"type":"CUSTOMIZED"},"groupSysFlag":0,"notifyConsumerIdsChangedEnable":true,'
    b'"retryMaxTimes":16,"retryQueueNums":1,"whichBrokerWhenConsumeSlowly":1},'
    b'"g2":{"consumeEnable":false,"consumeMessageOrderly":true,"groupName":"g2","retryMaxTimes":3,"brokerId":1}}}'
)

# 7.4
TOPIC_LIST = b'{"topicList":["T1","%RETRY%g1"],"brokerAddr":"10.0.0.1:10911"}'
GROUP_LIST = b'{"groupList":["g1","g2"]}'
CONSUMER_IDS = b'{"consumerIdList":["10.0.0.5@12345#4567","10.0.0.6@1#2"]}'

MQ0 = MessageQueue("TopicTest", "broker-a", 0)
MQ1 = MessageQueue("TopicTest", "broker-a", 1)


# ---------------------------------------------------------------------------------------------
# 7.2 / 7.3


@pytest.mark.parametrize("body", [ROUTE_STANDARD, ROUTE_DEFAULT], ids=["quoted-ids", "unquoted-ids"])
def test_route_both_encodings(body: bytes) -> None:
    route = decode_topic_route(body, "TopicTest")
    assert route.topic == "TopicTest"
    assert route.queue_datas == (
        QueueData("broker-a", read_queue_nums=4, write_queue_nums=4, perm=6, topic_sys_flag=0),
    )
    (broker,) = route.broker_datas
    assert broker.broker_name == "broker-a"
    assert broker.cluster == "DefaultCluster"
    assert broker.addrs == ((0, "10.0.0.1:10911"), (1, "10.0.0.2:10911"))
    assert all(type(i) is int for i, _ in broker.addrs)
    assert broker.master_addr == "10.0.0.1:10911"


def test_route_browser_compatible_escapes_and_order() -> None:
    route = decode_topic_route(ROUTE_ESCAPED, "T")
    assert [b.broker_name for b in route.broker_datas] == ["broker-z", "broker-\u00e4\u4e2d"]
    assert [q.broker_name for q in route.queue_datas] == ["broker-z", "broker-\u00e4\u4e2d"]
    assert route.broker_datas[0].cluster == "East/1"
    # JSON order kept, not key order: the big id first, the master second.
    assert route.broker_datas[1].addrs == ((9007199254740993, "10.0.0.3:10911"), (0, "10.0.0.2:10911"))
    assert route.queue_datas[0] == QueueData("broker-z", 2, 0, perm=4, topic_sys_flag=0)
    assert route.queue_datas[1] == QueueData("broker-\u00e4\u4e2d", 8, 8, perm=6, topic_sys_flag=1)


def test_route_java_defaults_for_missing_properties() -> None:
    route = decode_topic_route(b'{"queueDatas":[{"brokerName":"b"}]}', "T")
    assert route.queue_datas == (QueueData("b", 0, 0, perm=0, topic_sys_flag=0),)
    assert route.broker_datas == ()


def test_route_numbers_as_strings_are_read() -> None:
    body = b'{"queueDatas":[{"brokerName":"b","perm":"6","readQueueNums":"4","writeQueueNums":4}],"brokerDatas":[]}'
    assert decode_topic_route(body, "T").queue_datas == (QueueData("b", 4, 4, perm=6),)


def test_cluster_info() -> None:
    info = decode_cluster_info(CLUSTER_INFO)
    assert isinstance(info, ClusterInfo)
    assert info.brokers == {"broker-a": BrokerData("broker-a", "DefaultCluster", ((0, "10.0.0.1:10911"),))}
    assert info.clusters == {"DefaultCluster": ("broker-a",)}


# ---------------------------------------------------------------------------------------------
# 7.5, 7.8, 7.9


def test_consume_stats_5x() -> None:
    stats = decode_consume_stats(CONSUME_STATS, "g1")
    assert stats.group == "g1"
    assert stats.consume_tps == 0.0
    (row,) = stats.queues
    assert row.queue == MQ0
    assert (row.broker_offset, row.consumer_offset, row.pull_offset) == (1000, 990, 1002)
    assert row.last_timestamp == 1704164645006
    assert row.min_offset is None
    assert row.committed is None


def test_consume_stats_4x_without_pull_offset() -> None:
    stats = decode_consume_stats(CONSUME_STATS_4X, "g1")
    assert stats.consume_tps == 1.5e-4
    assert [r.queue for r in stats.queues] == [
        MessageQueue("TopicTest", "broker-b", 3),
        MessageQueue("%RETRY%g1", "broker-b", 1),
    ]
    assert [(r.broker_offset, r.consumer_offset, r.last_timestamp, r.pull_offset) for r in stats.queues] == [
        (7, 0, 0, None),  # absent on 4.x: unknown (None), not a pull offset of 0
        (2, 2, 1704164600000, None),
    ]


@pytest.mark.parametrize(
    ("tps", "expected"), [(b"null", 0.0), (b"2", 2.0), (b"1.0E-5", 1e-5), (b"12.25", 12.25)]
)
def test_consume_tps_forms(tps: bytes, expected: float) -> None:
    assert decode_consume_stats(b'{"consumeTps":' + tps + b',"offsetTable":{}}', "g").consume_tps == expected


def test_consume_stats_broker_hint_fills_a_missing_broker_name() -> None:
    body = b'{"offsetTable":{{"queueId":2,"topic":"T"}:{"brokerOffset":5}}}'
    with pytest.raises(ProtocolError):
        decode_consume_stats(body, "g")
    stats = decode_consume_stats(body, "g", broker_name_hint="broker-x")
    assert stats.queues[0].queue == MessageQueue("T", "broker-x", 2)
    assert stats.queues[0].consumer_offset == 0


def test_consume_stats_key_as_json_text() -> None:
    # WriteNonStringKeyAsString: the MessageQueue key arrives as its JSON text in a string.
    body = b'{"offsetTable":{"{\\"brokerName\\":\\"broker-a\\",\\"queueId\\":1,\\"topic\\":\\"TopicTest\\"}":{"brokerOffset":9,"consumerOffset":8}}}'
    (row,) = decode_consume_stats(body, "g").queues
    assert (row.queue, row.broker_offset, row.consumer_offset) == (MQ1, 9, 8)


def test_reset_offset_java_form() -> None:
    assert decode_reset_offset_body(RESET_JAVA) == {MQ0: 1000}


def test_reset_offset_cpp_form() -> None:
    out = decode_reset_offset_body(RESET_CPP)
    assert out == {MQ0: 1000, MQ1: 998}
    assert list(out) == [MQ0, MQ1]


def test_reset_offset_empty_table() -> None:
    assert decode_reset_offset_body(b"{}") == {}
    assert decode_reset_offset_body(b'{"offsetTable":{}}') == {}


def test_topic_stats() -> None:
    out = decode_topic_stats(TOPIC_STATS)
    assert list(out) == [MQ0, MQ1]
    assert out[MQ0] == TopicOffset(min_offset=0, max_offset=1000, last_update_timestamp=1704164645006)
    assert out[MQ1] == TopicOffset(0, 0, 0)


# ---------------------------------------------------------------------------------------------
# 7.4, 7.10-7.12


@pytest.mark.parametrize(
    ("body", "key", "expected"),
    [
        (TOPIC_LIST, "topicList", ["T1", "%RETRY%g1"]),
        (GROUP_LIST, "groupList", ["g1", "g2"]),
        (CONSUMER_IDS, "consumerIdList", ["10.0.0.5@12345#4567", "10.0.0.6@1#2"]),
        (b"{}", "groupList", []),
    ],
)
def test_name_lists(body: bytes, key: str, expected: list[str]) -> None:
    assert decode_name_list(body, key) == expected


def test_consumer_offsets() -> None:
    out = decode_consumer_offsets_body(CONSUMER_OFFSETS)
    assert out == {"TopicTest@g1": {0: 1000, 1: 998}, "%RETRY%g1@g1": {0: 0}}
    assert list(out) == ["TopicTest@g1", "%RETRY%g1@g1"]


def test_topic_configs() -> None:
    assert decode_topic_configs(TOPIC_CONFIGS) == {
        "TopicTest": TopicConfig(
            "TopicTest",
            read_queue_nums=8,
            write_queue_nums=8,
            perm=6,
            order=False,
            topic_filter_type="SINGLE_TAG",
            topic_sys_flag=0,
            attributes={},
        )
    }


def test_subscription_groups() -> None:
    out = decode_subscription_groups_body(SUBSCRIPTION_GROUPS)
    assert list(out) == ["g1", "g2"]
    assert out["g1"] == SubscriptionGroup(
        "g1",
        consume_enable=True,
        consume_broadcast_enable=True,
        consume_message_orderly=False,
        retry_queue_nums=1,
        retry_max_times=16,
        broker_id=0,
        group_sys_flag=0,
    )
    # Java defaults for what g2 leaves out: broadcast true, retryQueueNums 1, groupSysFlag 0.
    assert out["g2"] == SubscriptionGroup(
        "g2",
        consume_enable=False,
        consume_broadcast_enable=True,
        consume_message_orderly=True,
        retry_queue_nums=1,
        retry_max_times=3,
        broker_id=1,
        group_sys_flag=0,
    )


def test_subscription_group_from_props_is_lenient() -> None:
    group = subscription_group_from_props(
        "g", {"consumeEnable": "false", "retryMaxTimes": "5", "brokerId": 2.0}
    )
    assert group == SubscriptionGroup("g", consume_enable=False, retry_max_times=5, broker_id=2)
    assert subscription_group_from_props("g", {}) == SubscriptionGroup("g")
    with pytest.raises(ProtocolError):
        subscription_group_from_props("g", {"consumeEnable": "maybe"})
    with pytest.raises(ProtocolError):
        subscription_group_from_props("g", {"retryQueueNums": 2**40})


# ---------------------------------------------------------------------------------------------
# Refusals


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"   ",
        b"[]",
        b"null",
        b"\xff\xfe",
        b'{"queueDatas":{}}',
        b'{"queueDatas":[1]}',
        b'{"queueDatas":[{"brokerName":5}]}',
        b'{"queueDatas":[{"brokerName":"b","perm":true}]}',
        b'{"queueDatas":[{"brokerName":"b","perm":4294967296}]}',
        b'{"brokerDatas":[{"brokerName":"b","brokerAddrs":{{"a":1}:"x"}}]}',
        b'{"brokerDatas":[{"brokerName":"b","brokerAddrs":{"zero":"x"}}]}',
        b'{"brokerDatas":[{"brokerName":"b","brokerAddrs":{0:7}}]}',
        b'{"brokerDatas":[{"brokerName":"b"}]} trailing',
    ],
)
def test_route_refusals(body: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_topic_route(body, "T")


@pytest.mark.parametrize(
    "body",
    [
        b'{"offsetTable":{"TopicTest":{"brokerOffset":1}}}',
        b'{"offsetTable":{{"brokerName":"b","queueId":0}:{"brokerOffset":1}}}',
        b'{"offsetTable":{{"brokerName":"b","queueId":"x","topic":"T"}:{}}}',
        b'{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:[]}}',
        b'{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"brokerOffset":1.5}}}',
        b'{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"brokerOffset":9223372036854775808}}}',
        b'{"consumeTps":"fast","offsetTable":{}}',
        b'{"offsetTable":[]}',
    ],
)
def test_consume_stats_refusals(body: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_consume_stats(body, "g")


@pytest.mark.parametrize(
    ("decoder", "body"),
    [
        (decode_consumer_offsets_body, b'{"offsetTable":{"t@g":{0:"x"}}}'),
        (decode_consumer_offsets_body, b'{"offsetTable":{"t@g":{0:' + b"9" * 5000 + b"}}}"),
        (decode_consumer_offsets_body, b'{"offsetTable":{"t@g":{0:"' + b"9" * 5000 + b'"}}}'),
        (decode_consumer_offsets_body, b"{" * 100_000),
        (decode_topic_configs, b'{"topicConfigTable":{"T":5}}'),
        (decode_topic_configs, b"[" * 100_000),
        (decode_subscription_groups_body, b'{"subscriptionGroupTable":{"g":{"consumeEnable":"x"}}}'),
        (decode_subscription_groups_body, b'{"subscriptionGroupTable":{"g":[]}}'),
        (decode_subscription_groups_body, b""),
    ],
)
def test_store_shaped_refusals(decoder: object, body: bytes) -> None:
    with pytest.raises(ProtocolError):
        decoder(body)  # type: ignore[operator]


@pytest.mark.parametrize("body", [b'{"topicList":"T1"}', b'{"topicList":[1]}', b'{"topicList":[null]}'])
def test_name_list_refusals(body: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_name_list(body, "topicList")


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000,
        b"{" * 100_000,
        b'{"a":' * 100_000,
        b'{"offsetTable":' + b"{" * 100_000,
        # A chain of objects used as keys: fastjson.loads has no depth check on that path.
        b'{"offsetTable":{' + b'{"a":1,' * 50_000,
        b'{"offsetTable":{"' + b"{" * 100_000 + b'":1}}',
    ],
)
def test_deep_nesting_is_a_protocol_error(body: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_reset_offset_body(body)


def test_nesting_inside_strings_does_not_count() -> None:
    name = "[" * 500 + "{" * 500
    body = b'{"topicList":["' + name.encode() + b'"]}'
    assert decode_name_list(body, "topicList") == [name]


def test_fastjson_back_references_read_as_null() -> None:
    # remoting.md 8.3: {"$ref":...} is tolerated as null, i.e. the Java defaults.
    body = b'{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"TopicTest"}:{"$ref":"$.offsetTable"}}}'
    (row,) = decode_consume_stats(body, "g").queues
    assert (row.queue, row.broker_offset, row.consumer_offset, row.last_timestamp, row.pull_offset) == (
        MQ0,
        0,
        0,
        0,
        None,  # no pullOffset property: unknown
    )
    assert decode_topic_route(b'{"brokerDatas":{"$ref":"@"},"queueDatas":[]}', "T").broker_datas == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0),
        ("42", 42),
        (" 7 ", 7),
        ("-3", -3),
        ("12345678901234567890", 12345678901234567890),  # 20 digits, then the range check
    ],
)
def test_to_int_reads_integer_text(text: str, expected: int) -> None:
    from mqctl.remoting.bodies_json import to_int

    assert to_int(text, "x", (-(2**70), 2**70)) == expected


@pytest.mark.parametrize("text", ["", "1.5", "+1", "١٢", "123456789012345678901", "1e3", "0x10"])
def test_to_int_refuses_other_text(text: str) -> None:
    from mqctl.remoting.bodies_json import to_int

    with pytest.raises(ProtocolError, match="expected an integer"):
        to_int(text, "x", (-(2**70), 2**70))
