"""offset_by_time against spec 5.1: its worked table, multi-file queues and a brute-force reference."""

from __future__ import annotations

import shutil
import struct
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mqctl_testkit.storebytes import build_store, cq_entry, seg_name
from mqctl_testkit.thorough import cases

from mqctl.errors import UsageError
from mqctl.store.commitlog import CommitLog
from mqctl.store.consumequeue import ConsumeQueue
from mqctl.store.timesearch import offset_by_time

T1, T3 = 1_700_000_000_000, 1_700_000_000_300


def _query(root: Path, store, ts: int, boundary: str, cl_dirs: list[Path] | None = None) -> int:
    with CommitLog(cl_dirs or [store.cl_dir]) as cl, ConsumeQueue(store.cq_dir, cl.min_offset) as cq:
        return offset_by_time(cq, cl, ts, boundary)


def reference(times: list[int], lo: int, hi: int, ts: int, boundary: str) -> int:
    """Spec 5.1 net effect over the live entries [lo, hi): LOWER = first with T >= ts, else max;
    UPPER = last with T <= ts, else min."""
    live = range(lo, hi)
    if boundary == "lower":
        return next((i for i in live if times[i] >= ts), hi)
    return next((i for i in reversed(live) if times[i] <= ts), lo)


# Spec 5.1 table: store times [t1,t1,t1,t3,t3] at offsets 0..4 (min 0, max 5).
SPEC_TABLE = [
    (T1 - 1, 0, 0),
    (T1, 0, 2),
    (T1 + 150, 3, 2),
    (T3, 3, 4),
    (T3 + 1, 5, 4),
]


@pytest.mark.parametrize("per", [5, 2, 1])
@pytest.mark.parametrize(("ts", "lower", "upper"), SPEC_TABLE)
def test_spec_table(tmp_path: Path, per: int, ts: int, lower: int, upper: int) -> None:
    store = build_store(tmp_path, [T1, T1, T1, T3, T3], cq_entries_per_file=per)
    assert _query(tmp_path, store, ts, "lower") == lower
    assert _query(tmp_path, store, ts, "upper") == upper
    assert _query(tmp_path, store, ts, "LOWER") == lower  # boundary names are case-insensitive


def test_empty_queue_is_zero(tmp_path: Path) -> None:
    store = build_store(tmp_path, [])
    for b in ("lower", "upper"):
        assert _query(tmp_path, store, T1, b) == 0


def test_bad_boundary_is_usage_error(tmp_path: Path) -> None:
    store = build_store(tmp_path, [T1])
    with pytest.raises(UsageError):
        _query(tmp_path, store, T1, "middle")


# Equal-time runs crossing CQ file boundaries (5 entries per file).
RUNS = [1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 4, 5, 5, 5, 5, 5, 7]
RUN_EXPECT = {
    # ts: (lower, upper) hand-derived from the array above
    0: (0, 0),
    1: (0, 1),
    2: (2, 6),
    3: (7, 10),
    4: (11, 11),
    5: (12, 16),
    6: (17, 16),
    7: (17, 17),
    8: (18, 17),
}


@pytest.mark.parametrize("ts", sorted(RUN_EXPECT))
def test_runs_across_file_boundaries(tmp_path: Path, ts: int) -> None:
    times = [T1 + t for t in RUNS]
    store = build_store(tmp_path, times, cq_entries_per_file=5, cl_seg_size=400)
    assert len(list(store.cq_dir.iterdir())) == 4
    assert len(list(store.cl_dir.iterdir())) > 3
    assert (
        _query(tmp_path, store, T1 + ts, "lower"),
        _query(tmp_path, store, T1 + ts, "upper"),
    ) == RUN_EXPECT[ts]


def test_oldest_commitlog_segment_deleted_min_above_zero(tmp_path: Path) -> None:
    times = [T1 + 10 * i for i in range(12)]
    store = build_store(tmp_path, times, cq_entries_per_file=5, cl_seg_size=400)
    (store.cl_dir / seg_name(0)).unlink()
    gone = sum(p < 400 for p in store.phys)
    assert gone >= 2
    with CommitLog([store.cl_dir]) as cl, ConsumeQueue(store.cq_dir, cl.min_offset) as cq:
        assert cl.min_offset == 400
        assert (cq.min_offset, cq.max_offset) == (gone, 12)
        for ts in [T1 - 5, T1, T1 + 10, T1 + 10 * gone - 1, T1 + 10 * gone, T1 + 55, T1 + 110, T1 + 500]:
            for b in ("lower", "upper"):
                assert offset_by_time(cq, cl, ts, b) == reference(times, gone, 12, ts, b), (ts, b)
        # past -> min, future -> max (LOWER) / max - 1 (UPPER)
        assert offset_by_time(cq, cl, 0, "lower") == gone
        assert offset_by_time(cq, cl, 0, "upper") == gone
        assert offset_by_time(cq, cl, T1 * 2, "lower") == 12
        assert offset_by_time(cq, cl, T1 * 2, "upper") == 11


def test_everything_expired_gives_max(tmp_path: Path) -> None:
    times = [T1 + i for i in range(4)]
    store = build_store(tmp_path, times, cq_entries_per_file=5, cl_seg_size=200)
    for p in sorted(store.cl_dir.iterdir()):
        p.unlink()
    (store.cl_dir / seg_name(10_000)).write_bytes(bytes(200))  # the broker's fresh empty segment
    with CommitLog([store.cl_dir]) as cl, ConsumeQueue(store.cq_dir, cl.min_offset) as cq:
        assert cq.min_offset == cq.max_offset == 4
        for b in ("lower", "upper"):
            assert offset_by_time(cq, cl, T1 + 2, b) == 4


def test_unreadable_store_time_in_binary_search_gives_min(tmp_path: Path) -> None:
    times = [T1 + i for i in range(9)]
    store = build_store(tmp_path, times, cq_entries_per_file=20)
    # Point the middle entry (the search's first probe) 1 byte past its record: not a record.
    cq_file = store.cq_dir / seg_name(0)
    data = bytearray(cq_file.read_bytes())
    data[4 * 20 : 5 * 20] = cq_entry(store.phys[4] + 1, store.sizes[4], 0)
    cq_file.write_bytes(bytes(data))
    # The broker returns 0 from the search, then clamps into [min, max].
    assert _query(tmp_path, store, T1 + 6, "lower") == 0
    assert _query(tmp_path, store, T1 + 2, "upper") == 0


def test_zero_filled_last_file_quirk(tmp_path: Path) -> None:
    # A preallocated but never written last CQ file: the broker's search asks that file for its
    # whole size, gets nothing, and returns 0 -> clamped to min even for a future time.
    times = [T1 + i for i in range(10)]
    store = build_store(tmp_path, times, cq_entries_per_file=5)
    (store.cq_dir / seg_name(200)).write_bytes(bytes(100))
    with CommitLog([store.cl_dir]) as cl, ConsumeQueue(store.cq_dir, cl.min_offset) as cq:
        assert cq.max_offset == 10
        assert offset_by_time(cq, cl, T1 + 99, "lower") == 0
        # LOWER still finds times inside the earlier (full) files...
        assert offset_by_time(cq, cl, T1 + 3, "lower") == 3
        # ...but UPPER starts from the last file, whose unknown start time (-1) always qualifies.
        assert offset_by_time(cq, cl, T1 + 3, "upper") == 0


def test_store_time_reads_are_logarithmic(tmp_path: Path) -> None:
    times = [T1 + i for i in range(200)]
    store = build_store(tmp_path, times, cq_entries_per_file=1000, cl_seg_size=1 << 16)

    class CountingLog(CommitLog):
        reads = 0

        def store_timestamp(self, phys: int, size: int | None = None) -> int:
            CountingLog.reads += 1
            return super().store_timestamp(phys, size)

    with CountingLog([store.cl_dir]) as cl, ConsumeQueue(store.cq_dir, 0) as cq:
        assert offset_by_time(cq, cl, T1 + 123, "lower") == 123
        assert CountingLog.reads <= 3 + 9  # start/ceiling/floor + ~log2(200) probes


@st.composite
def _queues(draw):
    n = draw(st.integers(1, 30))
    steps = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    times, t = [], T1
    for s in steps:
        t += s
        times.append(t)
    per = draw(st.integers(1, 7))
    drop = draw(st.integers(0, 2))  # oldest commit-log segments deleted
    ts = draw(st.integers(T1 - 2, t + 2))
    return times, per, drop, ts


@settings(max_examples=cases(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_queues())
def test_matches_reference_on_random_sorted_times(q) -> None:
    times, per, drop, ts = q
    root = Path(tempfile.mkdtemp())
    try:
        store = build_store(root, times, cq_entries_per_file=per, cl_seg_size=300)
        segs = sorted(store.cl_dir.iterdir())
        for p in segs[: min(drop, len(segs) - 1)]:
            p.unlink()
        with CommitLog([store.cl_dir]) as cl, ConsumeQueue(store.cq_dir, cl.min_offset) as cq:
            lo = sum(p < cl.min_offset for p in store.phys)
            assert (cq.min_offset, cq.max_offset) == (lo, len(times))
            for b in ("lower", "upper"):
                assert offset_by_time(cq, cl, ts, b) == reference(times, lo, len(times), ts, b), b
    finally:
        shutil.rmtree(root)


def test_reference_reproduces_spec_table() -> None:
    # The reference itself is checked against the spec's table, so it cannot drift silently.
    times = [T1, T1, T1, T3, T3]
    for ts, lower, upper in SPEC_TABLE:
        assert reference(times, 0, 5, ts, "lower") == lower
        assert reference(times, 0, 5, ts, "upper") == upper


def test_blank_marker_struct_in_helper() -> None:
    # The helper's segment-closing header is (remaining, BLANK_MAGIC) per spec 4.6.
    assert struct.pack(">iI", 8, 0xCBD43194)[4:] == bytes.fromhex("cbd43194")
