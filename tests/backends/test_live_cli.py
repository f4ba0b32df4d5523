"""The CLI with -n against the fake cluster of live_scenario.py: every command's happy path, the
values worked out here from the scenario (by hand, or from the model's messages), never copied
from mqctl's output. All runs of this module are read-only, so they start at once (one batch)
against one shared cluster and each test checks its own run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timezone
from decimal import ROUND_HALF_UP, Decimal

import pytest
from mqctl_testkit.fakecluster import FakeCluster
from mqctl_testkit.fakemodel import Cluster, concurrent_hashmap_order, hashset_order, java_hash, tags_code
from mqctl_testkit.live_scenario import MINUTE, NOW, T0, TAGS, Run, build_model, run_batch, ts

# G1's rows in mqadmin's order (topic, broker, queue id), by hand from the scenario: broker and
# consumer offsets, inflight (pull - consumer), min offset, the offset of the last consumed
# message (None: nothing consumed, or expired) and of the first unconsumed one (None: no lag).
G1_ROWS = [
    ("%RETRY%G1", "broker-a", 0, 2, 1, 0, 0, 0, 1),
    ("%RETRY%G1", "broker-b", 0, 0, 0, 0, 0, None, None),
    ("Orders", "broker-a", 0, 25, 3, 3, 0, 2, 3),
    ("Orders", "broker-a", 1, 12, 2, 3, 4, None, 4),  # committed below min 4: message 1 expired
    ("Orders", "broker-b", 0, 8, 8, 0, 0, 7, None),
    ("Orders", "broker-b", 1, 0, 0, 0, 0, None, None),
]
G1_TPS = "1.63"  # 1.5 + 0.125 = 1.625: Java's %.2f rounds half up (Python's gives 1.62)
IPS = {
    ("Orders", "broker-a", 0): "10.0.0.5",
    ("Orders", "broker-a", 1): "10.0.0.5",
    ("Orders", "broker-b", 0): "10.0.0.6",
}
RESET_AT = "2025-12-31#22:05:00:500"  # T0 + 5 min 0.5 s, UTC (the runs have TZ=UTC)
# Every topic queue 0..3 on both brokers; the name server lists broker-b first, so mqadmin's
# HashSet holds a3, b3, a2, b0, b2, a1, b1, a0 (mqadmin.md 7.3, the correction) and AVG gives:
ALLOCATION = (
    '{"result":{"192.168.1.100":[{"brokerName":"broker-b","queueId":1,"topic":"TopicTest"},'
    '{"brokerName":"broker-a","queueId":0,"topic":"TopicTest"}],"10.0.0.2":[{"brokerName":"broker-b",'
    '"queueId":0,"topic":"TopicTest"},{"brokerName":"broker-b","queueId":2,"topic":"TopicTest"},'
    '{"brokerName":"broker-a","queueId":1,"topic":"TopicTest"}],"10.0.0.1":[{"brokerName":"broker-a",'
    '"queueId":3,"topic":"TopicTest"},{"brokerName":"broker-b","queueId":3,"topic":"TopicTest"},'
    '{"brokerName":"broker-a","queueId":2,"topic":"TopicTest"}]}}\n'
)


@pytest.fixture(scope="module")
def cluster() -> Iterator[FakeCluster]:
    c = FakeCluster(build_model())
    yield c
    c.close()


@pytest.fixture(scope="module")
def runs(cluster: FakeCluster) -> dict[str, Run]:
    n, now = ["-n", cluster.ns], ["--now-ms", str(NOW)]
    g1 = ["consumerProgress", "-g", "G1", *n]
    cases = {
        "plain": [*g1, "-o", "plain"],
        "json": [*g1, "-o", "json", *now, "--tags", "TagA || Aa"],
        "ips": [*g1, "-o", "plain", "-s", "true"],
        "verify": [*g1, "-o", "json", *now, "--tags", "TagA || Aa", "--verify-tags"],
        "topic": [*g1, "-o", "plain", "-t", "Orders"],
        "groups_plain": ["consumerProgress", *n, "-o", "plain"],
        "groups_json": ["consumerProgress", *n, "-o", "json"],
        "connection": ["consumerConnection", "-g", "G1", *n, "-o", "plain"],
        "reset": ["resetOffsetByTime", "-g", "G1", "-t", "Orders", "-s", RESET_AT, *n, "--output", "json"],
        "allocate": ["allocateMQ", *"-t TopicTest -i 10.0.0.1,10.0.0.2,192.168.1.100 -o plain".split(), *n],
    }
    return run_batch({k: (v, None) for k, v in cases.items()})


def ok(run: Run) -> Run:
    assert run.code == 0, run.err
    assert "Traceback" not in run.err and "mqctl: error" not in run.err, run.err
    return run


def utc(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def progress_line(cells: list[object], ip: str | None = None) -> str:
    """mqadmin 5.x: "%-64s  %-32s  %-4d  %-20d  %-20d  [%-20s ]%-20d %-20d %s%n" (mqadmin.md 3.3)."""
    topic, broker, qid, bo, co, diff, inflight, last = cells
    ip_cell = "" if ip is None else f"{ip:<20} "
    return f"{topic:<64}  {broker:<32}  {qid:<4}  {bo:<20}  {co:<20}  {ip_cell}{diff:<20} {inflight:<20} {last}\n"


def g1_plain(model: Cluster, *, with_ips: bool) -> str:
    head = ["#Topic", "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset"]
    ip_head = f"{'#Client IP':<20} " if with_ips else ""
    text = "  ".join(f"{h:<{w}}" for h, w in zip(head, (64, 32, 4, 20, 20)))
    text += f"  {ip_head}{'#Diff':<20} {'#Inflight':<20}#LastTime\n"
    for topic, broker, qid, bo, co, inflight, _mn, last, _first in G1_ROWS:
        when = "N/A" if last is None else utc(ts(model, broker, topic, qid, last))
        ip = IPS.get((topic, broker, qid), "N/A") if with_ips else None
        text += progress_line([topic, broker, qid, bo, co, bo - co, inflight, when], ip)
    diff, inflight = sum(r[3] - r[4] for r in G1_ROWS), sum(r[5] for r in G1_ROWS)
    return text + f"\nConsume TPS: {G1_TPS}\nConsume Diff Total: {diff}\nConsume Inflight Total: {inflight}\n"


def test_progress_plain_is_mqadmins_layout_with_the_brokers_numbers(runs, cluster) -> None:
    assert ok(runs["plain"]).out == g1_plain(cluster.model, with_ips=False)
    assert Decimal("1.625").quantize(Decimal("0.01"), ROUND_HALF_UP) == Decimal(G1_TPS)


def test_progress_json_rows(runs, cluster) -> None:
    doc = json.loads(ok(runs["json"]).out)
    assert (doc["schema"], doc["backend"], doc["group"], doc["nowMs"]) == (
        "mqctl/consumerProgress/v1",
        "live",
        "G1",
        NOW,
    )
    model, got = cluster.model, doc["rows"]
    assert [(r["topic"], r["brokerName"], r["queueId"]) for r in got] == [r[:3] for r in G1_ROWS]
    for row, (topic, broker, qid, bo, co, inflight, mn, last, first) in zip(got, G1_ROWS):
        oldest = 0 if first is None else ts(model, broker, topic, qid, first)
        want = {
            "brokerOffset": bo,
            "consumerOffset": co,
            "diff": bo - co,
            "lag": max(bo - co, 0),
            "inflight": inflight,
            "minOffset": mn,
            "lastTimestamp": 0 if last is None else ts(model, broker, topic, qid, last),
            "oldestUnconsumedTimestamp": oldest,
            "lagMs": NOW - oldest if oldest else 0,
            "belowMin": co < mn,
        }
        assert {k: row[k] for k in want} == want, (topic, broker, qid)
    assert doc["totals"]["diff"] == 33 and doc["totals"]["inflight"] == 6
    assert doc["totals"]["consumeTps"] == 1.625
    assert doc["totals"]["maxLagMs"] == NOW - (T0 + 5000 + 60_000)  # %RETRY%G1 a/0, message 1


def test_show_client_ip_comes_from_the_clients_running_info(runs, cluster) -> None:
    assert ok(runs["ips"]).out == g1_plain(cluster.model, with_ips=True)
    # one 307 per online client, each naming its client id
    asked = [r.ext_fields["clientId"] for s in cluster.servers() for r in s.requests if r.code == 307]
    assert set(asked) == {"10.0.0.5@1111", "10.0.0.6@2222"}


def _expected_matches(model: Cluster, exact: bool) -> dict[tuple[str, str, int], int]:
    """Unconsumed messages of each row whose tag matches "TagA || Aa": by the tag's Java hash (so
    BB, which shares Aa's hash, counts) or, ``exact``, by the tag itself."""
    wanted = {"TagA", "Aa"}
    hashes = {java_hash(t) for t in wanted}
    out = {}
    for topic, broker, qid, bo, co, _i, mn, _l, _f in G1_ROWS:
        msgs = model.broker(broker).topics[topic].queues[qid].msgs
        span = range(max(co, mn), bo)
        out[(topic, broker, qid)] = sum(
            1
            for i in span
            if msgs[i].tags is not None
            and (msgs[i].tags in wanted if exact else tags_code(msgs[i].tags) in hashes)
        )
    return out


def test_tags_count_every_unit_across_consume_queue_files(runs, cluster) -> None:
    assert java_hash("Aa") == java_hash("BB") and "BB" in TAGS
    doc = json.loads(ok(runs["json"]).out)
    want = _expected_matches(cluster.model, exact=False)
    got = {(r["topic"], r["brokerName"], r["queueId"]): r["matchedDiff"] for r in doc["rows"]}
    assert got == want and want[("Orders", "broker-a", 0)] == 13  # offsets 3..24 span 3 files of 10
    assert doc["totals"]["matchedDiff"] == sum(want.values())
    assert doc["tags"] == "Aa || TagA"


def test_verify_tags_drops_the_hash_collisions(runs, cluster) -> None:
    doc = json.loads(ok(runs["verify"]).out)
    exact, by_hash = (
        _expected_matches(cluster.model, exact=True),
        _expected_matches(cluster.model, exact=False),
    )
    got = {(r["topic"], r["brokerName"], r["queueId"]): r["matchedDiff"] for r in doc["rows"]}
    assert got == exact
    assert doc["totals"]["tagHashCollisions"] == sum(by_hash.values()) - sum(exact.values()) == 5


def test_topic_restricts_the_rows(runs) -> None:
    out = ok(runs["topic"]).out
    rows = [line.split() for line in out.split("\n\n")[0].splitlines()[1:]]
    assert [(r[0], r[1], int(r[2])) for r in rows] == [r[:3] for r in G1_ROWS if r[0] == "Orders"]
    assert "Consume Diff Total: 32\n" in out  # 22 + 10, without the retry topic's 1


# --- the groups overview -----------------------------------------------------------------------

# group -> (count, version name, type, model, int(tps), diff total, foundIn), by hand
GROUPS = {
    "G1": (2, "V5_3_2", "PUSH", "CLUSTERING", 1, 33, ["retryTopic", "offsets"]),  # min(479, 477)
    "G2": (0, "OFFLINE", "", "", 0, 5 + 12, ["retryTopic", "offsets"]),
    "G3": (0, "OFFLINE", "", "", 0, 5, ["offsets"]),  # no %RETRY% topic: mqadmin misses it
    "G4": (0, "OFFLINE", "", "", 0, 0, ["subscriptionGroup"]),
}


def test_overview_plain_is_mqadmins_groups_in_mqadmins_order(runs, cluster) -> None:
    retry = [
        t[len("%RETRY%") :] for t in hashset_order(cluster.model.topic_names()) if t.startswith("%RETRY%")
    ]
    order = retry  # G3, G4 (only the offset / subscription tables know them): not in mqadmin's list
    head = f"{'#Group':<64}  {'#Count':<6}  {'#Version':<24} {'#Type':<5}  {'#Model':<14}  {'#TPS':<7}  #Diff Total\n"
    rows = "".join(
        f"{g:<64}  {c:<6}  {v:<24} {t:<5}  {m:<14}  {tps:<7}  {d}\n"
        for g in order
        for c, v, t, m, tps, d, _f in [GROUPS[g]]
    )
    assert ok(runs["groups_plain"]).out == head + rows  # system groups (TOOLS_CONSUMER...) left out


def test_overview_json_marks_where_each_group_was_found(runs) -> None:
    doc = json.loads(ok(runs["groups_json"]).out)
    got = {r["group"]: (r["count"], r["diffTotal"], r["foundIn"]) for r in doc["rows"]}
    assert got == {g: (v[0], v[5], v[6]) for g, v in GROUPS.items()}
    assert [r["group"] for r in doc["rows"]] == ["G1", "G2", "G3", "G4"]  # largest lag first
    assert doc["totals"] == {"groups": 4, "diffTotal": 55}


# --- consumerConnection, resetOffsetByTime, allocateMQ ------------------------------------------


def test_consumer_connection_plain_byte_for_byte(runs, cluster) -> None:
    online = cluster.model.online["G1"]
    text = f"{'#ClientId':<36} {'#ClientAddr':<22} {'#Language':<10} #Version\n"
    text += f"{'10.0.0.5@1111':<36} {'10.0.0.5:50001':<22} {'JAVA':<10} V5_3_3\n"
    text += f"{'10.0.0.6@2222':<36} {'10.0.0.6:50002':<22} {'JAVA':<10} V5_3_2\n"
    text += f"\nBelow is subscription:\n{'#Topic':<20} #SubExpression\n"
    for topic in concurrent_hashmap_order(list(online.subscriptions)):
        text += f"{topic:<20} {online.subscriptions[topic]}\n"
    text += "\nConsumeType: CONSUME_PASSIVELY\nMessageModel: CLUSTERING\nConsumeFromWhere: CONSUME_FROM_LAST_OFFSET\n"
    assert ok(runs["connection"]).out == text


def test_reset_dry_run_targets_come_from_the_brokers_search(runs, cluster) -> None:
    at = T0 + 5 * MINUTE + 500
    # (broker, queue) -> committed, target (the first message stored at or after `at`; message i
    # of a/0 is stored at T0 + i min, of a/1 at T0 + 1 s + i min, of b/0 at T0 + 2 s + i min; b/1
    # is empty) and the target's store time (-1: no message there)
    want = {
        ("broker-a", 0): (3, 6, T0 + 6 * MINUTE),
        ("broker-a", 1): (2, 5, T0 + 1000 + 5 * MINUTE),
        ("broker-b", 0): (8, 5, T0 + 2000 + 5 * MINUTE),
        ("broker-b", 1): (0, 0, -1),
    }
    for (b, q), (_cur, target, _ts) in want.items():  # the fake answers 29 with the same targets
        assert cluster.model.broker(b).topics["Orders"].queues[q].search_lower(at) == target
    doc = json.loads(ok(runs["reset"]).out)
    assert doc["executed"] is False and doc["target"]["value"] == at
    got = {
        (r["brokerName"], r["queueId"]): (r["currentOffset"], r["targetOffset"], r["targetTimestamp"])
        for r in doc["rows"]
    }
    assert got == want
    assert all(r["delta"] == r["targetOffset"] - r["currentOffset"] for r in doc["rows"])
    assert all(29 in s.codes() for s in cluster.brokers.values())  # SEARCH_OFFSET_BY_TIMESTAMP asked


def test_allocate_mq_with_a_name_server(runs, cluster) -> None:
    assert ok(runs["allocate"]).out == ALLOCATION
