"""mqadmin 4.9.7's plain layouts, from its printf format strings (docs/rocketmq-versions.md 1 and
2.3, checked there against a real 4.9.7 mqadmin); the expected text below is built from those
format strings by hand, independently of mqctl's renderers."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from mqctl.model import (
    V4_9_7,
    V5_3_3,
    GroupProgress,
    PlanRow,
    ProgressRow,
    ResetPlan,
    Target,
    is_legacy,
    version_name,
    version_ordinal,
)
from mqctl.render import progress as progress_render
from mqctl.render import reset as reset_render
from mqctl.store.version import store_version


def pad(s: object, n: int) -> str:  # Java %-Ns for ASCII
    return str(s).ljust(n)


def _row(topic: str, broker: str, qid: int, bo: int, co: int, last: int) -> ProgressRow:
    return ProgressRow(
        topic=topic,
        broker_name=broker,
        queue_id=qid,
        broker_offset=bo,
        consumer_offset=co,
        last_timestamp=last,
        min_offset=0,
        inflight=0,
    )


def test_version_names_round_trip() -> None:
    assert (version_ordinal("4.9.7"), version_ordinal("5.3.3"), version_ordinal("V5_5_1")) == (407, 479, 515)
    assert version_name(version_ordinal("5.5.0")) == "V5_5_0"
    assert is_legacy(V4_9_7) and not is_legacy(V5_3_3) and not is_legacy(None)
    for bad in ("5.3", "five", "3.2.6", "5.10.0"):
        with pytest.raises(ValueError):
            version_ordinal(bad)


def test_consumer_progress_4x_layout(utc: None) -> None:
    rows = [_row("%RETRY%G1", "broker-a", 0, 0, 0, 0), _row("TopicA", "broker-a", 1, 5, 3, 1_767_225_600_000)]
    p = GroupProgress(group="G1", rows=rows, now_ms=0, consume_tps=1.625, rocketmq_version=V4_9_7)
    out = io.StringIO()
    progress_render.plain(p, out)
    # header "%-64s  %-32s  %-4s  %-20s  %-20s  %-20s  %s%n", rows "%-64s  %-32s  %-4d  %-20d  %-20d  %-20d  %s%n"
    want = (
        f"{pad('#Topic', 64)}  {pad('#Broker Name', 32)}  {pad('#QID', 4)}  {pad('#Broker Offset', 20)}  "
        f"{pad('#Consumer Offset', 20)}  {pad('#Diff', 20)}  #LastTime\n"
        f"{pad('%RETRY%G1', 64)}  {pad('broker-a', 32)}  {pad(0, 4)}  {pad(0, 20)}  {pad(0, 20)}  {pad(0, 20)}  N/A\n"
        f"{pad('TopicA', 64)}  {pad('broker-a', 32)}  {pad(1, 4)}  {pad(5, 20)}  {pad(3, 20)}  {pad(2, 20)}  "
        "2026-01-01 00:00:00\n"
        "\nConsume TPS: 1.63\nDiff Total: 2\n"
    )
    assert out.getvalue() == want
    out = io.StringIO()
    progress_render.plain(p, out, show_client_ip=True)
    # -s true: "... %-20s  %-20s %-20s  %s%n": #Client IP, one space, #Diff, two spaces
    first = out.getvalue().splitlines()[0]
    assert first.endswith(
        f"{pad('#Consumer Offset', 20)}  {pad('#Client IP', 20)} {pad('#Diff', 20)}  #LastTime"
    )


def _plan(online: bool | None, version: int | None = V4_9_7, force: bool = True) -> ResetPlan:
    rows = (
        # topic, broker, qid, current, target, min, max, target time, warnings, searched
        PlanRow("TopicA", "broker-a", 0, 5, 1, 0, 5, -1, (), 1),
        PlanRow("TopicA", "broker-a", 1, -1, 2, 0, 5, -1, (), 2),
    )
    return ResetPlan(
        "G1", "TopicA", Target("time", 1000, "1000"), force, rows, online=online, rocketmq_version=version
    )


def test_reset_4x_offline_is_the_old_client_side_table() -> None:
    out = io.StringIO()
    reset_render.plain(_plan(online=None), out, "1000", 1000)
    # "%-20s  %-20s  %-20s  %-20s  %-20s  %-20s%n"; a consumerOffset of -1 prints as 0. Rows in
    # the order of a HashMap<MessageQueue, _> of capacity 16 (worked out with _bucket below).
    lines = out.getvalue().splitlines()
    assert lines[0] == (
        "rollback consumer offset by specified consumerGroup[G1], topic[TopicA], force[true], "
        "timestamp(string)[1000], timestamp(long)[1000]"
    )
    heads = (
        "#brokerName",
        "#queueId",
        "#brokerOffset",
        "#consumerOffset",
        "#timestampOffset",
        "#rollbackOffset",
    )
    assert lines[1] == "  ".join(pad(h, 20) for h in heads)
    rows = {
        0: "  ".join(pad(c, 20) for c in ("broker-a", 0, 5, 5, 1, 1)),
        1: "  ".join(pad(c, 20) for c in ("broker-a", 1, 5, 0, 2, 2)),
    }
    order = sorted((0, 1), key=lambda q: _bucket("TopicA", "broker-a", q))  # stable: ties keep put order
    assert lines[2:] == [rows[q] for q in order]


def _java_hash(s: str) -> int:
    h = 0
    for ch in s:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h


def _bucket(topic: str, broker: str, qid: int) -> int:
    """MessageQueue.hashCode (31-based over brokerName, queueId, topic), HashMap's spread, 16 buckets."""
    h = (31 * ((31 * (31 + _java_hash(broker)) + qid) & 0xFFFFFFFF) + _java_hash(topic)) & 0xFFFFFFFF
    return (h ^ (h >> 16)) & 15


def test_reset_4x_online_and_now() -> None:
    out = io.StringIO()
    reset_render.plain(_plan(online=True), out, "now", 1_767_225_600_000)
    lines = out.getvalue().splitlines()
    # 4.x sends "now" as -1 and prints the broker-side header with "group[" (not consumerGroup[).
    assert lines[0] == (
        "rollback consumer offset by specified group[G1], topic[TopicA], force[true], "
        "timestamp(string)[now], timestamp(long)[-1]"
    )
    assert lines[1] == f"{pad('#brokerName', 40)}  {pad('#queueId', 40)}  {pad('#offset', 40)}"
    out = io.StringIO()
    reset_render.plain(_plan(online=True, version=V5_3_3), out, "1000", 1000)
    assert out.getvalue().startswith("start reset consumer offset by specified, group[G1], topic[TopicA], ")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_store_version_from_its_files(tmp_path: Path) -> None:
    old, new, v55, none = (tmp_path / n for n in ("a", "b", "c", "d"))
    # 4.9.7's topics.json (fastjson 1, keys sorted): DataVersion without stateVersion.
    _write(
        old / "config/topics.json",
        '{\n\t"dataVersion":{\n\t\t"counter":3,\n\t\t"timestamp":1700000000000\n\t},\n'
        '\t"topicConfigTable":{}\n}',
    )
    _write(
        new / "config/topics.json",
        '{"dataVersion":{"counter":3,"stateVersion":0,"timestamp":1},"topicConfigTable":{}}',
    )
    _write(v55 / "config/topics.json", "{}")
    (v55 / "rocksdbstore").mkdir()
    (none / "config").mkdir(parents=True)
    assert store_version(old, old / "config") == V4_9_7
    assert store_version(new, new / "config") == V5_3_3
    assert store_version(v55, v55 / "config") == version_ordinal("5.5.0")
    assert store_version(none, none / "config") is None
    # only the .bak left (the broker's fallback): it tells too
    _write(
        none / "config/subscriptionGroup.json.bak",
        '{"dataVersion":{"counter":1,"timestamp":2},"subscriptionGroupTable":{}}',
    )
    assert store_version(none, none / "config") == V4_9_7
