"""The tag scan kernel against a plain Python loop over hand-packed CQ entries."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mqctl_testkit.thorough import cases

from mqctl.errors import StoreCorruptError
from mqctl.store.consumequeue import CQ_DTYPE, ConsumeQueue
from mqctl.store.scan import (
    count_tag_matches,
    kernel_baseline,
    matching_indices,
    matching_positions,
    scan_range,
)

# String.hashCode values from spec section 7 (computed with a JVM), written out literally so the
# kernel is not checked against our own hash function.
AA = BB = 2112  # "Aa" and "BB" collide
TAG_A = 2598919
TAG_ZH = -1796778963  # "Tag-中文"
POLY = -2147483648  # "polygenelubricants"
SPACE = -1742848654  # "tag with space"

TAGS = [TAG_A, AA, 0, TAG_ZH, POLY, TAG_A, SPACE, BB, 42, TAG_ZH, 0, -1]


def _pack(tags: list[int]) -> bytes:
    return b"".join(struct.pack(">qiq", 1000 + 50 * i, 50, t) for i, t in enumerate(tags))


def _loop(tags: list[int], hashes: set[int]) -> list[int]:
    return [i for i, t in enumerate(tags) if t in hashes]


@pytest.mark.parametrize(
    "hashes",
    [
        set(),
        {TAG_A},
        {AA},  # collides with BB: both count, as the broker's pre-filter does
        {TAG_ZH, POLY},
        {SPACE, -1, 0},
        {TAG_A, TAG_ZH, POLY, SPACE},
        {TAG_A, TAG_ZH, POLY, SPACE, AA, 42},  # > 4 hashes: the np.isin path
        {123456},
    ],
)
def test_matches_python_loop(hashes: set[int]) -> None:
    raw = _pack(TAGS)
    expected = _loop(TAGS, hashes)
    arr = np.frombuffer(raw, dtype=CQ_DTYPE)
    for entries in (raw, bytearray(raw), memoryview(raw), np.frombuffer(raw, dtype=np.uint8), arr):
        assert count_tag_matches(entries, hashes) == len(expected)
        assert matching_positions(entries, hashes).tolist() == expected
    assert matching_indices is matching_positions


def test_hand_counted_values() -> None:
    raw = _pack(TAGS)
    assert count_tag_matches(raw, {TAG_A}) == 2
    assert count_tag_matches(raw, {BB}) == 2
    assert count_tag_matches(raw, [TAG_ZH, TAG_ZH]) == 2  # duplicates do not double count
    assert matching_positions(raw, {POLY, -1}).tolist() == [4, 11]


def test_strided_view_over_larger_buffer() -> None:
    raw = _pack(TAGS)
    arr = np.frombuffer(raw, dtype=CQ_DTYPE)[1::3]  # every third entry: a non-contiguous view
    expected = _loop(TAGS[1::3], {AA, TAG_ZH})
    assert count_tag_matches(arr, {AA, TAG_ZH}) == len(expected) == 2
    assert matching_positions(arr, {AA, TAG_ZH}).tolist() == expected


def test_tags_only_match_the_tags_column() -> None:
    # The hash appears as a phys offset and as a size, but only the tags column may match.
    raw = struct.pack(">qiq", TAG_A, TAG_A, 7) + struct.pack(">qiq", 1, 2, TAG_A)
    assert matching_positions(raw, {TAG_A}).tolist() == [1]


def test_ragged_buffer_is_corrupt() -> None:
    with pytest.raises(StoreCorruptError):
        count_tag_matches(_pack(TAGS)[:-1], {TAG_A})
    with pytest.raises(StoreCorruptError):
        count_tag_matches(np.zeros(3, dtype=np.int64), {TAG_A})


@settings(max_examples=cases(200), deadline=None)
@given(
    st.lists(st.integers(-(2**31), 2**31 - 1) | st.sampled_from([0, AA, TAG_A, POLY]), max_size=60),
    st.sets(st.integers(-(2**31), 2**31 - 1) | st.sampled_from([0, AA, TAG_A, POLY]), max_size=7),
)
def test_random_against_loop(tags: list[int], hashes: set[int]) -> None:
    raw = _pack(tags)
    assert matching_positions(raw, hashes).tolist() == _loop(tags, hashes)


def test_scan_range_over_segments(tmp_path: Path) -> None:
    tags = (TAGS * 3)[:31]
    data = _pack(tags)
    seg = 7 * 20
    for off in range(0, len(data), seg):
        chunk = data[off : off + seg]
        (tmp_path / f"{off:020d}").write_bytes(chunk + bytes(seg - len(chunk)))
    with ConsumeQueue(tmp_path) as cq:
        assert cq.max_offset == 31
        for start, end in [(0, 31), (3, 17), (6, 8), (10, 10), (0, 1)]:
            for hashes in ({TAG_A}, {AA, TAG_ZH}, {0, -1, POLY, SPACE, 42}):
                assert scan_range(cq, start, end, hashes) == len(_loop(tags[start:end], hashes))
        assert scan_range(cq, 0, 31, set()) == 0


def test_kernel_baseline_sums_words() -> None:
    raw = bytes(range(40))
    expected = sum(struct.unpack(f"<{len(raw) // 8}Q", raw)) if sys.byteorder == "little" else None
    if expected is not None:
        assert kernel_baseline(raw) == expected % 2**64
    assert kernel_baseline(bytes(20)) == 0
    assert kernel_baseline(np.frombuffer(raw, dtype=np.uint8)) == kernel_baseline(raw)


def test_kernel_module_does_not_import_spark() -> None:
    code = "import sys, mqctl.store.scan; sys.exit('pyspark' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
