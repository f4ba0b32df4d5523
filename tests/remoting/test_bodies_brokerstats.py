"""GET_BROKER_CONSUME_STATS (317) and the queue counts of GET_ALL_TOPIC_CONFIG (21), decoded.

The bodies are written here as a broker's fastjson writes them (ConsumeStatsList: bean
properties by name, MessageQueue objects as map keys, one single-entry map per group), the
expected values read off them by hand."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mqctl.errors import ProtocolError
from mqctl.model import MessageQueue
from mqctl.remoting.bodies_brokerstats import decode_broker_consume_stats, decode_queue_counts

# A 5.x broker: G1 on two topics (the second without a TPS), G2 a subscription group with no
# committed topic, G3 on one queue; pullOffset is written (0: fetchAllConsumeStatsInBroker never
# sets it).
BROKER_STATS = (
    b'{"brokerAddr":"10.0.0.1:10911","consumeStatsList":['
    b'{"G1":[{"consumeTps":1.5,"offsetTable":{'
    b'{"brokerName":"broker-a","queueId":1,"topic":"T"}:{"brokerOffset":9,"consumerOffset":4,"lastTimestamp":1704164600000,"pullOffset":0},'
    b'{"brokerName":"broker-a","queueId":0,"topic":"T"}:{"brokerOffset":7,"consumerOffset":0,"lastTimestamp":0,"pullOffset":0}}},'
    b'{"consumeTps":0.0,"offsetTable":{'
    b'{"brokerName":"broker-a","queueId":0,"topic":"%RETRY%G1"}:{"brokerOffset":2,"consumerOffset":2,"lastTimestamp":1704164500000,"pullOffset":0}}}]},'
    b'{"G2":[]},'
    b'{"G3":[{"consumeTps":0.25,"offsetTable":{'
    b'{"brokerName":"broker-a","queueId":1,"topic":"T"}:{"brokerOffset":9,"consumerOffset":9,"lastTimestamp":1704164700000,"pullOffset":0}}}]}'
    b'],"totalDiff":12,"totalInflightDiff":0}'
)

# A 4.9.7 broker: no pullOffset, no totalInflightDiff; a queue key without brokerName.
BROKER_STATS_4X = (
    b'{"brokerAddr":"10.0.0.2:10911","consumeStatsList":[{"G1":[{"consumeTps":0.0,"offsetTable":{'
    b'{"queueId":0,"topic":"T"}:{"brokerOffset":3,"consumerOffset":1,"lastTimestamp":1704164600000}}}]}],'
    b'"totalDiff":2}'
)

# TopicConfigAndMappingSerializeWrapper (5.x): Wide reads 2 of its 4 queues; Old has no counts
# (Java's default 16); Logical is a static topic (a mapping detail; and Info, as older 5.x wrote).
TOPIC_CONFIGS_5X = (
    b'{"dataVersion":{"counter":3,"stateVersion":0,"timestamp":1767225000000},'
    b'"mappingDataVersion":{"counter":1,"stateVersion":0,"timestamp":1767225000000},'
    b'"topicConfigTable":{'
    b'"Wide":{"attributes":{},"order":false,"perm":6,"readQueueNums":2,"topicFilterType":"SINGLE_TAG",'
    b'"topicName":"Wide","topicSysFlag":0,"writeQueueNums":4},'
    b'"Old":{"perm":6,"topicName":"Old"},'
    b'"Logical":{"perm":6,"readQueueNums":8,"topicName":"Logical","writeQueueNums":8}},'
    b'"topicQueueMappingDetailMap":{"Logical":{"bname":"broker-a","epoch":0,"hostedQueues":{},'
    b'"scope":"__global__","topic":"Logical","totalQueues":8}},'
    b'"topicQueueMappingInfoMap":{"Info":{"bname":"broker-a","epoch":0,"topic":"Info","totalQueues":2}}}'
)

# TopicConfigSerializeWrapper (4.x): no mapping maps.
TOPIC_CONFIGS_4X = (
    b'{"dataVersion":{"counter":1,"timestamp":1704164600000},"topicConfigTable":{'
    b'"T":{"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"T",'
    b'"topicSysFlag":0,"writeQueueNums":4}}}'
)


def test_broker_stats_every_group_its_topics_no_pull_offsets() -> None:
    got = decode_broker_consume_stats(BROKER_STATS, "broker-a").groups
    assert list(got) == ["G1", "G2", "G3"]
    t, retry = got["G1"]
    assert t.consume_tps == 1.5 and retry.consume_tps == 0.0
    assert [
        (q.queue, q.broker_offset, q.consumer_offset, q.last_timestamp, q.pull_offset) for q in t.queues
    ] == [
        (MessageQueue("T", "broker-a", 1), 9, 4, 1704164600000, None),
        (MessageQueue("T", "broker-a", 0), 7, 0, 0, None),
    ]
    assert [(q.queue, q.broker_offset, q.consumer_offset) for q in retry.queues] == [
        (MessageQueue("%RETRY%G1", "broker-a", 0), 2, 2)
    ]
    assert got["G2"] == []
    (g3,) = got["G3"]
    assert (g3.group, g3.consume_tps, [q.queue.queue_id for q in g3.queues]) == ("G3", 0.25, [1])


def test_broker_stats_of_a_4x_broker() -> None:
    ((part,),) = decode_broker_consume_stats(BROKER_STATS_4X, "broker-b").groups.values()
    (q,) = part.queues
    assert (q.queue, q.broker_offset, q.consumer_offset, q.pull_offset) == (
        MessageQueue("T", "broker-b", 0),  # the broker asked fills the missing brokerName
        3,
        1,
        None,
    )


def test_queue_counts_and_static_topics() -> None:
    got = decode_queue_counts(TOPIC_CONFIGS_5X)
    assert got.counts == {"Wide": (2, 4), "Old": (16, 16), "Logical": (8, 8)}
    assert got.static == {"Logical", "Info"}
    old = decode_queue_counts(TOPIC_CONFIGS_4X)
    assert (old.counts, old.static) == ({"T": (4, 4)}, frozenset())


@pytest.mark.parametrize(
    "body",
    [
        b'{"consumeStatsList":{"G1":[]}}',  # a map where a list belongs
        b'{"consumeStatsList":[{"G1":{"consumeTps":0.0}}]}',  # a bean where the topic list belongs
        b'{"consumeStatsList":[{"G1":[{"offsetTable":{{"queueId":0}:{"brokerOffset":1}}}]}]}',  # no topic
        b'{"consumeStatsList":[{"G1":[{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:'
        b'{"brokerOffset":"x"}}}]}]}',
    ],
)
def test_broker_stats_that_do_not_bind_are_protocol_errors(body: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_broker_consume_stats(body, "b")


def test_queue_counts_that_do_not_bind_are_protocol_errors() -> None:
    with pytest.raises(ProtocolError):
        decode_queue_counts(b'{"topicConfigTable":{"T":{"readQueueNums":3000000000}}}')  # beyond int32
    with pytest.raises(ProtocolError):
        decode_queue_counts(b'{"topicConfigTable":[]}')


# --- the shortcuts these decoders take for speed give what the general reading gives ----------

_VALUES = st.one_of(
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
    st.text(alphabet="-0123456789. ", max_size=6),
)


@given(
    st.dictionaries(
        st.sampled_from(["brokerOffset", "consumerOffset", "lastTimestamp", "pullOffset", "$ref", "x"]),
        _VALUES,
    ),
    st.booleans(),
)
def test_plain_integer_wrappers_read_as_the_typed_reading_reads_them(wrapper: dict, pulls: bool) -> None:
    import json

    from mqctl.remoting import bodies

    body = (
        b'{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:' + json.dumps(wrapper).encode() + b"}}"
    )

    def read() -> object:
        try:
            doc = bodies.parse_object_keyed(body, "w")
            return bodies.consume_stats_of(doc, "g", "w", None, {}, pull_offsets=pulls)
        except ProtocolError as e:
            return e.message

    fast = read()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(bodies, "_plain_offsets", lambda raw, pulls: None)
        assert read() == fast


@given(st.text(alphabet='"{}[]a\n ', max_size=200))
def test_the_depth_check_strips_plain_strings_as_the_general_pattern_does(text: str) -> None:
    from mqctl.remoting import bodies_json

    assert bodies_json._PLAIN_STRING.sub("", text) == bodies_json._STRING.sub("", text)
