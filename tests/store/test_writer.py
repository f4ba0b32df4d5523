"""StoreWriter output checked against the spec's byte layouts with an independent parser."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import pytest
from mqctl_testkit.storeparse import (
    V1,
    V2,
    queue_bounds,
    quote_int_keys,
    read_cq,
    scan_commitlog,
    segment_files,
)

from mqctl.errors import UsageError
from mqctl.store.encode import encode_cq_entry, encode_record
from mqctl.store.writer import StoreWriter

# Spec 4.7, typed in from the spec's hex dump (first 0x80 bytes) and its property text.
SPEC_RECORD = (
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
SPEC_CQ_ENTRY = bytes.fromhex("0000000000000000 000000a6 000000000027a807")

SPEC_FIELDS = dict(
    topic="TopicTest",
    queue_id=3,
    body=b"Hello",
    store_timestamp=1700000000123,
    born_timestamp=1700000000000,
    born_host=("192.168.1.10", 51234),
    store_host=("10.0.0.5", 10911),
)
SPEC_PROPS = {"TAGS": "TagA", "KEYS": "k1 k2", "UNIQ_KEY": "AC110001000018B4AAC2", "WAIT": "true"}

# Spec 7 table: (tag, tagsCode bytes as stored in a CQ entry).
TAG_CODES = {
    "TagA": "000000000027a807",
    "TagB": "000000000027a808",
    "Tag-中文": "ffffffff94e7542d",
    "polygenelubricants": "ffffffff80000000",
    None: "0000000000000000",
}


def test_spec_worked_example_bytes() -> None:
    assert len(SPEC_RECORD) == 166
    record = encode_record(queue_offset=7, phys=0, properties=SPEC_PROPS, **SPEC_FIELDS)
    assert record == SPEC_RECORD
    # The spec's stated bodyCRC, and the rule it follows (zlib CRC-32, top bit cleared).
    assert struct.unpack_from(">i", record, 8)[0] == 2010220930 == zlib.crc32(b"Hello") & 0x7FFFFFFF
    assert encode_cq_entry(0, 166, "TagA") == SPEC_CQ_ENTRY


def test_put_reproduces_spec_record_at_queue_offset_7(tmp_path: Path) -> None:
    w = StoreWriter(tmp_path, born_host=SPEC_FIELDS["born_host"], store_host=SPEC_FIELDS["store_host"])
    w.create_topic("TopicTest", queues=4)
    results = [
        w.put(
            "TopicTest",
            3,
            b"Hello",
            tags="TagA",
            keys="k1 k2",
            store_timestamp=1700000000123,
            born_timestamp=1700000000000,
            properties={"UNIQ_KEY": "AC110001000018B4AAC2"},
        )
        for _ in range(8)
    ]
    w.close()
    assert [r.queue_offset for r in results] == list(range(8))
    assert [r.phys for r in results] == [166 * i for i in range(8)]
    assert {r.size for r in results} == {166}
    data = (tmp_path / "commitlog" / f"{0:020d}").read_bytes()
    expected = bytearray(SPEC_RECORD)
    struct.pack_into(">q", expected, 28, 7 * 166)  # only the physical offset differs from the spec's
    assert data[7 * 166 : 8 * 166] == expected
    cq = (tmp_path / "consumequeue" / "TopicTest" / "3" / f"{0:020d}").read_bytes()
    assert cq[7 * 20 : 8 * 20] == bytes.fromhex("000000000000048a 000000a6 000000000027a807")
    assert cq[8 * 20 :] == bytes(len(cq) - 160)


def _fill(w: StoreWriter, count: int, *, tags_cycle: list[str | None], start_ts: int = 1_700_000_000_000):
    w.create_topic("T1", queues=3)
    w.create_topic("T2", queues=1)
    ts = start_ts
    for i in range(count):
        topic, qid = ("T1", i % 3) if i % 4 else ("T2", 0)
        if i % 5:
            ts += 7  # every fifth message shares the previous store time
        w.put(
            topic,
            qid,
            bytes([i % 251]) * (30 + (i * 37) % 400),
            tags=tags_cycle[i % len(tags_cycle)],
            keys=[f"k{i}", "shared"],
            store_timestamp=ts,
            born_timestamp=ts - 3,
        )


def test_segments_records_and_blank_headers(tmp_path: Path) -> None:
    w = StoreWriter(tmp_path, commitlog_file_size=4096, cq_file_size=200)
    _fill(w, 200, tags_cycle=list(TAG_CODES))
    w.close()
    records = scan_commitlog(tmp_path / "commitlog", 4096)
    assert len(segment_files(tmp_path / "commitlog", 4096)) > 5
    assert len(records) == 200
    assert [r.phys for r in records] == [m.phys for m in w.messages]
    next_offset: dict[tuple[str, int], int] = {}
    previous_ts = 0
    for r, m in zip(records, w.messages):
        assert (r.topic, r.queue_id, r.queue_offset, r.total, r.store_ts) == (
            m.topic,
            m.queue_id,
            m.queue_offset,
            m.size,
            m.store_timestamp,
        )
        assert r.magic == V1 and r.sys_flag == 0
        assert r.store_host == ("127.0.0.1", 10911) and r.born_host == ("127.0.0.1", 50000)
        assert r.born_ts == r.store_ts - 3
        assert r.store_ts >= previous_ts
        previous_ts = r.store_ts
        key = (r.topic, r.queue_id)
        assert r.queue_offset == next_offset.get(key, 0)
        next_offset[key] = r.queue_offset + 1
        assert r.properties.get("TAGS") == m.tags
        assert r.properties["KEYS"] == m.keys and m.keys.endswith(" shared")
        assert r.properties["WAIT"] == "true" and r.properties["UNIQ_KEY"]
    assert len({r.properties["UNIQ_KEY"] for r in records}) == 200
    assert next_offset == {("T1", 0): 50, ("T1", 1): 50, ("T1", 2): 50, ("T2", 0): 50}


def test_consume_queues(tmp_path: Path) -> None:
    w = StoreWriter(tmp_path, commitlog_file_size=4096, cq_file_size=200)
    _fill(w, 200, tags_cycle=list(TAG_CODES))
    w.close()
    by_phys = {r.phys: r for r in scan_commitlog(tmp_path / "commitlog", 4096)}
    for topic, qid in (("T1", 0), ("T1", 1), ("T1", 2), ("T2", 0)):
        queue_dir = tmp_path / "consumequeue" / topic / str(qid)
        # 50 entries in 10-entry files: the last file is full too, so a sixth must not exist.
        assert [p.name for p in sorted(queue_dir.iterdir())] == [f"{200 * n:020d}" for n in range(5)]
        entries = read_cq(queue_dir, 200)
        assert [e.index for e in entries] == list(range(50))
        for e in entries:
            record = by_phys[e.phys]
            assert (record.topic, record.queue_id, record.queue_offset, record.total) == (
                topic,
                qid,
                e.index,
                e.size,
            )
            expected = TAG_CODES[record.properties.get("TAGS")]
            assert struct.pack(">q", e.tags_code).hex() == expected
        assert (
            queue_bounds(queue_dir, 200, 0)
            == (0, 50)
            == (
                w.truth_min_offset(topic, qid),
                w.truth_max_offset(topic, qid),
            )
        )


def test_cq_partial_last_file_has_zero_tail_and_size_rounds_up(tmp_path: Path) -> None:
    w = StoreWriter(tmp_path, cq_file_size=95)  # the broker rounds up to whole 20-byte entries
    w.create_topic("T", queues=1)
    for i in range(7):
        w.put("T", 0, b"x", store_timestamp=1000 + i)
    w.close()
    assert w.cq_file_size == 100
    files = sorted((tmp_path / "consumequeue" / "T" / "0").iterdir())
    assert [p.name for p in files] == ["00000000000000000000", "00000000000000000100"]
    last = files[1].read_bytes()
    assert len(last) == 100 and last[40:] == bytes(60) and last[20:40] != bytes(20)
    assert any(line.endswith("=100") for line in w.broker_conf_lines() if "ConsumeQueue" in line)


@pytest.mark.parametrize("slack", [0, 1])
def test_blank_header_boundary(tmp_path: Path, slack: int) -> None:
    # A record with topic "T" and properties UNIQ_KEY=U, WAIT=true is 91 + body + 1 + 21 bytes.
    w = StoreWriter(tmp_path, commitlog_file_size=4096)
    w.create_topic("T", queues=1)
    first = 4096 - 8 - 113 + slack  # body length leaving exactly 8 (or 7) bytes after the record
    if slack:
        # L + 8 > remaining at position 0 would not fit at all: check it is refused, not split.
        with pytest.raises(ValueError):
            w.put("T", 0, b"a" * first, store_timestamp=1, properties={"UNIQ_KEY": "U"})
        first -= 100
    r1 = w.put("T", 0, b"a" * first, store_timestamp=1, properties={"UNIQ_KEY": "U"})
    r2 = w.put("T", 0, b"b" * 10, store_timestamp=2, properties={"UNIQ_KEY": "U"})
    w.close()
    assert r1.size == 113 + first
    assert r2.phys == 4096  # next segment, even though the 8 spare bytes could hold a header only
    seg0 = (tmp_path / "commitlog" / f"{0:020d}").read_bytes()
    blank_at = r1.size
    assert struct.unpack_from(">iI", seg0, blank_at) == (4096 - blank_at, 0xCBD43194)
    assert len(scan_commitlog(tmp_path / "commitlog", 4096)) == 2


def test_ipv6_hosts_and_v2_magic(tmp_path: Path) -> None:
    w = StoreWriter(tmp_path, born_host=("fe80::1", 1234), store_host=("::1", 10911))
    long_topic = "%RETRY%" + "g" * 121  # 128 chars: Java length > 127 selects v2
    edge_topic = "t" * 127
    for topic in (long_topic, edge_topic):
        w.create_topic(topic, queues=1)
        w.put(topic, 0, b"body", tags="TagA", store_timestamp=1_700_000_000_500)
    w.close()
    records = scan_commitlog(tmp_path / "commitlog", w.commitlog_file_size)
    assert [r.magic for r in records] == [V2, V1]
    for r in records:
        assert r.sys_flag == 0x30
        assert r.born_host == ("fe80::1", 1234) and r.store_host == ("::1", 10911)
    data = (tmp_path / "commitlog" / f"{0:020d}").read_bytes()
    # Spec 4.1: store time at 48 + B = 68 with an IPv6 born host.
    assert struct.unpack_from(">q", data, 68)[0] == 1_700_000_000_500
    # TOTALSIZE = 72 + B + S + body + topicLenWidth + topic + 2 + props.
    props = (
        len("TAGS\x01TagA\x02")
        + len(records[0].properties["UNIQ_KEY"])
        + len("UNIQ_KEY\x01\x02WAIT\x01true\x02")
    )
    assert records[0].total == 72 + 20 + 20 + 4 + 2 + 128 + 2 + props
    assert records[1].total == 72 + 20 + 20 + 4 + 1 + 127 + 2 + props


def test_born_v6_only_sets_0x10(tmp_path: Path) -> None:
    w = StoreWriter(tmp_path, born_host=("2001:db8::7", 1))
    w.create_topic("T", queues=1)
    w.put("T", 0, b"", store_timestamp=5)
    w.close()
    (record,) = scan_commitlog(tmp_path / "commitlog", w.commitlog_file_size)
    assert record.sys_flag == 0x10 and record.body == b"" and record.body_crc == 0


def test_store_timestamps_must_not_decrease(tmp_path: Path) -> None:
    w = StoreWriter(tmp_path)
    w.create_topic("T", queues=1)
    w.put("T", 0, b"a", store_timestamp=100)
    w.put("T", 0, b"b", store_timestamp=100)
    with pytest.raises(ValueError):
        w.put("T", 0, b"c", store_timestamp=99)
    with pytest.raises(ValueError):
        w.put("Missing", 0, b"c", store_timestamp=101)
    with pytest.raises(ValueError):
        w.put("T", 1, b"c", store_timestamp=101)
    assert len(w.messages) == 2


def test_checkpoint_layout_and_no_lock(tmp_path: Path) -> None:
    w = StoreWriter(tmp_path)
    w.create_topic("T", queues=1)
    for ts in (10, 20, 30):
        w.put("T", 0, b"abc", store_timestamp=ts)
    w.close()
    data = (tmp_path / "checkpoint").read_bytes()
    assert len(data) == 4096
    physic, logics, index, flushed, confirm = struct.unpack_from(">5q", data)
    assert min(physic, logics, index) >= 30
    assert flushed == confirm == sum(m.size for m in w.messages)
    assert data[40:] == bytes(4056)
    assert (tmp_path / "index").is_dir()
    assert not (tmp_path / "lock").exists() and not (tmp_path / "abort").exists()


def test_config_files_broker_style(tmp_path: Path) -> None:
    w = StoreWriter(tmp_path)
    w.create_topic("TopicTest", queues=4)
    w.create_topic("RO", queues=1, perm=4, order=True)
    w.create_group("GroupA")
    w.create_group("GroupB", consumeBroadcastEnable=False, retryMaxTimes=3)
    with pytest.raises(ValueError):
        w.create_group("GroupC", noSuchField=1)
    w.commit_offset("GroupA", "TopicTest", 0, 250)
    w.commit_offset("GroupA", "TopicTest", 1, 251)
    w.commit_offset("GroupA", "TopicTest", 10, 9999999999)
    w.commit_offset("GroupA", "%RETRY%GroupA", 0, 5)
    w.close(data_version_timestamp=1700000000000)
    config = tmp_path / "config"
    for name in ("topics.json", "subscriptionGroup.json", "consumerOffset.json"):
        text = (config / name).read_text()
        assert (config / (name + ".bak")).read_text() == text
        assert not text.endswith("\n") and text.startswith('{\n\t"dataVersion":{\n\t\t"counter":')
        assert ": " not in text and "    " not in text  # fastjson: "k":v, TAB indents
    text = (config / "consumerOffset.json").read_text()
    # Spec 2.2: integer-keyed maps stay on the opening line, closing brace on its own line.
    assert '\t\t"TopicTest@GroupA":{0:250,1:251,10:9999999999\n\t\t}' in text
    assert '\t\t"%RETRY%GroupA@GroupA":{0:5\n\t\t}' in text
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)  # bare int keys: not standard JSON, like the broker's file
    doc = json.loads(quote_int_keys(text))
    assert doc["dataVersion"] == {"counter": 0, "stateVersion": 0, "timestamp": 1700000000000}
    assert doc["offsetTable"] == {
        "TopicTest@GroupA": {"0": 250, "1": 251, "10": 9999999999},
        "%RETRY%GroupA@GroupA": {"0": 5},
    }
    assert sorted(doc["groupTopicMap"]["GroupA"]) == ["%RETRY%GroupA", "TopicTest"]
    assert list(doc) == ["dataVersion", "groupTopicMap", "offsetTable"]

    topics = json.loads((config / "topics.json").read_text())
    assert list(topics) == ["dataVersion", "topicConfigTable"]
    assert topics["topicConfigTable"]["RO"] == {
        "attributes": {},
        "order": True,
        "perm": 4,
        "readQueueNums": 1,
        "topicFilterType": "SINGLE_TAG",
        "topicName": "RO",
        "topicSysFlag": 0,
        "writeQueueNums": 1,
    }
    groups = json.loads((config / "subscriptionGroup.json").read_text())
    assert list(groups) == ["dataVersion", "forbiddenTable", "subscriptionGroupTable"]
    group_a = groups["subscriptionGroupTable"]["GroupA"]
    assert list(group_a) == sorted(group_a)  # bean properties are alphabetical
    assert group_a == {
        "attributes": {},
        "brokerId": 0,
        "consumeBroadcastEnable": True,
        "consumeEnable": True,
        "consumeFromMinEnable": True,
        "consumeMessageOrderly": False,
        "consumeTimeoutMinute": 15,
        "groupName": "GroupA",
        "groupRetryPolicy": {"type": "CUSTOMIZED"},
        "groupSysFlag": 0,
        "notifyConsumerIdsChangedEnable": True,
        "retryMaxTimes": 16,
        "retryQueueNums": 1,
        "whichBrokerWhenConsumeSlowly": 1,
    }
    group_b = groups["subscriptionGroupTable"]["GroupB"]
    assert group_b["consumeBroadcastEnable"] is False and group_b["retryMaxTimes"] == 3


def test_expire_commitlog_deletes_segments_and_expired_cq_files(tmp_path: Path) -> None:
    w = StoreWriter(tmp_path, commitlog_file_size=4096, cq_file_size=200)
    _fill(w, 200, tags_cycle=["TagA"])
    before = len(list((tmp_path / "commitlog").iterdir()))
    w.expire_commitlog_before(6)
    w.expire_commitlog_before(5)  # already gone: no-op
    with pytest.raises(ValueError):
        w.expire_commitlog_before(before)  # would delete the segment being written
    w.close()
    segments = segment_files(tmp_path / "commitlog", 4096)
    assert segments[0][0] == 6 * 4096 == w.commitlog_min_offset
    assert len(segments) == before - 6
    records = scan_commitlog(tmp_path / "commitlog", 4096)
    assert records[0].phys == 6 * 4096
    for topic, qid in (("T1", 0), ("T1", 1), ("T1", 2), ("T2", 0)):
        queue_dir = tmp_path / "consumequeue" / topic / str(qid)
        files = sorted(queue_dir.iterdir())
        all_msgs = [m for m in w.messages if (m.topic, m.queue_id) == (topic, qid)]
        # Spec 3.4 / deleteExpiredFileByOffset: oldest first, a non-last CQ file goes iff its last
        # entry points below the log min; the first file that survives stops the deletion.
        expected_first = next(n for n in range(5) if n == 4 or all_msgs[n * 10 + 9].phys >= 6 * 4096)
        assert [p.name for p in files] == [f"{200 * n:020d}" for n in range(expected_first, 5)]
        lo, hi = queue_bounds(queue_dir, 200, w.commitlog_min_offset)
        assert lo > 0 and hi == 50
        assert (lo, hi) == (w.truth_min_offset(topic, qid), w.truth_max_offset(topic, qid))
        assert all(m.phys < 6 * 4096 for m in all_msgs[:lo]) and all_msgs[lo].phys >= 6 * 4096
    assert any(
        int(sorted((tmp_path / "consumequeue" / "T1" / str(q)).iterdir())[0].name) > 0 for q in range(3)
    )


def test_refuses_existing_store(tmp_path: Path) -> None:
    StoreWriter(tmp_path).close()
    with pytest.raises(UsageError):
        StoreWriter(tmp_path)


def test_expire_keeps_cq_file_whose_last_entry_is_at_the_new_min(tmp_path: Path) -> None:
    # One entry per CQ file makes "last entry of the file" exact: the entry of the first record of
    # segment 1 sits exactly at the new min, so its file survives and every earlier one goes.
    w = StoreWriter(tmp_path, commitlog_file_size=4096, cq_file_size=20)
    w.create_topic("T", queues=1)
    results = [w.put("T", 0, b"z" * 900, store_timestamp=i) for i in range(9)]
    w.expire_commitlog_before(1)
    w.close()
    first_live = next(r for r in results if r.phys >= 4096)
    assert first_live.phys == 4096
    names = [p.name for p in sorted((tmp_path / "consumequeue" / "T" / "0").iterdir())]
    assert names[0] == f"{first_live.queue_offset * 20:020d}"
    assert queue_bounds(tmp_path / "consumequeue" / "T" / "0", 20, 4096) == (first_live.queue_offset, 9)
