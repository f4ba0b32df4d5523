"""The demo store, read back with the independent parser and checked against its summary."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from mqctl_testkit.storeparse import (
    java_hash,
    queue_bounds,
    quote_int_keys,
    read_cq,
    scan_commitlog,
    segment_files,
)

from mqctl.errors import StoreError, UsageError
from mqctl.store.demo import DemoSummary, broker_conf_lines, build_demo_store

HOUR = 3_600_000


def _offsets(root: Path) -> dict[str, dict[str, int]]:
    return json.loads(quote_int_keys((root / "config" / "consumerOffset.json").read_text()))["offsetTable"]


def test_sizes_and_segments(demo_store: DemoSummary) -> None:
    root = demo_store.root
    assert (demo_store.commitlog_file_size, demo_store.cq_file_size) == (256 * 1024, 1000)
    segments = segment_files(root / "commitlog", 256 * 1024)
    assert len(segments) == demo_store.commitlog_segments >= 3
    # The first segment expired: the log now starts at the second one.
    assert segments[0][0] == demo_store.commitlog_min_offset == 256 * 1024
    apparent = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    assert apparent < 20 * 1024 * 1024
    assert sorted(p.name for p in root.iterdir()) == [
        "checkpoint",
        "commitlog",
        "config",
        "consumequeue",
        "index",
    ]


def test_records_and_queues_agree(demo_store: DemoSummary) -> None:
    root = demo_store.root
    records = scan_commitlog(root / "commitlog", demo_store.commitlog_file_size)
    assert records[0].phys == demo_store.commitlog_min_offset
    last = records[-1]
    assert last.phys + last.total == demo_store.commitlog_max_offset
    by_phys = {r.phys: r for r in records}
    times = [r.store_ts for r in records]
    assert times == sorted(times)
    assert any(a == b for a, b in zip(times, times[1:])), "runs of equal store times expected"
    assert demo_store.now_ms - 4 * HOUR <= demo_store.earliest_store_timestamp
    assert times[-1] == demo_store.latest_store_timestamp < demo_store.now_ms

    seen = 0
    for (topic, qid), (lo, hi) in demo_store.queue_offsets.items():
        queue_dir = root / "consumequeue" / topic / str(qid)
        if hi == 0:
            assert not queue_dir.exists()
            continue
        assert queue_bounds(queue_dir, 1000, demo_store.commitlog_min_offset) == (lo, hi)
        for entry in read_cq(queue_dir, 1000):
            if entry.phys < demo_store.commitlog_min_offset:
                assert entry.index < lo
                continue
            record = by_phys[entry.phys]
            assert (record.topic, record.queue_id, record.queue_offset, record.total) == (
                topic,
                qid,
                entry.index,
                entry.size,
            )
            tags = record.properties.get("TAGS")
            assert entry.tags_code == (java_hash(tags) if tags else 0)
            seen += 1
    assert seen == len(records)  # every live record is reachable from exactly one CQ entry


def test_topics_tags_and_keys(demo_store: DemoSummary) -> None:
    root = demo_store.root
    topics = json.loads((root / "config" / "topics.json").read_text())["topicConfigTable"]
    assert {t: (c["readQueueNums"], c["perm"]) for t, c in topics.items()} == {
        "OrderEvents": (4, 6),
        "PaymentEvents": (2, 6),
        "AuditLog": (1, 4),
        "RefundEvents": (2, 6),
        "%RETRY%payment-service": (1, 6),
        # every push consumer's retry topic (how mqadmin's overview finds the groups)
        **{f"%RETRY%{g}": (1, 6) for g in demo_store.groups if g != "payment-service"},
    }
    records = scan_commitlog(root / "commitlog", demo_store.commitlog_file_size)
    tags = {(r.topic, r.properties.get("TAGS")) for r in records}
    assert {t for topic, t in tags if topic == "OrderEvents"} == {"created", "paid", None}
    assert {t for topic, t in tags if topic == "PaymentEvents"} == {"TagA", "TagB"}
    assert {t for topic, t in tags if topic == "AuditLog"} == {None}
    assert all(" " in r.properties["KEYS"] for r in records if r.topic == "PaymentEvents")
    retry = [r for r in records if r.topic == "%RETRY%payment-service"]
    assert retry and all(r.properties["RETRY_TOPIC"] == "PaymentEvents" and r.reconsume >= 1 for r in retry)


def test_group_states(demo_store: DemoSummary) -> None:
    root = demo_store.root
    offsets = _offsets(root)
    committed = {(g, t, q): o for (g, t, q), o in demo_store.committed.items()}
    assert {
        (k.split("@")[1], k.split("@")[0], int(q)): o for k, v in offsets.items() for q, o in v.items()
    } == (committed)
    bounds = demo_store.queue_offsets
    orders = [("OrderEvents", q) for q in range(4)]
    assert all(lo > 0 for lo, _ in (bounds[q] for q in orders)), "expired segment raised every min"
    assert all(bounds[("PaymentEvents", q)][0] == 0 for q in range(2))
    assert all(committed[("order-service", *q)] == bounds[q][1] for q in orders)
    lags = [bounds[q][1] - committed[("order-analytics", *q)] for q in orders]
    assert max(lags) > 0 and len(set(lags)) > 1
    assert ("inventory-sync", "OrderEvents", 3) not in committed
    assert all(("inventory-sync", *q) in committed for q in orders[:3])
    assert committed[("legacy-reporting", "OrderEvents", 0)] < bounds[orders[0]][0]
    retry_lo, retry_hi = bounds[("%RETRY%payment-service", 0)]
    assert retry_hi > 0 and retry_lo <= committed[("payment-service", "%RETRY%payment-service", 0)] < retry_hi
    assert committed[("audit-reader", "AuditLog", 0)] < bounds[("AuditLog", 0)][1]
    assert bounds[("RefundEvents", 0)] == (0, 0)
    groups = json.loads((root / "config" / "subscriptionGroup.json").read_text())["subscriptionGroupTable"]
    assert set(groups) == set(demo_store.groups)
    assert "refund-service" in groups and not any(k.endswith("@refund-service") for k in offsets)
    # The OrderEvents queues lost their oldest consume-queue files along with the segment.
    first_files = [
        sorted((root / "consumequeue" / "OrderEvents" / str(q)).iterdir())[0].name for q in range(4)
    ]
    assert all(int(name) > 0 for name in first_files)


def test_broker_conf_lines(demo_store: DemoSummary) -> None:
    lines = broker_conf_lines(demo_store)
    assert "mappedFileSizeCommitLog=262144" in lines
    assert "mappedFileSizeConsumeQueue=1000" in lines
    assert "brokerName=broker-a" in lines
    assert f"storePathRootDir={demo_store.root}" in lines


def test_deterministic(tmp_path: Path, demo_store: DemoSummary) -> None:
    started = time.perf_counter()
    again = build_demo_store(tmp_path / "again", now_ms=demo_store.now_ms)
    elapsed = time.perf_counter() - started
    assert elapsed < 5  # well under 1 s on an idle machine; generous for a shared CI box
    files = sorted(p.relative_to(demo_store.root) for p in demo_store.root.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again.root) for p in again.root.rglob("*") if p.is_file())
    for rel in files:
        assert (demo_store.root / rel).read_bytes() == (again.root / rel).read_bytes(), rel
    assert again.queue_offsets == demo_store.queue_offsets and again.committed == demo_store.committed
    other = build_demo_store(tmp_path / "other", now_ms=demo_store.now_ms, seed=8)
    assert other.committed != demo_store.committed


def test_refuses_non_empty_or_file_target(tmp_path: Path, demo_store: DemoSummary) -> None:
    with pytest.raises(UsageError):
        build_demo_store(demo_store.root, now_ms=demo_store.now_ms)
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError):
        build_demo_store(tmp_path / "file")
    (tmp_path / "empty").mkdir()
    assert build_demo_store(tmp_path / "empty").message_count > 0  # default now_ms: the clock


def test_unwritable_target_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError):
        build_demo_store(tmp_path / "file" / "store")  # parent is a file: mkdir fails
