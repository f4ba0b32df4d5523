"""The oracle checked against itself: what the producer stored, the consumer received, mqadmin
reports and the broker wrote to disk must agree with each other and with the spec, or the
mqctl comparisons in the other modules prove nothing."""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict

import pytest
from compat_harness import CQ_FILE_SIZE, RocketMQ, local_seconds, parse_consumer_progress

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


def test_mqadmin_progress_matches_what_was_produced_and_consumed(progress_data, progress_mqadmin) -> None:
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
    assert int(totals["Consume Diff Total"]) == sum(r.diff for r in rows)


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
