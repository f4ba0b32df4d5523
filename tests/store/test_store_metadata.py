"""topics.json / subscriptionGroup.json codecs (spec 2.3, 2.4)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mqctl_testkit.thorough import cases

from mqctl.errors import StoreCorruptError
from mqctl.model import TopicConfig
from mqctl.store.metadata import (
    decode_subscription_groups,
    decode_topics,
    load_subscription_groups,
    load_topics,
)

DV = {"counter": 0, "stateVersion": 0, "timestamp": 1700000000000}

# The compact form quoted in spec 2.3 (fastjson 1.2.83 output, joined from the spec's wrapping).
SPEC_TOPICS_COMPACT = (
    '{"dataVersion":{"counter":0,"stateVersion":0,"timestamp":1700000000000},"topicConfigTable":'
    '{"TopicTest":{"attributes":{"message.type":"NORMAL"},"order":false,"perm":6,"readQueueNums":4,'
    '"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":4}}}'
)

TOPIC_TEST = TopicConfig("TopicTest", 4, 4, 6, False, "SINGLE_TAG", 0, {"message.type": "NORMAL"})


def test_decode_spec_topics() -> None:
    assert decode_topics(SPEC_TOPICS_COMPACT.encode()) == {"TopicTest": TOPIC_TEST}


def test_decode_4x_topic_defaults_and_lenient_values() -> None:
    data = b'{"topicConfigTable":{"T":{"perm":"4","order":"true","readQueueNums":8,"topicName":"T"}}}'
    assert decode_topics(data) == {
        "T": TopicConfig("T", read_queue_nums=8, write_queue_nums=16, perm=4, order=True, attributes={})
    }
    assert decode_topics(data)["T"].readable


@pytest.mark.parametrize(
    "data",
    [
        b'{"topicConfigTable":[]}',
        b'{"topicConfigTable":{"T":1}}',
        b'{"topicConfigTable":{"T":{"perm":"rw"}}}',
        b'{"topicConfigTable":{"T":{"order":1}}}',
        b'{"topicConfigTable":{"T":{"attributes":{"a":1}}}}',
        b'{"topicConfigTable":{"T":{"topicFilterType":3}}}',
        b'{"topicConfigTable":{5:{}}}',
        b"",
    ],
)
def test_decode_topics_rejects(data: bytes) -> None:
    with pytest.raises(StoreCorruptError):
        decode_topics(data)


GROUP_TEXT = (
    "{\n"
    '\t"dataVersion":{\n\t\t"counter":0,\n\t\t"stateVersion":0,\n\t\t"timestamp":1700000000000\n\t},\n'
    '\t"forbiddenTable":{},\n'
    '\t"subscriptionGroupTable":{\n'
    '\t\t"GroupA":{\n'
    '\t\t\t"attributes":{},\n'
    '\t\t\t"brokerId":0,\n'
    '\t\t\t"consumeBroadcastEnable":true,\n'
    '\t\t\t"consumeEnable":true,\n'
    '\t\t\t"consumeFromMinEnable":true,\n'
    '\t\t\t"consumeMessageOrderly":false,\n'
    '\t\t\t"consumeTimeoutMinute":15,\n'
    '\t\t\t"groupName":"GroupA",\n'
    '\t\t\t"groupRetryPolicy":{\n\t\t\t\t"type":"CUSTOMIZED"\n\t\t\t},\n'
    '\t\t\t"groupSysFlag":0,\n'
    '\t\t\t"notifyConsumerIdsChangedEnable":true,\n'
    '\t\t\t"retryMaxTimes":16,\n'
    '\t\t\t"retryQueueNums":1,\n'
    '\t\t\t"whichBrokerWhenConsumeSlowly":1\n'
    "\t\t}\n"
    "\t}\n"
    "}"
)


def test_decode_4x_groups() -> None:
    data = (
        b'{"subscriptionGroupTable":{"g":{"groupName":"g","retryMaxTimes":16}},"dataVersion":{"counter":1}}'
    )
    assert decode_subscription_groups(data) == {"g": {"groupName": "g", "retryMaxTimes": 16}}


def test_loaders_use_bak_rule(tmp_path: Path) -> None:
    (tmp_path / "topics.json").write_bytes(b"")
    (tmp_path / "topics.json.bak").write_bytes(SPEC_TOPICS_COMPACT.encode())
    got = load_topics(tmp_path, retries=0)
    assert got.value == {"TopicTest": TOPIC_TEST}
    assert got.fell_back and got.path == tmp_path / "topics.json.bak"
    (tmp_path / "subscriptionGroup.json").write_bytes(GROUP_TEXT.encode())
    groups = load_subscription_groups(tmp_path, retries=0)
    assert groups.value is not None and list(groups.value) == ["GroupA"] and not groups.fell_back
    (tmp_path / "subscriptionGroup.json").write_bytes(b"{")
    (tmp_path / "subscriptionGroup.json.bak").write_bytes(b"{")
    with pytest.raises(StoreCorruptError):
        load_subscription_groups(tmp_path, retries=0)


@settings(max_examples=cases(200))
@given(st.binary(max_size=80))
def test_random_bytes_only_typed_errors(data: bytes) -> None:
    for decode in (decode_topics, decode_subscription_groups):
        try:
            decode(data)
        except StoreCorruptError:
            pass


@given(st.integers(min_value=0, max_value=len(GROUP_TEXT) - 1))
def test_truncated_is_corrupt(n: int) -> None:
    with pytest.raises(StoreCorruptError):
        decode_subscription_groups(GROUP_TEXT[:n].encode())
    with pytest.raises(StoreCorruptError):
        decode_topics(SPEC_TOPICS_COMPACT[: n % len(SPEC_TOPICS_COMPACT)].encode())
