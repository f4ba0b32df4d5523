"""offset_by_time_4x against answers worked out by hand from RocketMQ 4.9.7's source.

Source (tag rocketmq-all-4.9.7): ConsumeQueue.getOffsetInQueueByTime, MappedFileQueue
.getMappedFileByTime, CommitLog.pickupStoreTimestamp, ConsumeQueue.correctMinOffset
(docs/rocketmq-versions.md 4.1). Every expected value below is derived in the comment next to it,
stepping through the broker's loop by hand:

    file  = first CQ file with mtime >= ts, else the last file
    low   = max(0, minLogic - fileStart), high = readable bytes - 20
    mid   = (low + high) // 40 * 20               (Java int division, all values >= 0)
    phys < cmin        -> low = mid + 20, left = mid            (leftT unchanged)
    T == ts            -> answer (fileStart + mid) / 20
    T >  ts            -> high = mid - 20, right = mid, rightT = T
    T <  ts            -> low  = mid + 20, left  = mid, leftT  = T
    end: leftT == -1 -> right; rightT == -1 -> left; |ts-leftT| > |ts-rightT| -> right, else left
    answer = (fileStart + byte) / 20 with Java truncation (byte may be -1)

Times are written as ms after T0; "idxN" is queue offset N.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mqctl_testkit.storebytes import build_store, cq_entry, seg_name

from mqctl.store.commitlog import CommitLog
from mqctl.store.consumequeue import ConsumeQueue
from mqctl.store.timesearch4 import file_times, min_logic_offset_4x, offset_by_time_4x
from mqctl.store.writer import StoreWriter

T0 = 1_700_000_000_000  # a whole second, so JDK 8 truncation lands on T0 exactly

# The main queue: 10 messages, 4 entries per CQ file.
#   F0 (start byte 0):   idx0..3 = 10 20 30 40      full, 80 readable bytes -> high 60
#   F1 (start byte 80):  idx4..7 = 50 60 70 80      full                     -> high 60
#   F2 (start byte 160): idx8..9 = 90 100           last, 2 of 4 written (40 bytes) -> high 20
# max offset 10; cmin 0 and idx0 has phys 0, so minLogic = 0 and low starts at 0 everywhere.
BASE = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
# Realistic mtimes: each file last touched a little after its last entry.
BASE_MTIMES = [45, 85, 200]


def _store(
    root: Path, deltas: list[int], per_file: int, born_host: tuple[str, int] = ("127.0.0.1", 50000)
) -> tuple[Path, Path]:
    with StoreWriter(root, commitlog_file_size=4096, cq_file_size=per_file * 20, born_host=born_host) as w:
        w.create_topic("T", queues=1)
        for d in deltas:
            w.put("T", 0, b"m", store_timestamp=T0 + d)
    return root / "consumequeue" / "T" / "0", root / "commitlog"


def _cq_files(queue_dir: Path) -> list[Path]:
    return sorted(p for p in queue_dir.iterdir() if len(p.name) == 20 and p.name.isdigit())


def _set_mtimes(queue_dir: Path, deltas: list[int], extra_ns: int = 0) -> None:
    files = _cq_files(queue_dir)
    assert len(files) == len(deltas)
    for path, d in zip(files, deltas):
        ns = (T0 + d) * 1_000_000 + extra_ns
        os.utime(path, ns=(ns, ns))


def _ask(queue_dir: Path, cl_dir: Path, ts_delta: int) -> int:
    with CommitLog([cl_dir]) as cl, ConsumeQueue(queue_dir, cl.min_offset) as cq:
        return offset_by_time_4x(cq, cl, T0 + ts_delta)


@pytest.fixture
def base(tmp_path: Path) -> tuple[Path, Path]:
    q, cl = _store(tmp_path / "s", BASE, per_file=4)
    assert [p.name for p in _cq_files(q)] == [seg_name(0), seg_name(80), seg_name(160)]
    _set_mtimes(q, BASE_MTIMES)
    return q, cl


# (ts, expected) on BASE with mtimes 45 / 85 / 200.
BASE_CASES = [
    # exact hit: 20 -> F0 (45 >= 20); mid=(0+60)//40*20=20 -> idx1 T20 == 20 -> 20/20 = 1
    (20, 1),
    # exact hit on the first entry: 10 -> F0; mid 20 idx1 T20>10: high 0, right 20;
    # mid 0 idx0 T10 == 10 -> 0
    (10, 0),
    # exact hit on the last entry of F0: 40 -> F0 (45 >= 40); mid 20 T20<40: low 40;
    # mid (40+60)//40*20=40 idx2 T30<40: low 60; mid (60+60)//40*20=60 idx3 T40 == -> 60/20 = 3
    (40, 3),
    # exact hit in F1: 70 -> F0 45 < 70, F1 85 >= 70; mid 20 idx5 T60<70: low 40, left 20;
    # mid 40 idx6 T70 == -> (80+40)/20 = 6
    (70, 6),
    # between 60 and 70, nearer 60: 63 -> F1; mid 20 idx5 T60<63: low 40, left 20, leftT 60;
    # mid 40 idx6 T70>63: high 20, right 40, rightT 70; end. |63-60|=3 > |63-70|=7? no -> left 20
    # -> (80+20)/20 = 5
    (63, 5),
    # nearer 70: 67 -> same path; |67-60|=7 > |67-70|=3 -> right 40 -> (80+40)/20 = 6
    (67, 6),
    # tie: 65 -> same path; 5 > 5 is false -> left -> 5 (the earlier one)
    (65, 5),
    # before the first message: T0 -> F0; mid 20 T20>0: high 0, right 20; mid 0 T10>0: high -20,
    # right 0; leftT == -1 -> right 0 -> 0
    (0, 0),
    (-(10**9), 0),
    # after the last message and after every mtime: 500 -> last file F2 (readable 40, high 20);
    # mid 0 idx8 T90<500: low 20, left 0; mid (20+20)//40*20=20 idx9 T100<500: low 40, left 20;
    # rightT == -1 -> left 20 -> (160+20)/20 = 9 = max - 1
    (500, 9),
    # exact hit inside the partly written last file: 100 -> F1 85 < 100, F2 200 >= 100;
    # mid 0 T90<100: low 20; mid 20 T100 == -> 180/20 = 9
    (100, 9),
    # between 90 and 100 in F2: 96 -> F2; mid 0 T90<96: left 0, leftT 90; mid 20 T100>96:
    # right 20, rightT 100; |96-90|=6 > |96-100|=4 -> right 20 -> 9
    (96, 9),
    # between 40 and 50 with the file boundary at mtime 45: 44 -> F0 (45 >= 44); mid 20 T20<44;
    # mid 40 T30<44; mid 60 T40<44: low 80, left 60; rightT -1 -> left 60 -> 3
    (44, 3),
    # 45 is a tie between 40 and 50, but the file choice decides: F0 mtime 45 >= 45 -> F0 -> 3
    (45, 3),
    # 46 -> F0 45 < 46 -> F1 (85 >= 46); mid 20 idx5 T60>46: high 0, right 20; mid 0 idx4 T50>46:
    # right 0; leftT -1 -> right 0 -> 80/20 = 4
    (46, 4),
]


@pytest.mark.parametrize(("ts", "expected"), BASE_CASES)
def test_base_queue(base: tuple[Path, Path], ts: int, expected: int) -> None:
    assert _ask(*base, ts) == expected


def test_file_times_read_milliseconds_like_java_10(base: tuple[Path, Path]) -> None:
    q, cl = base
    # Sub-millisecond parts are cut off: 45.999999 ms after T0 reads as T0 + 45.
    _set_mtimes(q, BASE_MTIMES, extra_ns=999_999)
    with ConsumeQueue(q) as cq:
        assert file_times(cq) == [T0 + 45, T0 + 85, T0 + 200]
        # JDK 8 on Linux: whole seconds (T0 is a whole second).
        assert file_times(cq, whole_seconds=True) == [T0, T0, T0]
    # 45.999 truncated to 45: 46 still goes to F1 -> 4 (rounding would pick F0 -> 3).
    assert _ask(q, cl, 46) == 4
    assert _ask(q, cl, 45) == 3


def test_jdk8_whole_second_mtimes_change_the_file(base: tuple[Path, Path]) -> None:
    q, cl = base
    with CommitLog([cl]) as commitlog, ConsumeQueue(q) as cq:
        secs = file_times(cq, whole_seconds=True)
        # ms precision: 20 -> F0 -> 1 (as in BASE_CASES).
        assert offset_by_time_4x(cq, commitlog, T0 + 20) == 1
        # seconds: every mtime reads T0 < T0+20 -> last file F2; mid 0 idx8 T90>20: right 0;
        # leftT -1 -> right 0 -> 160/20 = 8
        assert offset_by_time_4x(cq, commitlog, T0 + 20, mtimes=secs) == 8
        with pytest.raises(ValueError):
            offset_by_time_4x(cq, commitlog, T0, mtimes=secs[:2])


def test_file_mtime_later_than_ts_though_its_entries_are_older(base: tuple[Path, Path]) -> None:
    q, cl = base
    # Files touched long after their entries (e.g. copied without keeping mtimes).
    _set_mtimes(q, [1000, 1100, 1200])
    # 70 -> F0 (1000 >= 70) although idx6 holds T70; F0 all < 70: mid 20 T20: low 40, left 20;
    # mid 40 T30: low 60, left 40; mid 60 T40: low 80, left 60; rightT -1 -> left 60 -> 3
    assert _ask(q, cl, 70) == 3
    # 500 -> F0 too (1000 >= 500) -> same walk -> 3, not max - 1
    assert _ask(q, cl, 500) == 3


def test_mtime_lagging_behind_entries_skips_to_a_later_file(base: tuple[Path, Path]) -> None:
    q, cl = base
    # mmap'ed files get their mtime at the first write after a flush: F0 at idx0, etc.
    _set_mtimes(q, [11, 51, 91])
    # 70 -> F0 11 < 70, F1 51 < 70, F2 91 >= 70 -> F2; mid 0 idx8 T90>70: high -20, right 0;
    # leftT -1 -> right 0 -> 160/20 = 8 (idx6 with T70 is never looked at)
    assert _ask(q, cl, 70) == 8
    # 95 -> no mtime >= 95 -> last file F2; mid 0 T90<95: left 0, leftT 90; mid 20 T100>95:
    # right 20, rightT 100; |95-90|=5 > |95-100|=5? no -> left 0 -> 8
    assert _ask(q, cl, 95) == 8


def test_ts_later_than_every_mtime_uses_the_last_file(base: tuple[Path, Path]) -> None:
    q, cl = base
    _set_mtimes(q, [1, 2, 3])
    # 30 -> no mtime >= 30 -> F2; mid 0 idx8 T90>30: right 0; leftT -1 -> 160/20 = 8
    assert _ask(q, cl, 30) == 8
    # 20: same -> 8 (idx1 with T20 is in F0, never searched)
    assert _ask(q, cl, 20) == 8


def test_equal_times_one_file(tmp_path: Path) -> None:
    # One file of 8 entries: idx0..3 = 10, idx4..7 = 20; readable 160 -> high 140.
    q, cl = _store(tmp_path / "s", [10, 10, 10, 10, 20, 20, 20, 20], per_file=8)
    _set_mtimes(q, [100])
    # 20: mid (0+140)//40*20 = 60 idx3 T10<20: low 80; mid (80+140)//40*20 = 100 idx5 T20 == -> 5
    # (not 4, the first with T20, nor 7, the last)
    assert _ask(q, cl, 20) == 5
    # 10: mid 60 idx3 T10 == -> 3
    assert _ask(q, cl, 10) == 3


def test_equal_times_across_files(tmp_path: Path) -> None:
    # F0 idx0..3 = 10 20 20 20, F1 (start 80) idx4..7 = 20 20 20 30; idx1..6 share T20.
    q, cl = _store(tmp_path / "s", [10, 20, 20, 20, 20, 20, 20, 30], per_file=4)
    _set_mtimes(q, [15, 35])
    # 20 -> F0 15 < 20, F1 35 >= 20 -> F1; mid 20 idx5 T20 == -> (80+20)/20 = 5
    assert _ask(q, cl, 20) == 5
    _set_mtimes(q, [25, 35])
    # 20 -> F0 (25 >= 20); mid 20 idx1 T20 == -> 1
    assert _ask(q, cl, 20) == 1


def test_ipv6_born_host_store_time_at_68(tmp_path: Path) -> None:
    # sysFlag 0x10: the store time follows a 20-byte born host, at record byte 68.
    q, cl = _store(tmp_path / "s", BASE, per_file=4, born_host=("::1", 50000))
    _set_mtimes(q, BASE_MTIMES)
    # same walks as BASE_CASES
    assert _ask(q, cl, 70) == 6
    assert _ask(q, cl, 63) == 5
    assert _ask(q, cl, 500) == 9


def test_no_consume_queue_is_zero(tmp_path: Path) -> None:
    q, cl = _store(tmp_path / "s", [], per_file=4)
    assert not q.exists()  # topic known, nothing ever written to queue 0
    # no CQ file -> getMappedFileByTime returns null -> 0
    assert _ask(q, cl, 0) == 0
    q.mkdir(parents=True)
    assert _ask(q, cl, 10**6) == 0


def test_nothing_written_file_is_zero_not_the_sentinel(tmp_path: Path) -> None:
    # A queue whose only file is preallocated and empty: readable 0 -> selectMappedBuffer(0)
    # returns null -> 0 (no search, so no -1 sentinel).
    q, cl = _store(tmp_path / "s", BASE, per_file=4)
    empty = tmp_path / "empty" / "T" / "0"
    empty.mkdir(parents=True)
    (empty / seg_name(0)).write_bytes(bytes(80))
    _set_mtimes(empty, [50])
    assert _ask(empty, cl, 0) == 0
    assert _ask(empty, cl, 500) == 0


def test_empty_last_file_after_full_ones(tmp_path: Path) -> None:
    # 8 messages fill F0 and F1; the broker already preallocated F2 (start 160), nothing in it.
    q, cl = _store(tmp_path / "s", BASE[:8], per_file=4)
    (q / seg_name(160)).write_bytes(bytes(80))
    _set_mtimes(q, [45, 85, 200])
    # 500 -> no mtime >= 500 -> F2, readable 0 -> 0 (not max - 1 = 7)
    assert _ask(q, cl, 500) == 0
    # 70 -> F1 (85 >= 70) -> idx6 as in BASE_CASES -> 6
    assert _ask(q, cl, 70) == 6


def test_unreadable_store_time_is_zero(base: tuple[Path, Path]) -> None:
    q, cl = base
    # Point idx5 (F1 byte 20, F1's first probe) at an offset no commit-log file holds.
    f1 = q / seg_name(80)
    data = bytearray(f1.read_bytes())
    data[20:40] = cq_entry(10**9, 100, 0)
    f1.write_bytes(bytes(data))
    _set_mtimes(q, BASE_MTIMES)
    # 70 -> F1; mid 20 idx5: pickupStoreTimestamp -> -1 -> return 0
    assert _ask(q, cl, 70) == 0
    # 20 -> F0, never touches idx5 -> 1
    assert _ask(q, cl, 20) == 1


# _bytes.build_store writes 97-byte records; a 400-byte commit-log segment holds 4 of them
# (4*97 = 388, then a 12-byte blank): phys(i) = (i // 4) * 400 + (i % 4) * 97.
def _phys(i: int) -> int:
    return (i // 4) * 400 + (i % 4) * 97


def test_expired_entries_at_start_of_first_file_min_logic(tmp_path: Path) -> None:
    # One CQ file of 12 entries: idx0..3 = 10 20 30 40, idx4..11 = 50 (eight equal times).
    times = [T0 + t for t in [10, 20, 30, 40] + [50] * 8]
    store = build_store(tmp_path, times, cq_entries_per_file=12, cl_seg_size=400)
    assert store.phys == [_phys(i) for i in range(12)]
    (store.cl_dir / seg_name(0)).unlink()  # cmin = 400: idx0..3 expired
    _set_mtimes(store.cq_dir, [100])
    with CommitLog([store.cl_dir]) as cl, ConsumeQueue(store.cq_dir, cl.min_offset) as cq:
        # correctMinOffset: first entry of the first file with phys >= 400 is idx4 -> byte 80
        assert min_logic_offset_4x(cq, 400) == 80
        # 50 -> F0; low = 80, high = 220; mid (80+220)//40*20 = 140 idx7 T50 == -> 7
        # (had low started at 0: mid 220//40*20 = 100 idx5 -> 5)
        assert offset_by_time_4x(cq, cl, T0 + 50) == 7
        # 0: mid 140 idx7 T50>0: high 120, right 140; mid (80+120)//40*20 = 100 idx5: high 80,
        # right 100; mid (80+80)//40*20 = 80 idx4: high 60, right 80; leftT -1 -> 80/20 = 4 = min
        assert offset_by_time_4x(cq, cl, T0) == 4
        # 30 (an expired message's time) -> the same walk -> 4
        assert offset_by_time_4x(cq, cl, T0 + 30) == 4


def _stale_store(tmp_path: Path, expire_segments: int) -> tuple[Path, Path]:
    # 12 messages T = 10, 20, ..., 120; 3 entries per CQ file:
    # F0 (0) idx0..2, F1 (60) idx3..5, F2 (120) idx6..8, F3 (180) idx9..11.
    times = [T0 + 10 * (i + 1) for i in range(12)]
    store = build_store(tmp_path, times, cq_entries_per_file=3, cl_seg_size=400)
    assert store.phys == [_phys(i) for i in range(12)]
    for k in range(expire_segments):
        (store.cl_dir / seg_name(400 * k)).unlink()
    # A copy taken before the broker's consume-queue cleaner ran: expired CQ files still there.
    _set_mtimes(store.cq_dir, [35, 65, 95, 200])
    return store.cq_dir, store.cl_dir


def test_stale_first_file_all_expired_sentinel_in_file_zero(tmp_path: Path) -> None:
    q, cl = _stale_store(tmp_path, 1)  # cmin 400: idx0..3 expired (phys 0, 97, 194, 291)
    with CommitLog([cl]) as commitlog, ConsumeQueue(q, commitlog.min_offset) as cq:
        # F0 has no phys >= 400 -> minLogic keeps its start value 0
        assert min_logic_offset_4x(cq, 400) == 0
    # 0 -> F0 (35 >= 0); low 0, high 40; mid 20 idx1 phys 97 < 400: low 40, left 20;
    # mid 40 idx2 phys 194 < 400: low 60, left 40; leftT -1 -> right = -1
    # -> (0 + -1) / 20 = 0 in Java (Python's floor would say -1)
    assert _ask(q, cl, 0) == 0
    # 40 (idx3's time) -> F0 35 < 40, F1 65 >= 40 -> F1, low 0, high 40; mid 20 idx4 phys 400
    # T50>40: high 0, right 20; mid 0 idx3 phys 291 < 400: low 20, left 0 (leftT stays -1);
    # leftT -1 -> right 20 -> (60+20)/20 = 4
    assert _ask(q, cl, 40) == 4
    # 60 -> F1; mid 20 idx4 T50<60: low 40, left 20, leftT 50; mid 40 idx5 T60 == -> 100/20 = 5
    assert _ask(q, cl, 60) == 5


def test_stale_expired_file_sentinel_below_file_start(tmp_path: Path) -> None:
    q, cl = _stale_store(tmp_path, 2)  # cmin 800: idx0..7 expired
    # 50 -> F0 35 < 50, F1 65 >= 50 -> F1 (start 60); minLogic 0 -> low 0, high 40;
    # mid 20 idx4 phys 400 < 800: low 40, left 20; mid 40 idx5 phys 497 < 800: low 60, left 40;
    # leftT -1 -> right = -1 -> (60 - 1) / 20 = 2: below the file, and below min offset 8
    assert _ask(q, cl, 50) == 2
    # 100 -> F3 (200 >= 100), all live: mid 20 idx10 T110>100: high 0, right 20; mid 0 idx9
    # T100 == -> 180/20 = 9
    assert _ask(q, cl, 100) == 9


def test_filler_entries_count_for_min_logic(tmp_path: Path) -> None:
    # A queue whose CQ starts with two filler entries (0, 0x7FFFFFFF, 0) while the commit log
    # still starts at 0. idx2..5 point at records with T30..T60.
    times = [T0 + 10 * (i + 1) for i in range(6)]
    store = build_store(tmp_path, times, cq_entries_per_file=6, cl_seg_size=400)
    f0 = store.cq_dir / seg_name(0)
    data = bytearray(f0.read_bytes())
    data[0:40] = cq_entry(0, 0x7FFFFFFF, 0) * 2
    f0.write_bytes(bytes(data))
    _set_mtimes(store.cq_dir, [100])
    with CommitLog([store.cl_dir]) as cl, ConsumeQueue(store.cq_dir, cl.min_offset) as cq:
        # phys 0 >= cmin 0: the filler at idx0 is 4.9.7's minLogicOffset (mqctl's min skips it)
        assert min_logic_offset_4x(cq, 0) == 0
        assert cq.min_offset == 2
        # 50 -> low 0, high 100; mid 100//40*20 = 40 idx2 T30<50: low 60; mid (60+100)//40*20 = 80
        # idx4 T50 == -> 4
        assert offset_by_time_4x(cq, cl, T0 + 50) == 4
        # 0 -> mid 40 idx2 T30>0: high 20, right 40; mid (0+20)//40*20 = 0 idx0: filler, phys 0
        # >= 0, pickupStoreTimestamp(0, 0x7FFFFFFF) finds no such bytes -> -1 -> 0
        assert offset_by_time_4x(cq, cl, T0) == 0
