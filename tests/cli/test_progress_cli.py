"""consumerProgress end to end: stores written with StoreWriter, numbers checked against the
writer's ground truth (its record of every message), plain output against the spec's printf formats."""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from mqctl_testkit.cli import NOW_MS, invoke

from mqctl.store.writer import StoreWriter

NOW = NOW_MS  # 2026-01-01T00:00:00Z
T0 = NOW - 3_600_000


@dataclass
class Cluster:
    stores: dict[str, Path]
    writers: dict[str, StoreWriter]

    def args(self) -> list[str]:
        out: list[str] = []
        for name, path in self.stores.items():
            out += ["--store", f"{name}={path}"]
        return out


def _fill(
    w: StoreWriter, topic: str, queues: int, per_queue: list[int], tags: list[str | None], t: int
) -> int:
    n = 0
    for qid in range(queues):
        for i in range(per_queue[qid]):
            # runs of equal store times: 3 messages per millisecond step, never going back
            w.put(
                topic,
                qid,
                f"{topic}-{qid}-{i}".encode(),
                tags=tags[i % len(tags)],
                store_timestamp=t + n // 3,
            )
            n += 1
    return t + n // 3 + 1


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Cluster:
    base = tmp_path_factory.mktemp("progress")
    stores, writers = {}, {}
    for name, counts in (("broker-b", [40, 7, 0]), ("broker-a", [130, 55, 3])):
        root = base / name
        w = StoreWriter(root, broker_name=name, commitlog_file_size=8192, cq_file_size=20 * 20)
        w.create_topic("Orders", queues=3)
        w.create_topic("%RETRY%G", queues=1)
        w.create_topic("Other", queues=2)
        w.create_group("G")
        w.create_group("Idle")
        t = _fill(w, "Orders", 3, counts, ["TagA", "TagB", None, "Aa", "BB", "TagA"], T0)
        t = _fill(w, "%RETRY%G", 1, [5], ["TagA"], t)
        _fill(w, "Other", 2, [4, 4], [None], t)
        w.commit_offset("G", "Orders", 0, counts[0] // 2)
        w.commit_offset("G", "Orders", 1, counts[1])  # caught up
        # queue 2: never committed
        w.commit_offset("G", "%RETRY%G", 0, 2)
        w.commit_offset("H", "Other", 0, 1)
        if name == "broker-a":
            w.expire_commitlog_before(2)  # oldest segments gone: Orders queue 0 min > 0
            w.commit_offset("G", "Orders", 0, 1)  # below min
        w.close()
        stores[name], writers[name] = root, w
    return Cluster(stores, writers)


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """mqctl ARGS in this process, with ``env`` set on top of the test's (the process itself, its
    streams and exit, is tests/cli/test_entry.py's and test_golden_demo.py's)."""
    r = invoke(*args, env=env)
    return subprocess.CompletedProcess(list(args), r.exit_code, r.stdout, r.stderr)


def truth_rows(c: Cluster, group: str) -> list[dict]:
    rows = []
    for name in c.stores:
        w = c.writers[name]
        for key, qmap in w.offsets.items():
            topic, g = key.split("@")
            if g != group:
                continue
            queues = w.topics[topic]["readQueueNums"]
            for qid in range(queues):
                mx, mn = w.truth_max_offset(topic, qid), w.truth_min_offset(topic, qid)
                co = qmap.get(qid, 0)
                last = 0
                for m in w.messages:
                    if m.topic == topic and m.queue_id == qid and m.queue_offset == co - 1 and mn <= co - 1:
                        last = m.store_timestamp
                start = max(co, mn)
                oldest = next(
                    (
                        m.store_timestamp
                        for m in w.messages
                        if m.topic == topic and m.queue_id == qid and m.queue_offset == start and start < mx
                    ),
                    0,
                )
                matched = sum(
                    1
                    for m in w.messages
                    if m.topic == topic
                    and m.queue_id == qid
                    and start <= m.queue_offset < mx
                    and m.tags in ("TagA", "TagB")
                )
                rows.append(
                    {
                        "topic": topic,
                        "brokerName": name,
                        "queueId": qid,
                        "brokerOffset": mx,
                        "consumerOffset": co,
                        "diff": mx - co,
                        "lastTimestamp": last,
                        "minOffset": mn,
                        "oldestUnconsumedTimestamp": oldest,
                        "matchedDiff": matched,
                    }
                )
    rows.sort(key=lambda r: (r["topic"], r["brokerName"], r["queueId"]))
    return rows


def test_json_rows_equal_ground_truth(cluster: Cluster) -> None:
    r = run("consumerProgress", "-g", "G", *cluster.args(), "-o", "json", "--now-ms", str(NOW))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["schema"] == "mqctl/consumerProgress/v1"
    expected = truth_rows(cluster, "G")
    got = [{k: row[k] for k in expected[0] if k != "matchedDiff"} for row in doc["rows"]]
    assert got == [{k: v for k, v in e.items() if k != "matchedDiff"} for e in expected]
    assert doc["totals"]["diff"] == sum(e["diff"] for e in expected)
    # the retry topic sorts first, like mqadmin (% < letters)
    assert doc["rows"][0]["topic"] == "%RETRY%G"
    # broker-a Orders queue 0: committed below min (expired data)
    q0 = next(
        x
        for x in doc["rows"]
        if x["brokerName"] == "broker-a" and x["topic"] == "Orders" and x["queueId"] == 0
    )
    assert q0["minOffset"] > 0 and q0["consumerOffset"] == 1 and q0["belowMin"] is True
    for row in doc["rows"]:
        if row["oldestUnconsumedTimestamp"]:
            assert row["lagMs"] == NOW - row["oldestUnconsumedTimestamp"]


def test_exact_filtered_lag_counts_every_matching_tag(cluster: Cluster) -> None:
    r = run("consumerProgress", "-g", "G", *cluster.args(), "-o", "json", "--tags", "TagA || TagB")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    expected = {
        (e["topic"], e["brokerName"], e["queueId"]): e["matchedDiff"] for e in truth_rows(cluster, "G")
    }
    got = {(x["topic"], x["brokerName"], x["queueId"]): x["matchedDiff"] for x in doc["rows"]}
    assert got == expected
    assert doc["totals"]["matchedDiff"] == sum(expected.values())


def test_verify_tags_drops_hash_collisions(cluster: Cluster) -> None:
    # "Aa" and "BB" share String.hashCode 2112: the hash scan counts both, verification only the real tag.
    hashed = json.loads(
        run("consumerProgress", "-g", "G", *cluster.args(), "-o", "json", "--tags", "Aa").stdout
    )
    verified = json.loads(
        run(
            "consumerProgress", "-g", "G", *cluster.args(), "-o", "json", "--tags", "Aa", "--verify-tags"
        ).stdout
    )
    truth_aa = truth_bb = 0
    for e in truth_rows(cluster, "G"):
        w = cluster.writers[e["brokerName"]]
        start = max(e["consumerOffset"], e["minOffset"])
        for m in w.messages:
            if (
                m.topic == e["topic"]
                and m.queue_id == e["queueId"]
                and start <= m.queue_offset < e["brokerOffset"]
            ):
                truth_aa += m.tags == "Aa"
                truth_bb += m.tags == "BB"
    assert truth_aa and truth_bb
    assert hashed["totals"]["matchedDiff"] == truth_aa + truth_bb
    assert verified["totals"]["matchedDiff"] == truth_aa
    assert verified["totals"]["tagHashCollisions"] == truth_bb


def test_plain_is_mqadmins_printf_layout(cluster: Cluster, utc: None) -> None:
    r = run("consumerProgress", "-g", "G", *cluster.args(), "-o", "plain")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    # The Java format strings of spec/mqadmin.md 3.3, applied with Python's own % operator.
    assert lines[0] == "%-64s  %-32s  %-4s  %-20s  %-20s  %-20s %-20s%s" % (
        "#Topic",
        "#Broker Name",
        "#QID",
        "#Broker Offset",
        "#Consumer Offset",
        "#Diff",
        "#Inflight",
        "#LastTime",
    )
    expected = truth_rows(cluster, "G")
    for line, e in zip(lines[1:], expected):
        last = (
            "N/A"
            if e["lastTimestamp"] == 0
            else time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(e["lastTimestamp"] / 1000))
        )
        assert line == "%-64s  %-32s  %-4d  %-20d  %-20d  %-20d %-20d %s" % (
            e["topic"],
            e["brokerName"],
            e["queueId"],
            e["brokerOffset"],
            e["consumerOffset"],
            e["diff"],
            0,
            last,
        )
    tail = lines[1 + len(expected) :]
    assert tail == [
        "",
        "Consume TPS: 0.00",
        f"Consume Diff Total: {sum(e['diff'] for e in expected)}",
        "Consume Inflight Total: 0",
        "",
    ]


def test_show_client_ip_layout(cluster: Cluster) -> None:
    r = run("consumerProgress", "-g", "G", "-s", "true", *cluster.args(), "-o", "plain")
    lines = r.stdout.split("\n")
    assert lines[0] == "%-64s  %-32s  %-4s  %-20s  %-20s  %-20s %-20s %-20s%s" % (
        "#Topic",
        "#Broker Name",
        "#QID",
        "#Broker Offset",
        "#Consumer Offset",
        "#Client IP",
        "#Diff",
        "#Inflight",
        "#LastTime",
    )
    assert "N/A" in lines[1][150:]


def test_topic_filter_and_csv(cluster: Cluster) -> None:
    r = run("consumerProgress", "-g", "G", "-t", "Orders", *cluster.args(), "-o", "csv")
    assert r.returncode == 0, r.stderr
    rows = r.stdout.strip().split("\n")
    assert rows[0].startswith("topic,brokerName,queueId,brokerOffset,consumerOffset,diff")
    assert len(rows) == 1 + 6 and all(x.startswith("Orders,") for x in rows[1:])


def test_all_groups_overview(cluster: Cluster) -> None:
    r = run("consumerProgress", *cluster.args(), "-o", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    by_group = {x["group"]: x for x in doc["rows"]}
    # Idle: only a subscription group, listed as a live cluster's overview lists it
    assert set(by_group) == {"G", "H", "Idle"}
    assert by_group["Idle"]["foundIn"] == ["subscriptionGroup"] and by_group["Idle"]["queues"] == 0
    assert by_group["G"]["diffTotal"] == sum(e["diff"] for e in truth_rows(cluster, "G"))
    assert by_group["G"]["count"] is None  # online-only: a store cannot know
    plain = run("consumerProgress", *cluster.args(), "-o", "plain").stdout.split("\n")
    assert plain[0] == "%-64s  %-6s  %-24s %-5s  %-14s  %-7s  %s" % (
        "#Group",
        "#Count",
        "#Version",
        "#Type",
        "#Model",
        "#TPS",
        "#Diff Total",
    )
    assert plain[1] == "%-64s  %-6d  %-24s %-5s  %-14s  %-7d  %d" % (
        "G",
        0,
        "OFFLINE",
        "",
        "",
        0,
        by_group["G"]["diffTotal"],
    )


def test_max_lag_gate_prints_then_exits_10(cluster: Cluster) -> None:
    r = run("consumerProgress", "-g", "G", *cluster.args(), "-o", "json", "--max-lag", "1")
    assert r.returncode == 10
    assert json.loads(r.stdout)["rows"]
    assert r.stderr.strip().startswith("mqctl: error: --max-lag exceeded")
    ok = run("consumerProgress", "-g", "G", *cluster.args(), "-o", "json", "--max-lag", "100000")
    assert ok.returncode == 0
    r = run(
        "consumerProgress",
        "-g",
        "G",
        *cluster.args(),
        "-o",
        "json",
        "--max-lag-time",
        "1m",
        "--now-ms",
        str(NOW),
    )
    assert r.returncode == 10 and "--max-lag-time" in r.stderr
    r = run(
        "consumerProgress",
        "-g",
        "G",
        *cluster.args(),
        "-o",
        "json",
        "--max-lag-time",
        "2d",
        "--now-ms",
        str(NOW),
    )
    assert r.returncode == 0


@pytest.mark.parametrize(
    "args,code,needle",
    [
        (["-g", "NoSuchGroup"], 3, "not found"),
        (["-g", "G", "-t", "NoSuchTopic"], 3, "not found"),
        (["-g", "G", "--max-lag-time", "soon"], 2, "duration"),
        (["-g", "G", "--tags", "||"], 2, ""),
        (["-t", "Orders"], 2, "needs -g"),
        (["-g", "G", "--verify-tags"], 2, "--tags"),
        (["-g", "G", "--max-lag", "-1"], 2, ">= 0"),
    ],
)
def test_bad_input_one_line_and_exit_code(cluster: Cluster, args: list[str], code: int, needle: str) -> None:
    r = run("consumerProgress", *args, *cluster.args(), "-o", "json")
    assert r.returncode == code, r.stderr
    assert r.stdout == ""
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith("mqctl: error:") and needle in r.stderr


def test_no_cluster_and_bad_store(tmp_path: Path) -> None:
    r = run("consumerProgress", "-g", "G")
    assert r.returncode == 2 and "no cluster given" in r.stderr
    r = run("consumerProgress", "-g", "G", "--store", "broker-a")
    assert r.returncode == 2 and "NAME=PATH" in r.stderr
    r = run("consumerProgress", "-g", "G", "--store", f"broker-a={tmp_path}")
    assert r.returncode == 6 and "Traceback" not in r.stderr
    (tmp_path / "consumequeue").mkdir()
    (tmp_path / "consumequeue" / "CURRENT").write_text("MANIFEST-000001\n")
    r = run("consumerProgress", "-g", "G", "--store", f"broker-a={tmp_path}")
    assert r.returncode == 6 and "RocksDB" in r.stderr


def test_consumer_connection_needs_a_live_cluster(cluster: Cluster) -> None:
    r = run("consumerConnection", "-g", "G", *cluster.args())
    assert r.returncode == 7
    assert r.stdout == ""
    assert len(r.stderr.strip().split("\n")) <= 2 and "connection" in r.stderr


def test_profile_from_config_file(cluster: Cluster, tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    lines = ["[profiles.test.stores]"] + [f'{k} = "{v}"' for k, v in cluster.stores.items()]
    cfg.write_text("\n".join(lines) + "\n")
    import os

    env = {**os.environ, "MQCTL_CONFIG": str(cfg)}
    a = run("consumerProgress", "-g", "G", "--profile", "test", "-o", "json", "--now-ms", "1", env=env)
    b = run("consumerProgress", "-g", "G", *cluster.args(), "-o", "json", "--now-ms", "1")
    assert a.returncode == 0, a.stderr
    assert json.loads(a.stdout)["rows"] == json.loads(b.stdout)["rows"]
    r = run("consumerProgress", "-g", "G", "--profile", "nope", env=env)
    assert r.returncode == 2 and "unknown profile" in r.stderr
