"""Fuzzing every body decoder: whatever the bytes, only ``ProtocolError`` may escape.

Hypothesis covers the structured cases (random bytes, JSON-like text, valid bodies with one
value replaced by a value of another type or size); a seeded mutation loop over the golden
bodies (flip, insert, delete, duplicate, splice) supplies the bulk; truncation at every position,
huge numbers and deep nesting are enumerated exhaustively.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mqctl_testkit.thorough import cases
from test_bodies import (
    CLUSTER_INFO,
    CONSUME_STATS,
    CONSUME_STATS_4X,
    CONSUMER_IDS,
    CONSUMER_OFFSETS,
    GROUP_LIST,
    RESET_CPP,
    RESET_JAVA,
    ROUTE_DEFAULT,
    ROUTE_ESCAPED,
    ROUTE_STANDARD,
    SUBSCRIPTION_GROUPS,
    TOPIC_CONFIGS,
    TOPIC_LIST,
    TOPIC_STATS,
)
from test_bodies_client import CONNECTION, CONNECTION_TAGS, RUNNING_CPP, RUNNING_CPP_EMPTY, RUNNING_JAVA
from test_bodies_queue import CQ_PLAIN, CQ_WITH_GROUP, RECORD_V4, RECORD_V6

from mqctl.errors import ProtocolError
from mqctl.fastjson import FrozenKey, dumps_compact, loads
from mqctl.remoting.bodies import (
    decode_cluster_info,
    decode_consume_stats,
    decode_consumer_connection,
    decode_consumer_offsets_body,
    decode_name_list,
    decode_query_consume_queue,
    decode_reset_offset_body,
    decode_running_info,
    decode_stored_message,
    decode_subscription_groups_body,
    decode_topic_configs,
    decode_topic_route,
    decode_topic_stats,
)

DECODERS: dict[str, Callable[[bytes], object]] = {
    "route": lambda b: decode_topic_route(b, "TopicTest"),
    "cluster": decode_cluster_info,
    "consume_stats": lambda b: decode_consume_stats(b, "g1", None),
    "connection": lambda b: decode_consumer_connection(b, "g1"),
    "running": lambda b: decode_running_info(b, "c"),
    "reset": decode_reset_offset_body,
    "topic_stats": decode_topic_stats,
    "offsets": decode_consumer_offsets_body,
    "topic_configs": decode_topic_configs,
    "groups": decode_subscription_groups_body,
    "topic_list": lambda b: decode_name_list(b, "topicList"),
    "group_list": lambda b: decode_name_list(b, "groupList"),
    "consumer_ids": lambda b: decode_name_list(b, "consumerIdList"),
    "cq": lambda b: decode_query_consume_queue(b, 0),
    "message": lambda b: decode_stored_message(b, "broker-a"),
}

SEEDS: list[tuple[str, bytes]] = [
    ("route", ROUTE_STANDARD),
    ("route", ROUTE_DEFAULT),
    ("route", ROUTE_ESCAPED),
    ("cluster", CLUSTER_INFO),
    ("consume_stats", CONSUME_STATS),
    ("consume_stats", CONSUME_STATS_4X),
    ("connection", CONNECTION),
    ("connection", CONNECTION_TAGS),
    ("running", RUNNING_JAVA),
    ("running", RUNNING_CPP),
    ("running", RUNNING_CPP_EMPTY),
    ("reset", RESET_JAVA),
    ("reset", RESET_CPP),
    ("topic_stats", TOPIC_STATS),
    ("offsets", CONSUMER_OFFSETS),
    ("topic_configs", TOPIC_CONFIGS),
    ("groups", SUBSCRIPTION_GROUPS),
    ("topic_list", TOPIC_LIST),
    ("group_list", GROUP_LIST),
    ("consumer_ids", CONSUMER_IDS),
    ("cq", CQ_PLAIN),
    ("cq", CQ_WITH_GROUP),
    ("message", RECORD_V4),
    ("message", RECORD_V6),
]
JSON_SEEDS = [(name, body) for name, body in SEEDS if name != "message"]

MUTATION_INPUTS = cases(100_000)


def attempt(name: str, body: bytes) -> bool:
    """Decode; True if it succeeded, False on ProtocolError; anything else fails the test."""
    try:
        DECODERS[name](body)
    except ProtocolError:
        return False
    except Exception as exc:  # noqa: BLE001 - the point is to report any other escape
        raise AssertionError(f"{name}: {type(exc).__name__}: {exc} for body {body[:300]!r}") from exc
    return True


def test_seeds_decode() -> None:
    assert all(attempt(name, body) for name, body in SEEDS)


# ---------------------------------------------------------------------------------------------
# Exhaustive: truncation, huge numbers, deep nesting


def test_every_truncation() -> None:
    count = 0
    for name, body in SEEDS:
        for n in range(len(body)):
            attempt(name, body[:n])
            count += 1
    assert count > 5000


def test_json_truncations_are_refused() -> None:
    # A JSON body cut anywhere is never a complete document (each seed ends with its last brace).
    for name, body in JSON_SEEDS:
        for n in range(len(body)):
            assert not attempt(name, body[:n]), (name, n)


_DIGITS = re.compile(rb"-?\d+")
_HUGE = [
    b"9" * 25,
    b"-" + b"9" * 25,
    b"9" * 5000,
    b'"' + b"9" * 5000 + b'"',
    b"1e999",
    b"-1e999",
    b"1" + b"0" * 400,
]


def test_every_number_made_huge() -> None:
    count = 0
    for name, body in JSON_SEEDS:
        for m in _DIGITS.finditer(body):
            for huge in _HUGE:
                attempt(name, body[: m.start()] + huge + body[m.end() :])
                count += 1
    assert count > 1000


_DEEP = [
    b"[" * 100_000,
    b"{" * 100_000,
    b'{"a":' * 100_000,
    b'{"offsetTable":' + b"{" * 50_000 + b"}" * 50_000 + b"}",
    b'{"mqTable":{' + b'{"a":1,' * 30_000,  # a chain of objects used as map keys
    b'{"topicList":[' + b"[" * 65 + b"]" * 65 + b"]}",  # one level past MAX_DEPTH
]
# Deep text inside strings: a key that is itself JSON text is parsed behind the same guard.
_DEEP_IN_STRINGS = [
    b'{"offsetTable":{"' + b"{" * 50_000 + b'":1}}',
    b'{"mqTable":{"' + b"{" * 50_000 + b'":{}}}',
    b'{"mqTable":{"' + b"[" * 50_000 + b'":1}}',
]


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_deep_nesting(name: str) -> None:
    for body in _DEEP:
        assert not attempt(name, body)
    for body in _DEEP_IN_STRINGS:
        attempt(name, body)


# ---------------------------------------------------------------------------------------------
# Hypothesis: random bytes, JSON-ish text, typed replacements inside valid bodies

names = st.sampled_from(sorted(DECODERS))
FUZZ = settings(max_examples=cases(700), deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Re-encoding a whole document per example is slower: fewer examples, same coverage of paths.
FUZZ_DOC = settings(max_examples=cases(350), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(names, st.binary(max_size=300))
def test_random_bytes(name: str, body: bytes) -> None:
    attempt(name, body)


_JSONISH = st.text(
    alphabet='{}[]":,\\/ -.0123456789eEtruefalsnl$refbrokerNametopicqueueIdoffsetTable', max_size=200
)


@FUZZ
@given(names, _JSONISH)
def test_random_jsonish_text(name: str, text: str) -> None:
    attempt(name, text.encode())


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(["0", "-1", "9223372036854775808", "true", "{", '{"topic":"T"}', "1e5"]),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.one_of(st.text(max_size=8), st.integers(-5, 5)), children, max_size=3),
    ),
    max_leaves=8,
)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_paths(v, (*path, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_paths(v, (*path, i)))
    return out


def _replace(doc: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        return {k: (_replace(v, rest, new) if k == head else v) for k, v in doc.items()}
    return [(_replace(v, rest, new) if i == head else v) for i, v in enumerate(doc)]


# Seeds that are standard fastjson text (not the repaired SDK quirks), as parsed documents.
_PARSED = [(name, loads(body.decode())) for name, body in JSON_SEEDS if body is not RUNNING_CPP_EMPTY]


@FUZZ_DOC
@given(st.data())
def test_typed_replacement(data: st.DataObject) -> None:
    name, doc = data.draw(st.sampled_from(_PARSED))
    path = data.draw(st.sampled_from(_paths(doc)))
    new = data.draw(json_values)
    attempt(name, dumps_compact(_replace(doc, path, new)).encode())


@FUZZ_DOC
@given(st.data())
def test_key_replacement(data: st.DataObject) -> None:
    # Keys matter too: MessageQueue objects, broker ids, queue ids, topic@group.
    name, doc = data.draw(st.sampled_from(_PARSED))
    maps = [p for p in _paths(doc) if isinstance(_get(doc, p), dict) and _get(doc, p)]
    path = data.draw(st.sampled_from(maps))
    target = _get(doc, path)
    old = data.draw(st.sampled_from(list(target)))
    new = data.draw(
        st.one_of(
            st.text(max_size=8),
            st.integers(-(2**70), 2**70),
            st.builds(
                FrozenKey, st.dictionaries(st.sampled_from(["topic", "brokerName", "queueId"]), scalars)
            ),
        )
    )
    replaced = {(new if k == old else k): v for k, v in target.items()}
    attempt(name, dumps_compact(_replace(doc, path, replaced)).encode())


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        doc = doc[step]
    return doc


# ---------------------------------------------------------------------------------------------
# The bulk: seeded byte-level mutation of the golden bodies

_TOKENS = [
    b"{",
    b"}",
    b"[",
    b"]",
    b'"',
    b":",
    b",",
    b"\\",
    b"null",
    b"-",
    b"0",
    b"9" * 30,
    b"1e400",
    b"\xff",
    b"{{",
]


def _mutate(rng: random.Random, body: bytes) -> bytes:
    buf = bytearray(body)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        pos = rng.randrange(len(buf) + 1)
        if op == 0 and buf:  # flip bits of one byte
            i = min(pos, len(buf) - 1)
            buf[i] ^= 1 << rng.randrange(8)
        elif op == 1:  # insert a random byte
            buf[pos:pos] = bytes([rng.randrange(256)])
        elif op == 2:  # insert a JSON-significant token
            buf[pos:pos] = rng.choice(_TOKENS)
        elif op == 3 and buf:  # delete a run
            del buf[pos : pos + rng.randint(1, 8)]
        elif op == 4 and buf:  # duplicate a slice somewhere else
            start = rng.randrange(len(buf))
            chunk = buf[start : start + rng.randint(1, 40)]
            buf[pos:pos] = chunk
        else:  # overwrite a byte
            if buf:
                buf[min(pos, len(buf) - 1)] = rng.randrange(256)
    return bytes(buf)


def test_mutation_bulk() -> None:
    rng = random.Random(0x5EED_B0D1E5)
    decoded = refused = 0
    for i in range(MUTATION_INPUTS):
        name, body = SEEDS[i % len(SEEDS)]
        if attempt(name, _mutate(rng, body)):
            decoded += 1
        else:
            refused += 1
    assert decoded + refused == MUTATION_INPUTS
    # Both outcomes must be common, or the mutations are not exercising the decoders.
    assert decoded > MUTATION_INPUTS // 50
    assert refused > MUTATION_INPUTS // 2
