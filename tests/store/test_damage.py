"""Damaged stores speak up: the store layer tells "no message" (the broker's own rules) from damage.

Every table's stores are hand-built from the spec's byte layouts (tests/store/_bytes.py, not our
writer), and every expected value is worked out by hand in the row's comment:

* commit log (spec 4.6): a read below the first segment is "gone" (retention deletes segments
  from the front); a read the consume queue says should succeed and does not is damage;
* consume-queue segments (spec 1.2, 3.3): the broker's rules, with the file + method of
  apache/rocketmq 5.3.3 (same in 4.9.7) each row follows;
* config files (spec 2.6): what is refused, what falls back to the ``.bak``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from mqctl_testkit.storebytes import build_store, cq_entry, seg_name

from mqctl.errors import StoreCorruptError, StoreError
from mqctl.store import commitlog as cl_mod
from mqctl.store import configread
from mqctl.store.commitlog import CommitLog
from mqctl.store.consumequeue import ConsumeQueue
from mqctl.store.metadata import load_subscription_groups
from mqctl.store.offsets import load_consumer_offsets

# ------------------------------------------------------------------------------ commit-log reads

TIMES = [1000 + i for i in range(30)]
SEG = 1024  # a record of topic T, body "Hello", no properties is 91 + 5 + 1 = 97 bytes: 10 per segment
GONE, UNREADABLE = -1, -2


def _zero(path: Path, at: int, n: int) -> None:
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(bytes(n))


def _segment_of(cl_dir: Path, phys: int) -> Path:
    return cl_dir / seg_name(phys - phys % SEG)


# (case, damage done to the store, (phys, size) asked for, expected answer)
READS: list[tuple[str, Callable, Callable, int]] = [
    ("intact", lambda s: None, lambda s: (s.phys[12], s.sizes[12]), TIMES[12]),
    # Segment 0 deleted by retention: the commit log now starts at 1024, the record lies below it.
    (
        "below-min-retention",
        lambda s: os.remove(s.cl_dir / seg_name(0)),
        lambda s: (s.phys[0], s.sizes[0]),
        GONE,
    ),
    # The consume queue's filler entry (0, 0x7FFFFFFF, 0) points at no message (spec 3.3).
    ("filler-entry", lambda s: None, lambda s: (0, 0x7FFFFFFF), GONE),
    # The record's bytes zeroed: its magic reads 0, not a message.
    (
        "zeroed-record",
        lambda s: _zero(_segment_of(s.cl_dir, s.phys[12]), s.phys[12] % SEG, s.sizes[12]),
        lambda s: (s.phys[12], s.sizes[12]),
        UNREADABLE,
    ),
    # A whole segment zeroed (same length: the broker would load it).
    (
        "zeroed-segment",
        lambda s: _zero(_segment_of(s.cl_dir, s.phys[12]), 0, SEG),
        lambda s: (s.phys[12], s.sizes[12]),
        UNREADABLE,
    ),
    # A segment in the middle missing: retention never leaves a hole, so the message is lost.
    (
        "missing-middle-segment",
        lambda s: os.remove(_segment_of(s.cl_dir, s.phys[12])),
        lambda s: (s.phys[12], s.sizes[12]),
        UNREADABLE,
    ),
    # Past the last segment: the consume queue points beyond the commit log's end.
    ("past-the-end", lambda s: None, lambda s: (s.phys[-1] + 4 * SEG, 97), UNREADABLE),
    # No commit log at all (the broker never deletes its last segment).
    ("no-commitlog", lambda s: shutil.rmtree(s.cl_dir), lambda s: (s.phys[12], s.sizes[12]), UNREADABLE),
    # An entry whose size runs past its segment, and a negative physical offset.
    ("size-past-segment", lambda s: None, lambda s: (s.phys[12], SEG), UNREADABLE),
    ("negative-phys", lambda s: None, lambda s: (-20, 97), UNREADABLE),
]


@pytest.mark.parametrize(("case", "damage", "ask", "expected"), READS, ids=[r[0] for r in READS])
def test_store_time_tells_gone_from_damage(tmp_path: Path, case: str, damage, ask, expected: int) -> None:  # type: ignore[no-untyped-def]
    store = build_store(tmp_path, TIMES, cl_seg_size=SEG)
    assert len(list(store.cl_dir.iterdir())) >= 3  # the rows above need a middle segment
    phys, size = ask(store)
    damage(store)
    with CommitLog([store.cl_dir]) as log:
        assert log.store_time(phys, size) == expected
        if expected == UNREADABLE:
            assert log.damage_reads == 1 and len(log.damage) == 1
            (where,) = log.damage
            assert str(store.cl_dir) in where  # the warning names the file (or the directory)
        else:
            assert log.damage_reads == 0 and log.damage == {}
        # The broker's own pickupStoreTimestamp answer stays -1 for both (the time searches use it).
        assert log.store_timestamp(phys, size) == (expected if expected >= 0 else -1)
    assert cl_mod.UNREADABLE == UNREADABLE and cl_mod.GONE == GONE


# ------------------------------------------------------------------------- consume-queue segments

PER = 5  # entries per consume-queue file (100 bytes)


def _cq_files(d: Path, files: dict[int, bytes]) -> None:
    d.mkdir(parents=True, exist_ok=True)
    for start, data in files.items():
        (d / seg_name(start)).write_bytes(data)


def _full(first: int) -> bytes:
    return b"".join(cq_entry(1000 * (first + i), 97, 0) for i in range(PER))


def _part(first: int, n: int) -> bytes:
    return b"".join(cq_entry(1000 * (first + i), 97, 0) for i in range(n)) + bytes(20 * (PER - n))


# (case, files by start offset, expected max offset or the error's words). MappedFileQueue.doLoad
# (5.3.3 and 4.9.7) refuses a file of another length and deletes an empty LAST file;
# MappedFileQueue.checkSelf only logs a gap; ConsumeQueue.recover scans the last three files and
# stops at the first entry with offset < 0 or size <= 0, truncating the rest (truncateDirtyFiles).
SEGMENTS: list[tuple[str, dict[int, bytes], int | str]] = [
    ("intact-two-files", {0: _full(0), 100: _full(5)}, 10),
    ("partly-written-last", {0: _full(0), 100: _part(5, 2)}, 7),
    # Retention deletes consume-queue files from the front: names start at 100.
    ("first-file-deleted", {100: _full(5), 200: _part(10, 3)}, 13),
    # An empty file: the broker creates a CQ file to write an entry into and maps it to its full
    # size at once (DefaultMappedFile.init), so entries from offset 10 on are missing; the broker
    # deletes the file (doLoad), and the queue would read max 10 while the commit log holds more.
    ("empty-last-after-full", {0: _full(0), 100: _full(5), 200: b""}, "00000000000000000200 is empty"),
    ("empty-only-file", {0: b""}, "00000000000000000000 is empty"),
    # A file before the last whose last slot is zero (a lost tail): recover would cut the queue
    # at offset 4 on restart, mqctl would count 5..9. Damage either way.
    ("hole-before-a-later-file", {0: _part(0, 4), 100: _full(5)}, "ends before its successor"),
    ("zeroed-file-before-a-later-file", {0: bytes(100), 100: _part(5, 1)}, "ends before its successor"),
    # A gap in the names: checkSelf's "[BUG] ... damaged".
    ("gap", {0: _full(0), 200: _part(10, 1)}, "not contiguous"),
    # A file of another length: doLoad refuses to start ("length not matched").
    ("short-file", {0: _full(0), 100: _full(5)[:57]}, "57 bytes"),
]


@pytest.mark.parametrize(("case", "files", "expected"), SEGMENTS, ids=[r[0] for r in SEGMENTS])
def test_consume_queue_segment_rules(tmp_path: Path, case: str, files: dict, expected: int | str) -> None:
    _cq_files(tmp_path, files)
    if isinstance(expected, int):
        with ConsumeQueue(tmp_path) as cq:
            assert cq.max_offset == expected
        return
    with pytest.raises(StoreCorruptError) as exc:
        with ConsumeQueue(tmp_path) as cq:
            _ = cq.max_offset
    assert expected in exc.value.message
    assert str(tmp_path) in exc.value.message  # names the directory or the file


def test_empty_last_commitlog_segment_is_still_the_brokers_rule(tmp_path: Path) -> None:
    """The commit log keeps doLoad's rule: its next segment is preallocated ahead of use
    (AllocateMappedFileService), and a consume-queue entry pointing into it is damage anyway."""
    store = build_store(tmp_path, TIMES[:5], cl_seg_size=SEG)
    (store.cl_dir / seg_name(SEG)).write_bytes(b"")
    with CommitLog([store.cl_dir]) as log:
        assert [s.start for s in log.segments] == [0]
        assert log.store_time(store.phys[0], store.sizes[0]) == TIMES[0]
        assert log.store_time(SEG, 97) == UNREADABLE


# ---------------------------------------------------------------------------------- config files

OFFSETS_OK = b'{"offsetTable":{"T@G":{0:5}}}'


def _put(config: Path, name: str, data: bytes | None) -> None:
    p = config / name
    if data is None:
        return
    if data == b"<dir>":
        p.mkdir()
    else:
        p.write_bytes(data)


# (case, consumerOffset.json, its .bak, expected committed offset of T@G q0 or the error's words,
#  a warning expected). ConfigManager.load (5.3.3, 4.9.7): a missing/empty file or one whose
# decode throws falls back to the .bak; a missing .bak means "start empty"; a bad .bak fails.
OFFSET_FILES: list[tuple[str, bytes | None, bytes | None, int | str | None, bool]] = [
    ("intact", OFFSETS_OK, None, 5, False),
    ("empty-table", b'{"offsetTable":{}}', None, None, False),
    ("missing-fresh-broker", None, None, None, True),
    # Every broker writes "offsetTable"; without it the broker would load "no offsets" (no lag).
    ("no-offsetTable", b'{"dataVersion":{"counter":3}}', None, "no offsetTable", False),
    ("no-offsetTable-bak", b'{"dataVersion":{"counter":3}}', OFFSETS_OK, 5, True),
    ("empty-object", b"{}", None, "no offsetTable", False),
    # Not a regular file: the broker's file2String reads a device as empty (length 0) -> .bak.
    # (A symlink to /dev/zero is tested in a memory-limited subprocess: tests/cli/test_trust_store.py.)
    ("directory", b"<dir>", None, "not a regular file", False),
    ("directory-bak", b"<dir>", OFFSETS_OK, 5, True),
]


@pytest.mark.parametrize(
    ("case", "main", "bak", "expected", "warned"), OFFSET_FILES, ids=[r[0] for r in OFFSET_FILES]
)
def test_consumer_offsets_file_rules(tmp_path: Path, case: str, main, bak, expected, warned: bool) -> None:  # type: ignore[no-untyped-def]
    _put(tmp_path, "consumerOffset.json", main)
    _put(tmp_path, "consumerOffset.json.bak", bak)
    if isinstance(expected, str):
        with pytest.raises(StoreCorruptError) as exc:
            load_consumer_offsets(tmp_path, retries=0)
        assert expected in exc.value.message and "consumerOffset.json" in exc.value.message
        return
    loaded = load_consumer_offsets(tmp_path, retries=0)
    assert loaded.table.offsets.get("T@G", {}).get(0) == expected
    assert (loaded.warning is not None) == warned


def test_config_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reads are bounded (1 GiB by default; a broker cannot load 2 GiB at all): over the limit the
    file is refused without being read, and the .bak is used if there is one."""
    assert configread.MAX_CONFIG_BYTES == 1 << 30
    monkeypatch.setattr(configread, "MAX_CONFIG_BYTES", len(OFFSETS_OK) - 1)
    (tmp_path / "consumerOffset.json").write_bytes(OFFSETS_OK)
    with pytest.raises(StoreCorruptError, match="limit"):
        load_consumer_offsets(tmp_path, retries=0)
    (tmp_path / "consumerOffset.json.bak").write_bytes(b'{"offsetTable":{}}')
    loaded = load_consumer_offsets(tmp_path, retries=0)
    assert loaded.fell_back and "limit" in (loaded.warning or "")


@pytest.mark.parametrize("bak", [None, b"{not json"], ids=["no-bak", "bad-bak"])
def test_corrupt_subscription_groups_without_usable_bak(tmp_path: Path, bak: bytes | None) -> None:
    _put(tmp_path, "subscriptionGroup.json", b'{"subscriptionGroupTable":')
    _put(tmp_path, "subscriptionGroup.json.bak", bak)
    with pytest.raises(StoreError) as exc:
        load_subscription_groups(tmp_path, retries=0)
    assert "subscriptionGroup.json" in exc.value.message
