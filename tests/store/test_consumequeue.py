"""ConsumeQueue segments, max/min offsets (spec 1.2, 3.1-3.4) and entry access."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mqctl_testkit.storebytes import cq_entry, seg_name
from mqctl_testkit.thorough import cases

from mqctl.errors import StoreCorruptError, StoreError
from mqctl.store.consumequeue import CQ_DTYPE, CQ_UNIT, ConsumeQueue, Segment, list_segments

PER = 5  # entries per file in these tests: small, so queues span several files
SEG = PER * CQ_UNIT
FILLER = cq_entry(0, 0x7FFFFFFF, 0)


def _write(qdir: Path, entries: list[bytes], first_start: int = 0, seg: int = SEG) -> None:
    """Write entries from byte offset ``first_start`` into zero-padded files of ``seg`` bytes."""
    qdir.mkdir(parents=True, exist_ok=True)
    data = b"".join(entries)
    for off in range(0, max(len(data), 1), seg):
        chunk = data[off : off + seg]
        (qdir / seg_name(first_start + off)).write_bytes(chunk + bytes(seg - len(chunk)))


def _entries(n: int, phys0: int = 1000) -> list[bytes]:
    return [cq_entry(phys0 + 100 * i, 100, i - 3) for i in range(n)]


def test_entry_layout_matches_spec_example() -> None:
    # Spec 4.7: the worked record's CQ entry, big-endian (phys, size, tagsCode).
    raw = bytes.fromhex("0000000000000000000000a6000000000027a807")
    e = np.frombuffer(raw, dtype=CQ_DTYPE)[0]
    assert (int(e["phys"]), int(e["size"]), int(e["tags"])) == (0, 166, 2598919)
    assert CQ_DTYPE.itemsize == CQ_UNIT == 20


def test_list_segments_learns_size_and_sorts(tmp_path: Path) -> None:
    _write(tmp_path, _entries(12))
    (tmp_path / "notes.txt").write_text("ignored")
    segs = list_segments(tmp_path)
    assert [s.start for s in segs] == [0, 100, 200]
    assert all(s.size == SEG for s in segs)
    assert segs[1] == Segment(tmp_path / "00000000000000000100", 100, 100)


def test_list_segments_missing_or_empty_dir(tmp_path: Path) -> None:
    assert list_segments(tmp_path / "nope") == []
    assert list_segments(tmp_path) == []


def test_empty_last_file_is_damage(tmp_path: Path) -> None:
    # The broker maps a CQ file to its full size when it creates it for an entry: an empty one
    # lost entries (tests/store/test_damage.py has the table of segment damage).
    _write(tmp_path, _entries(10))  # two full files
    (tmp_path / seg_name(200)).write_bytes(b"")
    with pytest.raises(StoreCorruptError, match="empty"):
        list_segments(tmp_path)


@pytest.mark.parametrize(
    "files",
    [
        {0: 100, 100: 80},  # inconsistent sizes
        {0: 100, 100: 0, 200: 100},  # empty file in the middle
        {0: 90},  # not a multiple of 20
        {0: 100, 200: 100},  # gap: names not contiguous
        {50: 100},  # name not aligned to the segment size
    ],
)
def test_list_segments_refuses_bad_layouts(tmp_path: Path, files: dict[int, int]) -> None:
    for start, size in files.items():
        (tmp_path / seg_name(start)).write_bytes(bytes(size))
    with pytest.raises(StoreCorruptError):
        list_segments(tmp_path)


@settings(max_examples=cases(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 130)), max_size=5))
def test_list_segments_random_layouts_raise_only_store_corrupt(tmp_path: Path, files: list) -> None:
    d = tmp_path / f"q{abs(hash(tuple(files)))}"
    d.mkdir()
    for idx, size in files:
        (d / seg_name(idx * 60)).write_bytes(bytes(size))
    try:
        segs = list_segments(d)
    except StoreCorruptError:
        return
    if segs:
        assert len({s.size for s in segs}) == 1 and segs[0].size % 20 == 0
        assert all(b.start == a.end for a, b in zip(segs, segs[1:]))


def test_max_offset_stops_at_first_invalid_entry(tmp_path: Path) -> None:
    _write(tmp_path, _entries(7))  # file 0 full, file 1 has 2 entries then zeros
    with ConsumeQueue(tmp_path) as cq:
        assert cq.max_offset == 7
        assert cq.min_offset == 0
        assert cq.entry(6) == (1600, 100, 3)


def test_max_offset_negative_phys_or_zero_size_ends_queue(tmp_path: Path) -> None:
    ents = _entries(4) + [cq_entry(-1, 100, 0), cq_entry(2000, 100, 0)]
    _write(tmp_path / "a", ents, seg=200)
    with ConsumeQueue(tmp_path / "a") as cq:
        assert cq.max_offset == 4
    ents = _entries(4) + [cq_entry(5000, 0, 0), cq_entry(2000, 100, 0)]
    _write(tmp_path / "b", ents, seg=200)
    with ConsumeQueue(tmp_path / "b") as cq:
        assert cq.max_offset == 4


def test_all_zero_last_file_means_max_is_its_start(tmp_path: Path) -> None:
    _write(tmp_path, _entries(10))  # exactly two full files
    (tmp_path / seg_name(200)).write_bytes(bytes(SEG))  # preallocated, never written
    with ConsumeQueue(tmp_path) as cq:
        assert cq.max_offset == 10
        assert cq.min_offset == 0


def test_zero_file_queue(tmp_path: Path) -> None:
    with ConsumeQueue(tmp_path / "none", commitlog_min=12345) as cq:
        assert (cq.min_offset, cq.max_offset) == (0, 0)
        assert list(cq.segment_views()) == []
        assert len(cq.entries(0, 0)) == 0
        with pytest.raises(StoreError):
            cq.entry(0)


def test_min_offset_from_commitlog_min(tmp_path: Path) -> None:
    _write(tmp_path, _entries(13))  # phys 1000, 1100, ..., 2200
    for cl_min, expect in [
        (0, 0),
        (1000, 0),
        (1001, 1),
        (1500, 5),
        (1550, 6),
        (2200, 12),
        (2201, 13),
        (10**9, 13),
    ]:
        with ConsumeQueue(tmp_path, commitlog_min=cl_min) as cq:
            assert cq.min_offset == expect, cl_min
            assert cq.max_offset == 13


def test_min_offset_skips_fillers(tmp_path: Path) -> None:
    # A queue created at offset 3: slots 0..2 are (0, 0x7FFFFFFF, 0) fillers (spec 3.3).
    _write(tmp_path, [FILLER] * 3 + _entries(4))
    with ConsumeQueue(tmp_path, commitlog_min=0) as cq:
        assert (cq.min_offset, cq.max_offset) == (3, 7)


def test_first_files_deleted(tmp_path: Path) -> None:
    # Broker deleted the CQ files [0, 200): the first file on disk starts at entry 10.
    _write(tmp_path, _entries(8, phys0=50_000), first_start=200)
    with ConsumeQueue(tmp_path, commitlog_min=50_000) as cq:
        assert (cq.first_index, cq.min_offset, cq.max_offset) == (10, 10, 18)
        assert cq.entry(10) == (50_000, 100, -3)
        assert cq.entry(17)[0] == 50_700
        for bad in (9, 18, -1):
            with pytest.raises(StoreError):
                cq.entry(bad)


def test_entries_views_and_concatenation(tmp_path: Path) -> None:
    ents = _entries(13)
    _write(tmp_path, ents)
    expected = np.frombuffer(b"".join(ents), dtype=CQ_DTYPE)
    with ConsumeQueue(tmp_path) as cq:
        one = cq.entries(1, 4)
        assert one.base is not None and not one.flags.owndata  # a view into the mmap
        assert np.array_equal(one, expected[1:4])
        across = cq.entries(3, 12)
        assert np.array_equal(across, expected[3:12])
        views = list(cq.segment_views(3, 12))
        assert [(i, len(v)) for i, v in views] == [(3, 2), (5, 5), (10, 2)]
        assert [i for i, _ in cq.segment_views()] == [0, 5, 10]
        with pytest.raises(StoreError):
            cq.entries(0, 14)
        with pytest.raises(StoreError):
            cq.entries(5, 4)


def test_close_with_live_view_does_not_raise(tmp_path: Path) -> None:
    _write(tmp_path, _entries(3))
    with ConsumeQueue(tmp_path) as cq:
        view = cq.entries(0, 3)
    assert int(view["phys"][2]) == 1200  # still readable: the map outlives the queue object
    del view


def test_file_shrunk_after_listing_is_corrupt(tmp_path: Path) -> None:
    _write(tmp_path, _entries(3))
    cq = ConsumeQueue(tmp_path)
    assert len(cq.segments) == 1
    os.truncate(tmp_path / seg_name(0), 40)
    with pytest.raises(StoreCorruptError):
        _ = cq.max_offset
