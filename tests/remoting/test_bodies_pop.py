"""POP answers decoded: the timer wheel's checkpoint and ack messages (bodies written by hand as
5.3.3's fastjson writes PopCheckPoint / AckMsg / BatchAckMsg: their @JSONField short names), a
broker's remembered subscription, a broker's settings."""

from __future__ import annotations

import pytest
from mqctl_testkit.storebytes import build_record

from mqctl.errors import ProtocolError
from mqctl.model.pop import PopAck, PopCheckpoint
from mqctl.remoting.bodies_pop import decode_broker_config, decode_subscription_query, decode_wheel_entry

WHEEL = "rmq_sys_wheel_timer"
REVIVE = "rmq_sys_REVIVE_LOG_MqctlCluster"


def wheel_message(tag: str, body: str, real_topic: str = REVIVE) -> bytes:
    props = [("TAGS", tag), ("REAL_TOPIC", real_topic), ("REAL_QID", "3"), ("TIMER_OUT_MS", "1795594908000")]
    return build_record(topic=WHEEL, body=body.encode(), props=props)


def test_checkpoint_with_its_offsets() -> None:
    body = (
        '{"bm":0,"bn":"broker-a","c":"GroupPop","d":[0,1,3],"it":10000,"n":3,"pt":1795594898211,'
        '"q":2,"rp":0,"so":40,"t":"TopicPop"}'
    )
    ck = decode_wheel_entry(wheel_message("ck", body), "broker-a")
    assert ck == PopCheckpoint("broker-a", "TopicPop", 2, "GroupPop", 40, 1795594898211, 10000, (40, 41, 43))
    assert ck.revive_time == 1795594908211


def test_ack_and_batch_ack() -> None:
    one = '{"ao":41,"bn":"broker-a","c":"GroupPop","pt":1795594898211,"q":2,"so":40,"t":"TopicPop"}'
    batch = '{"aol":[40,43],"bn":"broker-a","c":"GroupPop","pt":1795594898211,"q":2,"so":40,"t":"TopicPop"}'
    assert decode_wheel_entry(wheel_message("ack", one), "broker-a") == PopAck(
        "broker-a", "TopicPop", 2, "GroupPop", 40, 1795594898211, (41,)
    )
    acks = decode_wheel_entry(wheel_message("bAck", batch), "broker-a")
    assert isinstance(acks, PopAck) and acks.offsets == (40, 43)


def test_other_timer_messages_are_not_pop() -> None:
    assert decode_wheel_entry(wheel_message("TagA", "hello"), "broker-a") is None  # a user's timer message
    assert decode_wheel_entry(wheel_message("ck", "{}", real_topic="MyTopic"), "broker-a") is None


def test_a_broken_batch_ack_is_a_protocol_error() -> None:
    bad = '{"aol":"x","c":"G","pt":1,"q":0,"so":0,"t":"T"}'
    with pytest.raises(ProtocolError):
        decode_wheel_entry(wheel_message("bAck", bad), "broker-a")


def test_subscription_query_and_broker_config() -> None:
    held = (
        b'{"group":"GroupPop","subscriptionData":{"classFilterMode":false,"codeSet":[],"expressionType":"TAG",'
        b'"subString":"TagA","subVersion":1795594898211,"tagsSet":["TagA"],"topic":"TopicPop"},"topic":"TopicPop"}'
    )
    assert decode_subscription_query(held) == "TagA"
    assert decode_subscription_query(b'{"group":"GroupPop","topic":"TopicPop"}') is None
    conf = decode_broker_config(
        b"brokerName=broker-a\nuseServerSideResetOffset=false\nmsgTraceTopicName=x=y\n"
    )
    assert conf["useServerSideResetOffset"] == "false" and conf["msgTraceTopicName"] == "x=y"
