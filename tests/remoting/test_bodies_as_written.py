"""Bodies in the brokers' own form are read without a JSON parser: MessageQueue keys
(bodies_json._MQ_TEXT) and whole ConsumeStats bodies (bodies._consume_stats_as_written). Every
text must read as the parser reads it, or fail the same way."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mqctl_testkit.thorough import cases

from mqctl.errors import ProtocolError
from mqctl.model import MessageQueue
from mqctl.remoting.bodies import decode_consume_stats
from mqctl.remoting.bodies_json import message_queue


def _slow(text: str, hint: str | None) -> MessageQueue | str:
    try:
        return message_queue(json.loads(text), "k", hint)
    except ProtocolError as exc:
        return exc.message
    except ValueError:
        return "not json"


def _fast(text: str, hint: str | None) -> MessageQueue | str:
    try:
        return message_queue(text, "k", hint)
    except ProtocolError as exc:
        return exc.message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"brokerName":"broker-a","queueId":3,"topic":"TopicTest"}',
            MessageQueue("TopicTest", "broker-a", 3),
        ),
        ('{"brokerName":"b","queueId":2147483647,"topic":"t"}', MessageQueue("t", "b", 2**31 - 1)),
        ('{"brokerName":"b","queueId":007,"topic":"t"}', MessageQueue("t", "b", 7)),  # fastjson reads it so
        ('{"brokerName":"","queueId":1,"topic":"t"}', MessageQueue("t", "hint", 1)),  # the hint stands in
        ('{"brokerName":"b\\u0041","queueId":1,"topic":"t"}', MessageQueue("t", "bA", 1)),  # an escape
        ('{"brokerName":"b","queueId":1,"topic":"Töpic"}', MessageQueue("Töpic", "b", 1)),
    ],
)
def test_broker_written_keys(text: str, expected: MessageQueue) -> None:
    assert message_queue(text, "k", "hint") == expected


@pytest.mark.parametrize(
    "text",
    [
        '{"brokerName":"b","queueId":2147483648,"topic":"t"}',  # beyond a Java int
        '{"brokerName":"b","queueId":1,"topic":""}',  # names nothing
    ],
)
def test_keys_refused_either_way(text: str) -> None:
    with pytest.raises(ProtocolError):
        message_queue(text, "k", None)


# '{', '}', ':' and ',' spell the text between an entry's key and value, and between entries
names = st.text(alphabet=st.sampled_from(list('ab-%"\\\x01é{}:, ')), max_size=5)


@settings(max_examples=cases(300), deadline=None)
@given(names, st.integers(-5, 2**32), names, st.one_of(st.none(), st.just("h")))
def test_the_fast_reading_equals_the_parsed_one(broker: str, qid: int, topic: str, hint: str | None) -> None:
    obj = {"brokerName": broker, "queueId": qid, "topic": topic}
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    assert _fast(text, hint) == _slow(text, hint)


def test_a_consume_stats_body_reads_its_keys() -> None:
    body = (
        b'{"consumeTps":0.5,"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"T"}:'
        b'{"brokerOffset":9,"consumerOffset":4,"lastTimestamp":1700000000000,"pullOffset":5},'
        b'{"brokerName":"broker-a","queueId":1,"topic":"T"}:{"brokerOffset":3,"consumerOffset":3,"lastTimestamp":0}}}'
    )
    st_ = decode_consume_stats(body, "G", "broker-a")
    assert [
        (q.queue, q.broker_offset, q.consumer_offset, q.last_timestamp, q.pull_offset) for q in st_.queues
    ] == [
        (MessageQueue("T", "broker-a", 0), 9, 4, 1700000000000, 5),
        (MessageQueue("T", "broker-a", 1), 3, 3, 0, None),
    ]
    assert st_.consume_tps == 0.5


def _entry(broker: str, qid: int, topic: str, nums: tuple[int, ...]) -> str:
    key = json.dumps(
        {"brokerName": broker, "queueId": qid, "topic": topic}, separators=(",", ":"), ensure_ascii=False
    )
    names = ("brokerOffset", "consumerOffset", "lastTimestamp", "pullOffset")
    return key + ":" + json.dumps(dict(zip(names, nums)), separators=(",", ":"))


def _both_ways(body: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    import mqctl.remoting.bodies as bodies

    def read() -> object:
        try:
            st_ = decode_consume_stats(body, "G", "hint")
        except ProtocolError as exc:
            return exc.message
        return (
            [
                (q.queue, q.broker_offset, q.consumer_offset, q.last_timestamp, q.pull_offset)
                for q in st_.queues
            ],
            st_.consume_tps,
        )

    fast = read()
    with monkeypatch.context() as m:
        m.setattr(bodies, "_consume_stats_as_written", lambda body, group: None)
        slow = read()
    return fast, slow


entries = st.lists(
    st.tuples(
        names,
        st.integers(-1, 2**31 + 1),
        names,
        st.lists(st.integers(-(2**63) - 1, 2**63), min_size=3, max_size=4),
    ),
    max_size=4,
)


@settings(max_examples=cases(300), deadline=None)
@given(
    entries,
    st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(0, 9)),
    st.sampled_from(["", ",", " ", "\n"]),
)
def test_a_consume_stats_body_reads_as_parsed(es: list, tps: float, tail: str) -> None:
    text = ",".join(_entry(b, q, t, tuple(n)) for b, q, t, n in es) + tail
    body = ('{"consumeTps":' + json.dumps(tps) + ',"offsetTable":{' + text + "}}").encode()
    with pytest.MonkeyPatch.context() as mp:
        fast, slow = _both_ways(body, mp)
    assert fast == slow


def test_broker_bodies_take_the_fast_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    import mqctl.remoting.bodies as bodies

    body = (
        b'{"consumeTps":1.5E-4,"offsetTable":{{"brokerName":"broker-b","queueId":2,"topic":"bench-topic"}:'
        b'{"brokerOffset":2000,"consumerOffset":0,"lastTimestamp":0,"pullOffset":0}}}'
    )  # a 5.3.3 broker's answer (the TPS as Java writes a small double)
    fast = bodies._consume_stats_as_written(body, "G")
    assert fast is not None and fast.consume_tps == 1.5e-4
    assert fast == decode_consume_stats(body, "G")
    four = b'{"consumeTps":0.0,"offsetTable":{{"brokerName":"b","queueId":0,"topic":"t"}:{"brokerOffset":5,"consumerOffset":1,"lastTimestamp":7}}}'
    got = bodies._consume_stats_as_written(four, "G")  # 4.9.7: no pullOffset
    assert got is not None and got.queues[0].pull_offset is None and got.queues[0].broker_offset == 5
    duplicate = four.replace(b"}}}", b"},") + four[len(b'{"consumeTps":0.0,"offsetTable":{') :]
    fast_dup, slow_dup = _both_ways(duplicate, monkeypatch)
    assert fast_dup == slow_dup


@settings(max_examples=cases(200), deadline=None)
@given(
    entries.filter(lambda es: len(es) >= 2),
    st.sampled_from(["", " ", ",", ",,", "x", "\n", '"a":1,']),
    st.data(),
)
def test_text_between_or_around_entries_is_never_read_fast(es: list, junk: str, data: st.DataObject) -> None:
    """The fast reading takes a table only when its entries tile it: text slipped in anywhere
    (between two entries, before the first) leaves it to the parser, whatever that says."""
    import mqctl.remoting.bodies as bodies

    parts = [_entry(b, q, t, tuple(n)) for b, q, t, n in es]
    at = data.draw(st.integers(0, len(parts) - 1))
    text = ",".join(parts[:at]) + ("," if at else "") + junk + ",".join(parts[at:])
    body = ('{"consumeTps":0.0,"offsetTable":{' + text + "}}").encode()
    if junk:
        assert bodies._consume_stats_as_written(body, "G") is None
    with pytest.MonkeyPatch.context() as mp:
        fast, slow = _both_ways(body, mp)
    assert fast == slow
