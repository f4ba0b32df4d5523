"""lagReport on Spark: whole DataFrames against rows computed from the StoreWriter's ground truth.

The expected rows never touch mqctl's readers: offsets and store times come from the writer's
record of every message it appended, tag hashes from the literal values of spec section 7.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mqctl_testkit.cli import NOW_MS

from mqctl.pipeline.inputs import consumer_queues, load_broker_input, parse_subscriptions
from mqctl.store.writer import StoreWriter

NOW = NOW_MS  # 2026-01-01T00:00:00Z
T0 = NOW - 7_200_000
TAGS = ["TagA", "TagB", "Aa", "BB", None, "TagA"]
# String.hashCode values from spec 7 (Aa and BB collide on purpose).
HASH = {"TagA": 2598919, "TagB": 2598920, "Aa": 2112, "BB": 2112}
SUBS = {
    "g1": {"TopicA": "TagA || Aa", "%RETRY%g1": "*"},
    "g2": {"TopicB": "TagB"},
    "gone": {"TopicA": "TagB"},  # a group with no offsets: no rows
}
EXPECTED_HASHES = {"TagA || Aa": {2598919, 2112}, "TagB": {2598920}}


@dataclass
class Fleet:
    stores: dict[str, Path]
    writers: dict[str, StoreWriter]


def _put(w: StoreWriter, topic: str, qid: int, n: int, t: int) -> int:
    for i in range(n):
        w.put(topic, qid, b"x" * 120, tags=TAGS[(i + qid) % len(TAGS)], store_timestamp=t)
        t += 1000
    return t


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    base = tmp_path_factory.mktemp("lag")
    a = StoreWriter(base / "a", broker_name="broker-a", commitlog_file_size=4096, cq_file_size=5 * 20)
    a.create_topic("TopicA", queues=2)
    a.create_topic("%RETRY%g1", queues=1)
    a.create_topic("TopicB", queues=3)  # queue 2 never gets a message: no directory at all
    t = T0
    for _ in range(3):  # interleave queues so expiry cuts each of them mid-way
        t = _put(a, "TopicA", 0, 9, t)
        t = _put(a, "TopicA", 1, 6, t)
        t = _put(a, "TopicB", 0, 4, t)
        t = _put(a, "%RETRY%g1", 0, 2, t)
    _put(a, "TopicB", 1, 3, t)
    a.expire_commitlog_before(2)
    a.commit_offset("g1", "TopicA", 0, 12)
    a.commit_offset("g1", "TopicA", 1, 1)  # below min after the expiry
    a.commit_offset("g1", "%RETRY%g1", 0, 0)
    a.commit_offset("g2", "TopicA", 0, a.truth_max_offset("TopicA", 0) + 3)  # above max; q1: none
    a.commit_offset("g2", "TopicB", 0, 2)
    a.commit_offset("g2", "TopicB", 2, 0)
    a.commit_offset("g3", "NoConfig", 0, 5)  # no topic config: skipped like GET_CONSUME_STATS
    a.close()

    b = StoreWriter(base / "b", broker_name="broker-b", commitlog_file_size=4096, cq_file_size=4 * 20)
    b.create_topic("TopicA", queues=1)
    _put(b, "TopicA", 0, 10, T0 + 500)
    b.commit_offset("g1", "TopicA", 0, 10)  # fully consumed
    b.close()

    # The scenario must exercise what it claims to: expired messages, deleted CQ files.
    assert a.truth_min_offset("TopicA", 0) > 0 and a.truth_min_offset("TopicA", 1) > 1
    assert not (base / "a/consumequeue/TopicA/0/00000000000000000000").exists()
    return Fleet({"broker-a": base / "a", "broker-b": base / "b"}, {"broker-a": a, "broker-b": b})


def expected_rows(fleet: Fleet, subs: dict[str, dict[str, str]] | None) -> list[tuple[Any, ...]]:
    rows = []
    for broker, w in fleet.writers.items():
        for key, by_q in w.offsets.items():
            topic, group = key.split("@")
            if topic not in w.topics:
                continue
            for qid in range(w.topics[topic]["readQueueNums"]):
                msgs = {m.queue_offset: m for m in w.messages if (m.topic, m.queue_id) == (topic, qid)}
                mx, mn = w.truth_max_offset(topic, qid), w.truth_min_offset(topic, qid)
                raw = by_q.get(qid, -1)
                co = max(raw, 0)
                start = max(co, mn)
                last = msgs[co - 1].store_timestamp if mn <= co - 1 < mx else 0
                oldest = msgs[start].store_timestamp if start < mx else 0
                expr = None if subs is None else subs.get(group, {}).get(topic)
                if expr is None:
                    matched = None
                elif expr == "*":
                    matched = mx - start
                else:
                    hashes = EXPECTED_HASHES[expr]
                    matched = sum(1 for o in range(start, mx) if HASH.get(msgs[o].tags, 0) in hashes)
                rows.append(
                    (group, topic, broker, qid, mn, mx, co, mx - co, matched, last, oldest,
                     NOW - oldest if oldest else 0, raw < 0, 0 <= raw < mn, raw > mx,
                     None, None, None)  # consumeTps, pullOffset, inflight: live only
                )  # fmt: skip
    return sorted(rows)


def assert_df_equal(df: Any, expected: list[tuple[Any, ...]], schema: Any) -> None:
    """Whole-DataFrame comparison: column names and types, then every row (order-insensitive)."""
    assert [(f.name, f.dataType) for f in df.schema.fields] == [(f.name, f.dataType) for f in schema.fields]
    assert sorted(tuple(r) for r in df.collect()) == expected


@pytest.fixture(scope="module")
def brokers(fleet: Fleet) -> list[Any]:
    return [load_broker_input(name, root) for name, root in fleet.stores.items()]


def _report(
    spark: Any, brokers: list[Any], subs: dict[str, dict[str, str]] | None, direct: bool = False
) -> Any:
    from mqctl.pipeline import spark_job

    parsed = None if subs is None else parse_subscriptions(subs, "test")
    return spark_job.run_lag_report(spark, brokers, consumer_queues(brokers, parsed), NOW, direct=direct)


@pytest.fixture(scope="module")
def report(spark: Any, brokers: list[Any]) -> Any:
    return _report(spark, brokers, SUBS).cache()


def test_report_equals_ground_truth(report: Any, fleet: Fleet) -> None:
    from mqctl.pipeline.spark_schemas import LAG_REPORT

    expected = expected_rows(fleet, SUBS)
    # What the scenario covers, so a silently empty comparison cannot pass.
    assert len(expected) == 2 + 1 + 2 + 3 + 1
    assert any(r[12] for r in expected) and any(r[13] for r in expected) and any(r[14] for r in expected)
    assert any(r[8] is None for r in expected) and any(r[8] not in (None, 0) for r in expected)
    assert_df_equal(report, expected, LAG_REPORT)


def test_direct_reads_give_the_same_dataset(spark: Any, brokers: list[Any], fleet: Fleet) -> None:
    from mqctl.pipeline.spark_schemas import LAG_REPORT

    assert_df_equal(_report(spark, brokers, SUBS, direct=True), expected_rows(fleet, SUBS), LAG_REPORT)


def test_without_subscriptions_matched_diff_is_null(spark: Any, brokers: list[Any], fleet: Fleet) -> None:
    from mqctl.pipeline.spark_schemas import LAG_REPORT

    assert_df_equal(_report(spark, brokers, None), expected_rows(fleet, None), LAG_REPORT)


def test_same_numbers_as_consumer_progress(report: Any, fleet: Fleet) -> None:
    from mqctl.backends.store import StoreBackend
    from mqctl.model import parse_subexpr
    from mqctl.ops.progress import group_progress

    got = {(r.group, r.topic, r.brokerName, r.queueId): r for r in report.collect()}
    seen = 0
    with StoreBackend(fleet.stores) as backend:
        # No -t: the group's topics are its offset-table keys, as in the report.
        for group, expr in (("g1", "TagA || Aa"), ("g2", "TagB")):
            progress = group_progress(backend, group, tags=parse_subexpr(expr), now_ms=NOW)
            for p in progress.rows:
                r = got.pop((group, p.topic, p.broker_name, p.queue_id))
                assert (r.minOffset, r.brokerOffset, r.consumerOffset, r.diff) == (
                    p.min_offset, p.broker_offset, p.consumer_offset, p.diff)  # fmt: skip
                assert (r.lastTimestamp, r.oldestUnconsumedTimestamp, r.lagMs) == (
                    p.last_timestamp, p.oldest_unconsumed_timestamp, p.lag_ms)  # fmt: skip
                assert r.noCommittedOffset is not p.committed
                if SUBS[group].get(p.topic) == expr:
                    assert r.matchedDiff == p.matched_diff
                    seen += 1
    assert got == {}  # the same queue set, too
    assert seen == 3 + 3  # g1 TopicA on both brokers, g2 TopicB


def test_top_groups(report: Any, fleet: Fleet) -> None:
    from mqctl.pipeline.spark_job import top_groups_df

    expected = expected_rows(fleet, SUBS)
    totals: dict[str, int] = {}
    for r in expected:
        totals[r[0]] = totals.get(r[0], 0) + r[7]
    top = top_groups_df(report, 1).collect()
    best = max(totals, key=lambda g: totals[g])
    assert [(r.group, r.diffTotal) for r in top] == [(best, totals[best])]


def test_json_lines_output(report: Any, tmp_path: Path, fleet: Fleet) -> None:
    from mqctl.pipeline.spark_job import write_report

    out = tmp_path / "out"
    write_report(report, str(out), "json")
    lines = [json.loads(line) for p in sorted(out.glob("part-*.json")) for line in p.read_text().splitlines()]
    assert len(lines) == len(expected_rows(fleet, SUBS))
    # null matchedDiff is kept as a key, so every line has the same columns.
    assert all("matchedDiff" in d for d in lines) and any(d["matchedDiff"] is None for d in lines)
    with pytest.raises(Exception, match="already exists"):
        write_report(report, str(out), "json")


def test_cli_end_to_end(spark: Any, fleet: Fleet, tmp_path: Path) -> None:
    import typer
    from typer.testing import CliRunner

    from mqctl.cli.lagreport import lag_report

    subs = tmp_path / "subs.toml"
    subs.write_text('[g1]\nTopicA = "TagA || Aa"\n"%RETRY%g1" = "*"\n[g2]\nTopicB = "TagB"\n')
    app = typer.Typer()
    app.command()(lag_report)
    app.command("other")(lambda: None)  # keep lagReport a sub-command, as in app.py
    out = tmp_path / "ds"
    args = ["lag-report", "--subscriptions", str(subs), "--out", str(out), "--format", "csv", "-o", "json"]
    args += ["--cq-read", "direct"]
    for name, root in fleet.stores.items():
        args += ["-S", f"{name}={root}"]
    res = CliRunner().invoke(app, [*args, "--now-ms", str(NOW)])
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    expected = expected_rows(fleet, SUBS)
    assert doc["schema"] == "mqctl/lagReport/v1" and doc["rows"] == len(expected)
    totals: dict[str, list[int]] = {}
    for r in expected:
        t = totals.setdefault(r[0], [0, 0])
        t[0] += r[7]
        t[1] += r[8] or 0
    assert {d["group"]: [d["diffTotal"], d["matchedDiffTotal"]] for d in doc["top"]} == totals
    assert len(list(out.glob("part-*.csv"))) >= 1
    assert spark.sparkContext._jsc is not None  # the CLI did not stop a session it did not start


def test_damaged_commit_log_is_null_lag_and_exit_6(spark: Any, tmp_path: Path) -> None:
    """A zeroed commit-log segment: the store time of the first unconsumed message cannot be
    read, so lagMs is null (unknown) in the dataset and the top groups, never 0, and the run
    exits 6 after writing. The undamaged queue keeps its real lag."""
    import typer
    from typer.testing import CliRunner

    from mqctl.cli.lagreport import lag_report

    root = tmp_path / "a"
    w = StoreWriter(root, broker_name="broker-a", commitlog_file_size=4096, cq_file_size=5 * 20)
    w.create_topic("T", queues=2)
    t = _put(w, "T", 0, 4, T0)  # queue 0: stored T0 .. T0+3 s, in the first segment
    for _ in range(30):  # fill the first segment and spill into the next ones
        t = _put(w, "T", 1, 1, t)
    w.commit_offset("G", "T", 0, 1)  # queue 0: the oldest unconsumed message is offset 1
    w.commit_offset("G", "T", 1, 29)  # queue 1: offset 29, in a later segment
    w.close()
    first = sorted((root / "commitlog").iterdir())[0]
    first.write_bytes(bytes(first.stat().st_size))  # the segment of queue 0's messages, zeroed
    app = typer.Typer()
    app.command()(lag_report)
    app.command("other")(lambda: None)
    out = tmp_path / "ds"
    args = ["lag-report", "-S", f"broker-a={root}", "--out", str(out), "--format", "json", "-o", "json"]
    res = CliRunner().invoke(app, [*args, "--cq-read", "direct", "--now-ms", str(NOW)])
    assert res.exit_code == 6, res.stderr
    assert "cannot be read" in res.stderr and "Traceback" not in res.stderr
    rows = {
        d["queueId"]: d
        for p in sorted(out.glob("part-*.json"))
        for d in map(json.loads, p.read_text().splitlines())
    }
    assert rows[0]["lagMs"] is None and rows[0]["oldestUnconsumedTimestamp"] is None
    assert rows[0]["diff"] == 3  # the offsets are still exact
    assert rows[1]["lagMs"] == NOW - rows[1]["oldestUnconsumedTimestamp"] > 0
