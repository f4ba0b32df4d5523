"""fastjson reader/writer against the exact texts of spec 2.2 and 2.7 (fastjson 1.2.83 output)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mqctl_testkit.thorough import cases

from mqctl.errors import StoreCorruptError
from mqctl.fastjson import FrozenKey, dumps_compact, dumps_pretty, loads

# Spec 2.2, byte for byte: TABs, no trailing newline, int-keyed maps on the opening line.
CONSUMER_OFFSET_TEXT = (
    "{\n"
    '\t"dataVersion":{\n'
    '\t\t"counter":0,\n'
    '\t\t"stateVersion":0,\n'
    '\t\t"timestamp":1700000000000\n'
    "\t},\n"
    '\t"groupTopicMap":{\n'
    '\t\t"GroupA":["TopicTest","%RETRY%GroupA"]\n'
    "\t},\n"
    '\t"offsetTable":{\n'
    '\t\t"%RETRY%GroupA@GroupA":{0:5\n'
    "\t\t},\n"
    '\t\t"TopicTest@GroupA":{0:250,1:251,2:0,10:9999999999\n'
    "\t\t}\n"
    "\t}\n"
    "}"
)

# Spec 2.7: client-side offsets.json, MessageQueue objects as keys.
CLIENT_OFFSETS_TEXT = (
    "{\n"
    '\t"offsetTable":{{\n'
    '\t\t\t"brokerName":"broker-a",\n'
    '\t\t\t"queueId":1,\n'
    '\t\t\t"topic":"TopicTest"\n'
    "\t\t}:43,{\n"
    '\t\t\t"brokerName":"broker-a",\n'
    '\t\t\t"queueId":0,\n'
    '\t\t\t"topic":"TopicTest"\n'
    "\t\t}:42\n"
    "\t}\n"
    "}"
)

MQ1 = FrozenKey({"brokerName": "broker-a", "queueId": 1, "topic": "TopicTest"})
MQ0 = FrozenKey({"topic": "TopicTest", "queueId": 0, "brokerName": "broker-a"})


def consumer_offset_value() -> dict:
    return {
        "dataVersion": {"counter": 0, "stateVersion": 0, "timestamp": 1700000000000},
        # A tuple writes like the Java Set that groupTopicMap really is: inline.
        "groupTopicMap": {"GroupA": ("TopicTest", "%RETRY%GroupA")},
        "offsetTable": {
            "%RETRY%GroupA@GroupA": {0: 5},
            "TopicTest@GroupA": {0: 250, 1: 251, 2: 0, 10: 9999999999},
        },
    }


def test_pretty_reproduces_spec_2_2_exactly() -> None:
    assert dumps_pretty(consumer_offset_value()) == CONSUMER_OFFSET_TEXT


def test_parse_spec_2_2() -> None:
    v = loads(CONSUMER_OFFSET_TEXT)
    assert v["offsetTable"]["TopicTest@GroupA"] == {0: 250, 1: 251, 2: 0, 10: 9999999999}
    assert list(v["offsetTable"]["TopicTest@GroupA"]) == [0, 1, 2, 10]
    assert all(type(k) is int for k in v["offsetTable"]["TopicTest@GroupA"])
    assert v["groupTopicMap"] == {"GroupA": ["TopicTest", "%RETRY%GroupA"]}
    assert v["dataVersion"]["timestamp"] == 1700000000000


def test_parse_spec_2_7_object_keys() -> None:
    v = loads(CLIENT_OFFSETS_TEXT)
    assert v == {"offsetTable": {MQ1: 43, MQ0: 42}}
    assert list(v["offsetTable"]) == [MQ1, MQ0]
    assert MQ0.get("queueId") == 0
    assert MQ0.as_dict() == {"brokerName": "broker-a", "queueId": 0, "topic": "TopicTest"}


def test_pretty_reproduces_spec_2_7_exactly() -> None:
    assert dumps_pretty({"offsetTable": {MQ1: 43, MQ0: 42}}) == CLIENT_OFFSETS_TEXT


def test_frozen_key_is_order_independent_and_hashable() -> None:
    a = FrozenKey({"b": 1, "a": {"x": [1, 2]}})
    b = FrozenKey({"a": {"x": [1, 2]}, "b": 1})
    assert a == b and hash(a) == hash(b)
    assert a.get("a") == FrozenKey({"x": (1, 2)})


def test_compact() -> None:
    assert dumps_compact(consumer_offset_value()) == (
        '{"dataVersion":{"counter":0,"stateVersion":0,"timestamp":1700000000000},'
        '"groupTopicMap":{"GroupA":["TopicTest","%RETRY%GroupA"]},'
        '"offsetTable":{"%RETRY%GroupA@GroupA":{0:5},"TopicTest@GroupA":{0:250,1:251,2:0,10:9999999999}}}'
    )
    assert dumps_compact({"offsetTable": {MQ0: 42}}) == (
        '{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"TopicTest"}:42}}'
    )


def test_spec_2_3_topic_compact_form() -> None:
    # Compact form quoted in spec 2.3 (joined: the spec wraps it across lines).
    text = (
        '{"dataVersion":{"counter":0,"stateVersion":0,"timestamp":1700000000000},"topicConfigTable":'
        '{"TopicTest":{"attributes":{"message.type":"NORMAL"},"order":false,"perm":6,"readQueueNums":4,'
        '"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":4}}}'
    )
    assert dumps_compact(loads(text)) == text


def test_empty_containers_and_pretty_list() -> None:
    assert dumps_pretty({}) == "{}"
    assert dumps_pretty({"a": {}, "b": []}) == '{\n\t"a":{},\n\t"b":[]\n}'
    # A Java List (Python list) breaks lines in pretty mode, a Set (tuple) does not.
    assert dumps_pretty({"l": [1, 2], "s": (1, 2)}) == '{\n\t"l":[\n\t\t1,\n\t\t2\n\t],\n\t"s":[1,2]\n}'


def test_null_values_omitted_like_fastjson() -> None:
    assert dumps_compact({"a": None, "b": 1}) == '{"b":1}'


def test_strings_escaping() -> None:
    s = 'q"b\\s/订单\n\x01'
    assert dumps_compact(s) == '"q\\"b\\\\s/订单\\n\\u0001"'
    assert loads(dumps_compact(s)) == s


def test_lenient_inputs() -> None:
    assert loads('{"0":12}') == {"0": 12}  # quoted key stays a string; decoders convert
    assert loads('{"a":"12"}') == {"a": "12"}  # numbers-as-strings stay strings
    assert loads("\t{\r\n-1:-5,\t7 : 8}\n") == {-1: -5, 7: 8}
    assert loads('{"a":[1.5,-2e3,true,false,null]}') == {"a": [1.5, -2000.0, True, False, None]}
    assert loads('\ufeff{"a":1,}') == {"a": 1}
    assert loads('"\\u8ba2"') == "订"


@pytest.mark.parametrize(
    ("text", "pos"),
    [
        ("", 0),
        ("{", 1),
        ('{"a":1', 6),
        ('{"a" 1}', 5),
        ('{"a":1}x', 7),
        ("{a:1}", 1),
        ('{"a":tru}', 5),
        ('"abc', 0),
        ("[1 2]", 3),
        ("{١:1}", 1),
        ("-", 0),
    ],
)
def test_errors_have_position(text: str, pos: int) -> None:
    with pytest.raises(StoreCorruptError) as exc:
        loads(text)
    assert exc.value.position == pos  # type: ignore[attr-defined]
    assert f"character {pos}" in exc.value.message


def test_deep_nesting_is_typed_error() -> None:
    with pytest.raises(StoreCorruptError):
        loads("[" * 5000 + "]" * 5000)


# --- properties ----------------------------------------------------------------------------

scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)
keys = st.one_of(st.text(), st.integers(min_value=-(2**31), max_value=2**31 - 1))
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(keys, children, max_size=4),
    ),
    max_leaves=20,
)


@settings(max_examples=cases(200))
@given(values)
def test_round_trip(v: object) -> None:
    assert loads(dumps_pretty(v)) == v
    assert loads(dumps_compact(v)) == v


@given(st.dictionaries(st.text(), st.integers()))
def test_standard_json_is_read(d: dict) -> None:
    assert loads(json.dumps(d, ensure_ascii=False)) == d
    assert loads(json.dumps(d, indent="\t")) == d


@settings(max_examples=cases(300))
@given(st.text(max_size=60))
def test_random_text_only_typed_errors(text: str) -> None:
    try:
        loads(text)
    except StoreCorruptError:
        pass


@given(st.integers(min_value=0, max_value=len(CLIENT_OFFSETS_TEXT) - 1))
def test_truncated_text_is_corrupt(n: int) -> None:
    with pytest.raises(StoreCorruptError):
        loads(CLIENT_OFFSETS_TEXT[:n])


@given(st.integers(min_value=0, max_value=len(CONSUMER_OFFSET_TEXT) - 1))
def test_truncated_offsets_is_corrupt(n: int) -> None:
    with pytest.raises(StoreCorruptError):
        loads(CONSUMER_OFFSET_TEXT[:n])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{ 0 : 1 ,\n\t2:-3}", {0: 1, 2: -3}),
        ("{0:1,}", {0: 1}),
        ("{0:1.5}", {0: 1.5}),
        ('{0:"1"}', {0: "1"}),
        ('{0:1,"a":2}', {0: 1, "a": 2}),
        ("{0:1,0:2}", {0: 2}),
    ],
)
def test_int_map_fast_path_agrees_with_general_parser(text: str, expected: dict) -> None:
    assert loads(text) == expected
    assert loads("[" + text + "]") == [expected]


@pytest.mark.parametrize("text", ["{0:1", "{0:1,", "{0:}", "{0 1}", "{0:1 2:3}"])
def test_int_map_malformed(text: str) -> None:
    with pytest.raises(StoreCorruptError):
        loads(text)


# --- unquoted integer keys through the stdlib parser (fastjson._loads_int_keys) -------------------


def _lenient(text: str) -> object:
    from mqctl.fastjson import _Parser

    p = _Parser(text)
    value = p.value(0)
    p.skip_ws()
    assert p.pos == len(text)
    return value


def test_offset_tables_take_the_stdlib_path(monkeypatch: pytest.MonkeyPatch) -> None:
    import mqctl.fastjson as fj

    expected = _lenient(CONSUMER_OFFSET_TEXT)
    monkeypatch.setattr(fj, "_Parser", None)  # the lenient parser is not reached
    doc = loads(CONSUMER_OFFSET_TEXT)
    assert doc == expected
    assert doc["offsetTable"]["TopicTest@GroupA"] == {0: 250, 1: 251, 2: 0, 10: 9999999999}
    assert all(type(k) is int for k in doc["offsetTable"]["TopicTest@GroupA"])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a,1:b":{0:5}}', {"a,1:b": {0: 5}}),  # a key-like run inside a string stays text
        ('{"x{2:":{-3:4}}', {"x{2:": {-3: 4}}),
        ('{"q\\",7:":{1:1}}', {'q",7:': {1: 1}}),  # after an escaped quote, still inside the string
        ('{"\\u00001":2,3:4}', {"\x001": 2, 3: 4}),  # an escaped NUL key is never read as an int
        ('{1:2,"1":3}', {1: 2, "1": 3}),  # a quoted number stays a string beside the int key
        ("{ 7 :\n 8 , 9:[{10:11}]}", {7: 8, 9: [{10: 11}]}),
        ("{1:2,1:5}", {1: 5}),  # the last of two equal keys, as fastjson's map keeps it
    ],
)
def test_integer_keys_read_as_the_lenient_parser_reads_them(text: str, expected: object) -> None:
    assert loads(text) == expected == _lenient(text)
    assert [type(k) for k in loads(text)] == [type(k) for k in expected]  # type: ignore[attr-defined]


_keys = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.text(alphabet=st.sampled_from(list('ab,{}:"\\0129 \x00')), max_size=8),
)
_docs = st.recursive(
    st.one_of(st.integers(), st.text(max_size=6), st.booleans(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_keys, inner, max_size=4)),
    max_leaves=12,
)


@settings(max_examples=cases(300), deadline=None)
@given(_docs)
def test_stdlib_path_equals_the_lenient_parser(doc: object) -> None:
    for text in (dumps_compact(doc), dumps_pretty(doc)):
        assert loads(text) == _lenient(text)
