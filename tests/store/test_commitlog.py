"""Commit-log record codec against the spec's byte layout (4.1) and worked example (4.7)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mqctl_testkit.storebytes import BLANK_MAGIC, build_record, seg_name, write_segments
from mqctl_testkit.thorough import cases

from mqctl.errors import StoreCorruptError, StoreError
from mqctl.store.commitlog import (
    BLANK_MAGIC as MOD_BLANK,
)
from mqctl.store.commitlog import (
    MAGIC_V1,
    MAGIC_V2,
    CommitLog,
    decode_properties,
    decode_record,
    store_timestamp_at,
)

# Spec 4.7, typed in from the hex dump; the bytes after 0x7F (the rest of the properties)
# spell "IQ_KEY\1AC110001000018B4AAC2\2WAIT\1true\2" to complete the 61-byte property string.
WORKED = (
    bytes.fromhex(
        "000000a6 daa320a7 77d18982 00000003"
        "00000000 00000000 00000007 00000000"
        "00000000 00000000 0000018b cfe56800"
        "c0a8010a 0000c822 0000018b cfe5687b"
        "0a000005 00002a9f 00000000 00000000"
        "00000000 00000005 48656c6c 6f09546f"
        "70696354 65737400 3d544147 53015461"
        "6741024b 45595301 6b31206b 3202554e"
    )
    + b"IQ_KEY\x01AC110001000018B4AAC2\x02WAIT\x01true\x02"
)


def test_magic_constants_match_spec_signed_ints() -> None:
    assert struct.unpack(">i", struct.pack(">I", MAGIC_V1))[0] == -626843481
    assert struct.unpack(">i", struct.pack(">I", MAGIC_V2))[0] == -626843477
    assert struct.unpack(">i", struct.pack(">I", MOD_BLANK))[0] == -875286124


def test_worked_example_decodes_to_spec_values() -> None:
    assert len(WORKED) == 166
    rec = decode_record(WORKED)
    assert rec.total_size == 166
    assert rec.magic == MAGIC_V1 and rec.version == 1
    assert rec.body_crc == 2010220930 == zlib.crc32(b"Hello") & 0x7FFFFFFF
    assert rec.queue_id == 3
    assert rec.flag == 0
    assert rec.queue_offset == 7
    assert rec.physical_offset == 0
    assert rec.sys_flag == 0
    assert rec.born_timestamp == 1700000000000
    assert rec.born_host == "192.168.1.10:51234"
    assert rec.store_timestamp == 1700000000123
    assert rec.store_host == "10.0.0.5:10911"
    assert rec.reconsume_times == 0
    assert rec.prepared_transaction_offset == 0
    assert rec.body == b"Hello"
    assert rec.topic == "TopicTest"
    assert rec.properties == {
        "TAGS": "TagA",
        "KEYS": "k1 k2",
        "UNIQ_KEY": "AC110001000018B4AAC2",
        "WAIT": "true",
    }
    assert rec.tags == "TagA"
    assert store_timestamp_at(WORKED) == 1700000000123


def test_test_helper_reproduces_worked_example() -> None:
    # Guards the helper the other tests rely on: it must emit the spec's exact bytes.
    props = [("TAGS", "TagA"), ("KEYS", "k1 k2"), ("UNIQ_KEY", "AC110001000018B4AAC2"), ("WAIT", "true")]
    assert build_record(queue_id=3, queue_offset=7, props=props) == WORKED


def test_decode_at_position_inside_larger_buffer() -> None:
    buf = b"\xff" * 13 + WORKED + b"\0" * 40
    assert decode_record(buf, 13).store_timestamp == 1700000000123
    assert store_timestamp_at(buf, 13) == 1700000000123


def _ipv6_record() -> bytes:
    # Spec 4.1 "general" column with B = 20: sysFlag 0x10, born host 16 address bytes + port.
    body, topic, props = b"xyz", b"V6Topic", b"TAGS\x01B\x02"
    born = bytes.fromhex("20010db8000000000000000000000001") + struct.pack(">i", 40000)
    store = bytes([127, 0, 0, 1]) + struct.pack(">i", 10911)
    total = 72 + 20 + 8 + len(body) + 1 + len(topic) + 2 + len(props)
    rec = struct.pack(
        ">iIiiiqqiq", total, 0xDAA320A7, zlib.crc32(body) & 0x7FFFFFFF, 1, 5, 9, 4096, 0x10, 111
    )
    rec += born + struct.pack(">q", 222) + store
    rec += struct.pack(">iqi", 2, 0, len(body)) + body
    rec += bytes([len(topic)]) + topic + struct.pack(">h", len(props)) + props
    return rec


def test_ipv6_born_host_shifts_store_time_to_68() -> None:
    rec = _ipv6_record()
    assert len(rec) == 72 + 20 + 8 + 3 + 1 + 7 + 2 + 7
    assert struct.unpack_from(">q", rec, 68)[0] == 222  # independent read at the spec's offset
    r = decode_record(rec)
    assert r.sys_flag == 0x10
    assert r.born_host == "[2001:db8::1]:40000"
    assert r.store_host == "127.0.0.1:10911"
    assert r.store_timestamp == 222 == store_timestamp_at(rec)
    assert r.born_timestamp == 111
    assert (r.queue_id, r.flag, r.queue_offset, r.physical_offset, r.reconsume_times) == (1, 5, 9, 4096, 2)
    assert r.topic == "V6Topic" and r.tags == "B" and r.body == b"xyz"


def test_v2_record_with_130_char_topic_and_ipv6_store_host() -> None:
    topic = ("%RETRY%" + "g" * 123).encode()
    assert len(topic) == 130
    born = bytes([10, 1, 2, 3]) + struct.pack(">i", 1)
    store = bytes(15) + b"\x01" + struct.pack(">i", 2)  # ::1
    total = 72 + 8 + 20 + 0 + 2 + 130 + 2 + 0
    rec = struct.pack(">iIiiiqqiq", total, 0xDAA320AB, 0, 0, 0, 0, 0, 0x20, 5)
    rec += born + struct.pack(">q", 6) + store + struct.pack(">iqi", 0, 0, 0)
    rec += struct.pack(">h", 130) + topic + struct.pack(">h", 0)
    r = decode_record(rec)
    assert r.magic == MAGIC_V2 and r.version == 2
    assert r.topic == topic.decode() and r.properties == {} and r.tags is None
    assert r.store_host == "[::1]:2"
    assert r.store_timestamp == 6 == store_timestamp_at(rec)
    # v1 magic over the same bytes reads a 1-byte topic length (0) and cannot add up.
    with pytest.raises(StoreCorruptError):
        decode_record(rec[:4] + struct.pack(">I", 0xDAA320A7) + rec[8:])


def test_properties_parse_like_the_broker() -> None:
    assert decode_properties("A\x01x\x02B\x01y\x02") == {"A": "x", "B": "y"}
    assert decode_properties("A\x01x\x02B\x01y") == {"A": "x", "B": "y"}  # missing final 0x02
    assert decode_properties("A\x01\x02\x01v\x02ab\x02") == {}  # empty value, empty name, no separator
    assert decode_properties("K\x01a\x01b\x02") == {"K": "a\x01b"}  # first 0x01 splits
    assert decode_properties("K\x011\x02K\x012\x02") == {"K": "2"}  # later duplicate wins
    assert decode_properties("") == {}


def test_total_size_mismatch_is_corrupt() -> None:
    bad = struct.pack(">i", 167) + WORKED[4:] + b"\0"
    with pytest.raises(StoreCorruptError, match="TOTALSIZE"):
        decode_record(bad)


def test_crc_mismatch_is_corrupt_unless_unchecked() -> None:
    bad = WORKED[:8] + struct.pack(">i", 1) + WORKED[12:]
    with pytest.raises(StoreCorruptError, match="CRC"):
        decode_record(bad)
    assert decode_record(bad, check_crc=False).body_crc == 1


def test_blank_marker_and_zeros_are_not_records() -> None:
    blank = struct.pack(">iI", 64, BLANK_MAGIC) + bytes(56)
    for buf in (blank, bytes(200)):
        with pytest.raises(StoreCorruptError):
            decode_record(buf)
        with pytest.raises(StoreCorruptError):
            store_timestamp_at(buf)


@pytest.mark.parametrize("cut", [0, 3, 36, 55, 63, 100, 165])
def test_truncated_worked_example_is_corrupt(cut: int) -> None:
    with pytest.raises(StoreCorruptError):
        decode_record(WORKED[:cut])


@settings(max_examples=cases(300), deadline=None)
@given(st.binary(max_size=400), st.integers(min_value=0, max_value=64))
def test_random_bytes_raise_only_store_corrupt(data: bytes, pos: int) -> None:
    for fn in (decode_record, store_timestamp_at):
        try:
            fn(data, pos)
        except StoreCorruptError:
            pass


@settings(max_examples=cases(300), deadline=None)
@given(
    st.integers(min_value=0, max_value=165), st.integers(min_value=0, max_value=165), st.binary(max_size=4)
)
def test_mutated_worked_example_raises_only_store_corrupt(cut: int, at: int, patch: bytes) -> None:
    data = (WORKED[:at] + patch + WORKED[at + len(patch) :])[: cut or None]
    for fn in (decode_record, store_timestamp_at):
        try:
            fn(data)
        except StoreCorruptError:
            pass


# -- CommitLog over segment files ------------------------------------------------------------


def _two_segment_log(root: Path, seg: int = 512) -> tuple[Path, list[int]]:
    stream = bytearray()
    phys = []
    for i in range(6):
        rec = build_record(topic="T", props=[("TAGS", f"t{i}")], phys=0, store_ts=1000 + i)
        if len(rec) + 8 > seg - len(stream) % seg:
            rem = seg - len(stream) % seg
            stream += struct.pack(">iI", rem, BLANK_MAGIC) + bytes(rem - 8)
        phys.append(len(stream))
        stream += build_record(topic="T", props=[("TAGS", f"t{i}")], phys=len(stream), store_ts=1000 + i)
    write_segments(root, bytes(stream), seg)
    return root, phys


def test_commitlog_reads_records_across_segments(tmp_path: Path) -> None:
    d, phys = _two_segment_log(tmp_path / "cl")
    assert len(list(d.iterdir())) >= 2
    with CommitLog([d]) as cl:
        assert cl.min_offset == 0 and cl.file_size == 512
        for i, p in enumerate(phys):
            assert cl.store_timestamp(p) == 1000 + i
            assert cl.tags(p) == f"t{i}"
            assert cl.record(p).physical_offset == p
        assert cl.store_timestamp(phys[0] + 1) == -1  # not a record boundary
        assert cl.store_timestamp(phys[-1] + 4096) == -1  # beyond the last segment
        assert cl.store_timestamp(phys[0], size=10_000) == -1  # size runs past the segment


def test_commitlog_oldest_segment_deleted(tmp_path: Path) -> None:
    d, phys = _two_segment_log(tmp_path / "cl")
    (d / seg_name(0)).unlink()
    with CommitLog([d]) as cl:
        assert cl.min_offset == 512
        assert cl.store_timestamp(phys[0]) == -1
        with pytest.raises(StoreError):
            cl.record(phys[0])
        late = [p for p in phys if p >= 512]
        assert cl.store_timestamp(late[0]) == 1000 + phys.index(late[0])


def test_commitlog_union_of_dirs_and_empty(tmp_path: Path) -> None:
    d, phys = _two_segment_log(tmp_path / "a")
    other = tmp_path / "b"
    other.mkdir()
    (d / seg_name(512)).rename(other / seg_name(512))  # multi-path: segment n in dir n % 2
    with CommitLog([d, other]) as cl:
        assert [s.start for s in cl.segments] == [0, 512]
        assert all(cl.store_timestamp(p) == 1000 + i for i, p in enumerate(phys))
    with CommitLog([tmp_path / "missing"]) as cl:
        assert cl.min_offset == 0 and cl.segments == [] and cl.store_timestamp(0) == -1


def test_commitlog_inconsistent_sizes_corrupt(tmp_path: Path) -> None:
    d, _ = _two_segment_log(tmp_path / "cl")
    (d / seg_name(1024)).write_bytes(bytes(100))
    with pytest.raises(StoreCorruptError), CommitLog([d]) as cl:
        _ = cl.min_offset
