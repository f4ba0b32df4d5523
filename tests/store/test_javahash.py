"""java_string_hash against the JVM-computed vectors of spec section 7."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mqctl.model import java_string_hash

# (tag, String.hashCode, CQ tagsCode bytes as hex) — spec 7, computed with a JVM.
VECTORS = [
    ("TagA", 2598919, "000000000027a807"),
    ("TagB", 2598920, "000000000027a808"),
    ("*", 42, "000000000000002a"),
    ("", 0, "0000000000000000"),
    ("\u8ba2\u5355", 1129459, "0000000000113bf3"),
    ("支付成功", 791872472, "000000002f3303d8"),
    ("Tag-中文", -1796778963, "ffffffff94e7542d"),
    ("tag with space", -1742848654, "ffffffff981e3d72"),
    ("polygenelubricants", -2147483648, "ffffffff80000000"),
    ("\U0001f600", 1772899, "00000000001b0d63"),
    ("Aa", 2112, "0000000000000840"),
    ("BB", 2112, "0000000000000840"),
    ("TagA||TagB", 1789476431, "000000006aa93e4f"),
]


@pytest.mark.parametrize(("tag", "expected", "cq_hex"), VECTORS)
def test_spec_vectors(tag: str, expected: int, cq_hex: str) -> None:
    h = java_string_hash(tag)
    assert h == expected
    # The CQ stores the int sign-extended to a big-endian long.
    assert struct.pack(">q", h).hex() == cq_hex


def test_collision_pair() -> None:
    assert java_string_hash("Aa") == java_string_hash("BB")


def test_surrogate_pair_is_two_code_units() -> None:
    # U+1F600 = D83D DE00: 0xD83D * 31 + 0xDE00, not the code point 0x1F600.
    assert java_string_hash("\U0001f600") == 0xD83D * 31 + 0xDE00
    assert java_string_hash("\U0001f600") != 0x1F600


def test_lone_surrogate_is_accepted() -> None:
    assert java_string_hash("\ud800") == 0xD800


@given(st.text())
def test_range_and_recurrence(s: str) -> None:
    h = java_string_hash(s)
    assert -(2**31) <= h < 2**31
    # h(s + c) = 31*h(s) + c (mod 2^32) for a BMP char c: the defining recurrence.
    h2 = java_string_hash(s + "A")
    assert (h2 - (31 * h + 65)) % 2**32 == 0


def _folded_every_step(s: str) -> int:
    data = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - 2**32 if h >= 2**31 else h


@pytest.mark.parametrize("n", [0, 1, 255, 256, 257, 1000])
@pytest.mark.parametrize("unit", ["a", "é", "\U0001f600", "~"])
def test_long_strings_fold_as_java_does(n: int, unit: str) -> None:
    """Short names are folded once at the end, long ones at every step: the same int either way."""
    s = (unit * n)[: n or None] + "TagA"
    assert java_string_hash(s) == _folded_every_step(s)
