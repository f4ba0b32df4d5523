"""The oracle checked against itself: what the producer stored, the consumer received, mqadmin
reports and the broker wrote to disk must agree with each other and with the spec, or the
mqctl comparisons in the other modules prove nothing."""

from __future__ import annotations

import json
import math
import re
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from compat_harness import (
    CQ_FILE_SIZE,
    HarnessError,
    RocketMQ,
    diff_total,
    local_seconds,
    parse_consumer_progress,
    parse_reset,
    parse_reset_table,
    progress_layout,
)
from matrix_expect import CqFile, target_4x, target_5x

pytestmark = pytest.mark.compat


def _per_queue(items) -> dict[tuple[str, int], list[int]]:
    out: dict[tuple[str, int], list[int]] = defaultdict(list)
    for m in items:
        out[(m.broker, m.queue_id)].append(m.offset)
    return out


def test_producer_offsets_are_contiguous_per_queue(progress_data) -> None:
    queues = _per_queue(progress_data.phase1 + progress_data.phase2)
    assert set(queues) == {(b, q) for b in ("broker-a", "broker-b") for q in range(4)}
    for key, offsets in queues.items():
        assert sorted(offsets) == list(range(len(offsets))), key


def test_consumer_received_phase1_exactly_once(progress_data) -> None:
    got = Counter((m.broker, m.queue_id, m.offset) for m in progress_data.consumed)
    sent = Counter((m.broker, m.queue_id, m.offset) for m in progress_data.phase1)
    assert got == sent
    tags = {(m.broker, m.queue_id, m.offset): m.tag for m in progress_data.phase1}
    assert all(tags[(m.broker, m.queue_id, m.offset)] == m.tag for m in progress_data.consumed)


def test_mqadmin_progress_matches_what_was_produced_and_consumed(
    cluster: RocketMQ, progress_data, progress_mqadmin
) -> None:
    # 4.x prints no #Inflight column and "Diff Total" (docs/rocketmq-versions.md §1)
    assert progress_layout(progress_mqadmin) == ("4.x" if cluster.version.legacy else "5.x")
    rows, totals = parse_consumer_progress(progress_mqadmin)
    maxes = {k: len(v) for k, v in _per_queue(progress_data.phase1 + progress_data.phase2).items()}
    committed = {k: len(v) for k, v in _per_queue(progress_data.phase1).items()}
    stamps = {(m.broker, m.queue_id, m.offset): m.store_timestamp for m in progress_data.consumed}
    mine = [r for r in rows if r.topic == progress_data.topic]
    assert {(r.broker, r.queue_id) for r in mine} == set(maxes)
    for r in mine:
        k = (r.broker, r.queue_id)
        assert (r.broker_offset, r.consumer_offset, r.diff) == (
            maxes[k],
            committed[k],
            maxes[k] - committed[k],
        )
        # spec 2.2: LastTime = store time of the message at consumerOffset - 1
        assert r.last_time == local_seconds(stamps[(r.broker, r.queue_id, r.consumer_offset - 1)])
    # rows sorted by MessageQueue order (spec 3.2): %RETRY% rows first
    assert [r.key for r in rows] == sorted(r.key for r in rows)
    assert diff_total(totals) == sum(r.diff for r in rows)
    if not cluster.version.legacy:
        assert "Consume Diff Total" in totals and all(r.inflight is not None for r in rows)


def test_broker_uses_the_small_segment_sizes(cluster: RocketMQ, progress_data) -> None:
    for (broker, qid), offsets in _per_queue(progress_data.phase1 + progress_data.phase2).items():
        qdir = cluster.brokers[broker].store / "consumequeue" / progress_data.topic / str(qid)
        files = sorted(qdir.iterdir())
        assert all(f.stat().st_size == CQ_FILE_SIZE for f in files)
        n = len(offsets)
        # the broker may already have created the next file when a file is exactly full
        assert len(files) in {math.ceil(n / 30), n // 30 + 1}, (broker, qid, n, files)
        assert len(files) >= 2


def test_consumer_offsets_file_is_written(cluster: RocketMQ, progress_data) -> None:
    text = (cluster.brokers["broker-a"].store / "config" / "consumerOffset.json").read_text()
    assert f'"{progress_data.topic}@{progress_data.group}"' in text


def test_route_lists_brokers_in_name_server_hashmap_order(cluster: RocketMQ) -> None:
    """The name server builds queueDatas from a HashMap<brokerName, QueueData> (and brokerDatas
    from a HashSet of the names): "broker-b" (bucket 8 of 16) comes before "broker-a" (bucket 11).
    allocateMQ's HashSet and resetOffsetByTime's putAll inherit this order (spec 7.3, 8.4)."""
    out = cluster.mqadmin_ok("topicRoute", "-t", "TopicProgress")
    # fastjson writes the long keys of brokerAddrs unquoted ({0:"127.0.0.1:..."}): quote them
    route = json.loads(re.sub(r"([{,]\s*)(-?\d+)(\s*:)", r'\1"\2"\3', out[out.index("{") :]))
    assert [q["brokerName"] for q in route["queueDatas"]] == ["broker-b", "broker-a"]
    assert [b["brokerName"] for b in route["brokerDatas"]] == ["broker-b", "broker-a"]


def _read_settled(path: Path) -> str:
    # 5.3.3 rewrites the file in place every second, 5.5 renames it away first: retry a torn read
    for _ in range(20):
        try:
            text = path.read_text()
        except FileNotFoundError:
            text = ""
        if text.rstrip().endswith("}"):
            return text
        time.sleep(0.1)
    raise AssertionError(f"{path} never readable whole")


def test_store_is_written_the_way_this_version_writes_it(cluster: RocketMQ, progress_data) -> None:
    """docs/rocketmq-versions.md §8: mqctl's store mode reads what each version writes."""
    v = cluster.version
    broker = cluster.brokers["broker-a"]
    text = _read_settled(broker.store / "config" / "consumerOffset.json")
    keys = re.findall(r'^\t"(\w+)":', text, re.M)  # top-level properties (TAB-indented, pretty)
    key = f'"{progress_data.topic}@{progress_data.group}":'
    if v.legacy:  # fastjson 1.2.69: offsetTable only, the queue map on one line
        assert keys == ["offsetTable"]
    else:
        assert {"dataVersion", "groupTopicMap", "offsetTable"} <= set(keys)
        assert "pullOffsetTable" not in keys  # transient in 5.3.3 and 5.5.1 (written by 5.5.0)
    if v.at_least(5, 5):  # fastjson2: one queue per line; a RocksDB dir in every store root
        assert re.search(re.escape(key) + r"\{\n\t\t\t0:\d+,\n", text), text
        assert (broker.store / "rocksdbstore").is_dir()
    else:
        assert re.search(re.escape(key) + r"\{0:\d+,1:\d+", text), text
        assert not (broker.store / "rocksdbstore").exists()
    # the abort marker of a running broker: empty in 4.x, the broker's PID in 5.x
    assert broker.proc is not None
    abort = (broker.store / "abort").read_text().strip()
    assert abort == ("" if v.legacy else str(broker.proc.pid))


# ---------------------------------------------------------------------------- parsers, no cluster

_ROW4 = "%-64s  %-32s  %-4d  %-20d  %-20d  %-20d  %s"
_PROGRESS_4X = "\n".join(
    [
        "%-64s  %-32s  %-4s  %-20s  %-20s  %-20s  %s"
        % ("#Topic", "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset", "#Diff", "#LastTime"),
        _ROW4 % ("%RETRY%G1", "broker-a", 0, 0, 0, 0, "N/A"),
        _ROW4 % ("TopicA", "broker-a", 1, 5, 3, 2, "2026-11-23 21:31:23"),
        "",
        "Consume TPS: 0.80",
        "Diff Total: 2",
        "",
    ]
)


def test_parse_consumer_progress_4x_layout() -> None:
    rows, totals = parse_consumer_progress(_PROGRESS_4X)
    assert progress_layout(_PROGRESS_4X) == "4.x"
    assert [(r.key, r.consumer_offset, r.diff, r.inflight, r.last_time) for r in rows] == [
        (("%RETRY%G1", "broker-a", 0), 0, 0, None, "N/A"),
        (("TopicA", "broker-a", 1), 3, 2, None, "2026-11-23 21:31:23"),
    ]
    assert diff_total(totals) == 2


def _reset_text(title: str, header: list[str], rows: list[list[object]]) -> str:
    fmt = "  ".join(["%-40s"] * 3) if len(header) == 3 else "  ".join(["%-20s"] * 6)
    lines = [title, fmt % tuple(header), *(fmt % tuple(r) for r in rows)]
    return "\n".join(lines) + "\n"


def test_parse_reset_every_title_and_path() -> None:
    b = ["#brokerName", "#queueId", "#offset"]
    c = ["#brokerName", "#queueId", "#brokerOffset", "#consumerOffset", "#timestampOffset"]
    cases = {
        "start reset consumer offset by specified, group[G], topic[T], force[true], ...": (b, "B"),
        "rollback consumer offset by specified group[G], topic[T], force[true], ...": (b, "B"),
        "reset consumer offset by specified consumerGroup[G], topic[T], ...": (c + ["#resetOffset"], "C"),
        "rollback consumer offset by specified consumerGroup[G], topic[T], ...": (
            c + ["#rollbackOffset"],
            "C",
        ),
    }
    for title, (header, path) in cases.items():
        rows = [["broker-a", 1, 7]] if path == "B" else [["broker-a", 1, 9, 8, 7, 7]]
        text = _reset_text(title, header, rows)
        assert parse_reset_table(text, path) == {("broker-a", 1): 7}, title
        with pytest.raises(HarnessError):
            parse_reset_table(text, "C" if path == "B" else "B")
    with pytest.raises(HarnessError):  # a 5.x path-C title with the 4.x last column
        parse_reset(_reset_text(next(iter(cases)), c + ["#rollbackOffset"], [["broker-a", 1, 9, 8, 7, 7]]))


def test_offset_by_time_4x_rules() -> None:
    """docs/rocketmq-versions.md §4.1 on one queue of two files (30 entries each)."""
    stamps = [1000 + 10 * i for i in range(45)]  # offsets 0..44
    files = [CqFile(0, 1200), CqFile(30, 1500)]  # file 0 last touched at t(20), file 1 at t(50)
    assert target_4x(stamps, 1000, files) == 0  # exact hit
    assert target_4x(stamps, 1004, files) == 0  # nearer the earlier neighbour
    assert target_4x(stamps, 1005, files) == 0  # tie: the earlier
    assert target_4x(stamps, 1006, files) == 1  # nearer the later one
    assert target_4x(stamps, 1250, files) == 30  # file 0's mtime < ts: file 1, all newer: its first
    assert target_4x(stamps, 9999, files) == 44  # after the last message: max - 1
    assert target_4x(stamps, 9999, [*files, CqFile(60, 1600)]) == 0  # empty last file: 0
    assert target_4x(stamps, 1000, []) == 0  # no consume queue
    assert target_5x(stamps, 1005) == 1 and target_5x(stamps, 9999) == 45
