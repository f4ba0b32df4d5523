"""Java collection orders against the spec's worked example and hand-computed bucket layouts.

The small cases use Integer-like keys (hashCode = the value) so every bucket can be worked out on
paper: below 65536, spread(h) == h, so bucket = h & (capacity - 1).
"""

from __future__ import annotations

import pytest

from mqctl.model import MessageQueue
from mqctl.model.javaorder import (
    bucket,
    concurrent_hashmap_order,
    hashmap_order,
    hashmap_putall_order,
    hashset_order,
    java_string_hash,
    message_queue_hash,
    spread,
    string_order,
)


def ident(x: int) -> int:
    return x


def test_message_queue_hash_by_hand() -> None:
    # r = 1; r = 31r + 0; r = 31r + 0; r = 31r + 0  ->  31^3
    assert message_queue_hash(MessageQueue("", "", 0)) == 29791
    # broker "b" = 98, queue 1, topic "a" = 97: (31 + 98) * 31 + 1 = 4000; 4000 * 31 + 97 = 124097
    assert message_queue_hash(MessageQueue("a", "b", 1)) == 124097


def test_message_queue_hash_wraps_to_signed_32() -> None:
    mq = MessageQueue("TopicTest", "broker-a", 3)
    r = 1
    for part in (java_string_hash("broker-a"), 3, java_string_hash("TopicTest")):
        r = (31 * r + part) & 0xFFFFFFFF
    expected = r - (1 << 32) if r >= 1 << 31 else r
    assert message_queue_hash(mq) == expected
    assert -(1 << 31) <= message_queue_hash(mq) < 1 << 31


def test_spread_and_bucket() -> None:
    assert spread(0x10000) == 0x10001  # the high half lands in bit 0
    assert bucket(0x10000, 16) == 1
    assert spread(-1) == 0xFFFF0000  # unsigned view, high half cancels the low half
    assert bucket(-1, 16) == 0
    assert bucket(17, 16) == 1 and bucket(17, 32) == 17


def test_spec_worked_example_hashset() -> None:
    queues = [MessageQueue("TopicTest", b, q) for b in ("broker-a", "broker-b") for q in range(4)]
    got = [f"{mq.broker_name[-1]}{mq.queue_id}" for mq in hashset_order(queues, message_queue_hash)]
    assert got == ["a3", "a2", "b3", "b0", "a1", "b2", "a0", "b1"]


def test_spec_worked_example_hashmap_keys() -> None:
    pairs = [(ip, []) for ip in ("10.0.0.1", "10.0.0.2", "192.168.1.100")]
    assert [k for k, _ in hashmap_order(pairs, java_string_hash)] == ["192.168.1.100", "10.0.0.2", "10.0.0.1"]


def test_same_bucket_keeps_insertion_order() -> None:
    # 65536 spreads to bucket 1, like 1; 0 is bucket 0.
    assert hashset_order([65536, 1, 0], ident) == [0, 65536, 1]
    assert hashset_order([1, 65536, 0], ident) == [0, 1, 65536]


def test_hashset_resize_past_twelve_entries() -> None:
    keys = [17, 1, 16, 0, 2, 3, 4, 5, 6, 7, 8, 9]
    # 12 entries fit in 16 buckets: 16 and 0 share bucket 0, 17 and 1 share bucket 1.
    assert hashset_order(keys, ident) == [16, 0, 17, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    # The 13th entry doubles to 32 buckets: 16 and 17 get their own buckets after 10.
    assert hashset_order([*keys, 10], ident) == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 16, 17]


def test_hashset_ignores_duplicates() -> None:
    assert hashset_order([3, 1, 3, 2], ident) == [1, 2, 3]


def test_hashmap_repeated_key_keeps_first_position_last_value() -> None:
    assert hashmap_order([(16, "a"), (0, "b"), (16, "c")], ident) == [(16, "c"), (0, "b")]


def test_concurrent_hashmap_resizes_at_twelve() -> None:
    pairs = [(k, k) for k in [16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]]
    # HashMap: 12 entries still in 16 buckets -> 16 before 0.
    assert [k for k, _ in hashmap_order(pairs, ident)][:2] == [16, 0]
    # ConcurrentHashMap: 12 entries already need 32 buckets -> 16 after 10.
    assert [k for k, _ in concurrent_hashmap_order(pairs, ident)] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 16]
    # 11 entries: still 16 buckets.
    assert [k for k, _ in concurrent_hashmap_order(pairs[:11], ident)][:2] == [16, 0]


def test_putall_presizes_from_the_first_map() -> None:
    twelve = [(k, k) for k in [16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]]
    # int(12 / 0.75 + 1) = 17 -> 32 buckets, although 12 entries put one by one fit in 16.
    assert [k for k, _ in hashmap_putall_order([twelve], ident)] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 16]
    eight = twelve[:8]
    # int(8 / 0.75 + 1) = 11 -> 16 buckets: 16 shares bucket 0 and was put first.
    assert [k for k, _ in hashmap_putall_order([eight], ident)] == [16, 0, 1, 2, 3, 4, 5, 6]


def test_putall_accumulates_and_resizes() -> None:
    first = [(k, "x") for k in [16, 0, 1, 2, 3, 4, 5, 6]]  # 16 buckets
    second = [(k, "y") for k in [7, 8, 9, 10, 11]]  # 13 entries in all -> 32 buckets
    got = hashmap_putall_order([first, [], second], ident)
    assert [k for k, _ in got] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16]
    # a later map overwrites values in place
    got = hashmap_putall_order([[(16, "a"), (0, "b")], [(16, "c")]], ident)
    assert got == [(16, "c"), (0, "b")]


def test_putall_of_nothing_is_empty() -> None:
    assert hashmap_putall_order([[], []], ident) == []


def test_string_order_is_a_hashset_of_strings() -> None:
    # The order fastjson printed in spec 2.2 (a real HashSet(8)): TopicTest falls in bucket 1
    # (hash -1902610879), %RETRY%GroupA in bucket 5 (hash -105794748), whatever the insertion order.
    assert string_order(["%RETRY%GroupA", "TopicTest"], 8) == ["TopicTest", "%RETRY%GroupA"]
    # "Aa" and "BB" share a bucket: insertion order is kept.
    assert string_order(["BB", "Aa"]) == ["BB", "Aa"]
    assert string_order(["Aa", "BB"]) == ["Aa", "BB"]
    # Small single-char strings: hash = code point, so buckets ascend ("a"=97 -> 1, "b" -> 2 ...).
    assert string_order(["c", "a", "b"]) == ["a", "b", "c"]


def _utf16_units(s: str) -> list[int]:
    data = s.encode("utf-16-be", "surrogatepass")
    return [(data[i] << 8) | data[i + 1] for i in range(0, len(data), 2)]


def test_java_compare_key_orders_as_utf16_code_units() -> None:
    """String.compareTo compares UTF-16 code units: U+10000 (surrogates D800 DC00) sorts BELOW
    U+E000 and U+FFFF, although its code point is higher."""
    import random

    from mqctl.model import java_compare_key

    assert sorted(["\ue000", "\U00010000", "a", "\uffff"], key=java_compare_key) == [
        "a",
        "\U00010000",
        "\ue000",
        "\uffff",
    ]
    alphabet = [
        "a",
        "Z",
        "é",
        "\ud7ff",
        "\ue000",
        "\uffff",
        "\U00010000",
        "\U0001f600",
        "\U0010ffff",
        "\ud800",
    ]
    rng = random.Random(7)
    words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4))) for _ in range(2000)]
    assert sorted(words, key=java_compare_key) == sorted(words, key=_utf16_units)
    mqs = [MessageQueue(rng.choice(words), rng.choice(words), rng.randint(0, 3)) for _ in range(500)]
    by_hand = sorted(mqs, key=lambda m: (_utf16_units(m.topic), _utf16_units(m.broker_name), m.queue_id))
    assert sorted(mqs, key=MessageQueue.sort_key) == by_hand


@pytest.mark.parametrize(
    ("text", "sep", "expected"),
    [
        # What Java 17's String.split answered for each (a one-line main run with java 17).
        ("a,b,c", ",", ["a", "b", "c"]),
        ("a,,b", ",", ["a", "", "b"]),  # empty strings inside are kept
        (",a", ",", ["", "a"]),  # and a leading one
        ("a,b,,", ",", ["a", "b"]),  # trailing ones are dropped
        (",", ",", []),  # only empty strings: nothing at all
        ("", ",", [""]),  # no separator, even in an empty string: the string itself
        ("abc", ",", ["abc"]),
        ("topic@group@", "@", ["topic", "group"]),
    ],
)
def test_java_split_is_javas_string_split(text: str, sep: str, expected: list[str]) -> None:
    from mqctl.model import java_split

    assert java_split(text, sep) == expected
