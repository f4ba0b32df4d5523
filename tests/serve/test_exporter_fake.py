"""The exporter's rounds and its /metrics against the fake cluster (real frames, live backend):
values worked out by hand from tests/mqctl_testkit/live_scenario.py's model, a broker dropping
out mid-run (its up goes to 0, the other broker's series stay, no alert flaps), the name server
gone (the last complete round stays served), and no scrape mixing two rounds."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from mqctl_testkit.fakecluster import FakeCluster
from mqctl_testkit.live_scenario import build_model

pytest.importorskip("prometheus_client")

from prometheus_client.exposition import generate_latest  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from mqctl.backends.live import LiveBackend  # noqa: E402
from mqctl.model import Rules  # noqa: E402
from mqctl.ops.alertrules import A_LAG, AlertBook, AlertConfig, Thresholds  # noqa: E402
from mqctl.ops.watch.fleet import FleetSampler  # noqa: E402
from mqctl.serve.families import Shape  # noqa: E402
from mqctl.serve.metrics import RoundCollector, registry_for  # noqa: E402

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@pytest.fixture()
def cluster() -> Iterator[FakeCluster]:
    c = FakeCluster(build_model())
    yield c
    c.close()


def scrape(collector: RoundCollector) -> Samples:
    text = generate_latest(registry_for(collector)).decode()
    out: Samples = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def q(name: str, group: str, topic: str, broker: str, qid: int) -> tuple[str, tuple[tuple[str, str], ...]]:
    return (
        name,
        tuple(sorted({"group": group, "topic": topic, "broker": broker, "queue_id": str(qid)}.items())),
    )


def g(name: str, **labels: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    return (name, tuple(sorted(labels.items())))


def test_round_values_are_the_clusters(cluster: FakeCluster) -> None:
    collector = RoundCollector(Shape(), "test")
    with LiveBackend(cluster.ns, timeout=10) as b:
        sampler = FleetSampler(b, Rules(window=3, min_frozen_ms=0))
        collector.publish(sampler.take())
    m = scrape(collector)
    # G1 on Orders: broker-a q0 holds 25, committed 3, pulled to 6; q1 holds 12 (min 4), committed
    # 2; broker-b q0 holds 8, committed 8 (live_scenario.py).
    assert m[q("mqctl_queue_lag_messages", "G1", "Orders", "broker-a", 0)] == 22
    assert m[q("mqctl_queue_lag_messages", "G1", "Orders", "broker-a", 1)] == 10
    assert m[q("mqctl_queue_lag_messages", "G1", "Orders", "broker-b", 0)] == 0
    assert m[q("mqctl_queue_min_offset", "G1", "Orders", "broker-a", 1)] == 4
    assert m[q("mqctl_queue_inflight_messages", "G1", "Orders", "broker-a", 0)] == 3
    # G1's client subscribes Orders with "TagA || TagB"; tags cycle TagA, Aa, TagB, BB, -, TagA,
    # TagC: offsets 3..24 of q0 hold TagA/TagB at i % 7 in (0, 2, 5): 7 14 21, 9 16 23, 5 12 19.
    fl = ("mqctl_queue_filtered_lag_messages", "G1", "Orders", "broker-a")
    assert m[(fl[0], tuple(sorted({**dict(q(*fl, 0)[1]), "expression": "TagA || TagB"}.items())))] == 9
    # q1 from its min 4 (committed 2 lies below): 4..11 -> 5, 7, 9
    assert m[(fl[0], tuple(sorted({**dict(q(*fl, 1)[1]), "expression": "TagA || TagB"}.items())))] == 3
    assert m[g("mqctl_group_lag_messages", group="G1")] == 22 + 10
    assert m[g("mqctl_group_members_online", group="G1")] == 2
    assert m[g("mqctl_group_members_online", group="G2")] == 0
    # G2 on TopicTest: broker-a 3,1,0,3 of 3 each -> 0+2+3+0; broker-b none of 3 each -> 12
    assert m[g("mqctl_group_lag_messages", group="G2")] == 17
    assert m[g("mqctl_group_status", group="G1", mqctl_group_status="OK")] == 1
    assert m[g("mqctl_broker_up", broker="broker-a")] == 1 and m[g("mqctl_broker_up", broker="broker-b")] == 1
    assert m[g("mqctl_round_requests")] > 0


def test_a_broker_down_mid_run(cluster: FakeCluster) -> None:
    collector = RoundCollector(Shape(), "test")
    quiet = Thresholds(max_status=None)
    book = AlertBook(AlertConfig(quiet, groups={"G2": Thresholds(max_lag=10, max_status=None)}))
    with LiveBackend(cluster.ns, timeout=3, request_timeout=1) as b:
        sampler = FleetSampler(b, Rules(window=3, min_frozen_ms=0))
        for _ in range(2):
            rnd = sampler.take()
            collector.publish(rnd)
            book.update(rnd)
        fired = [a for a in book.current() if a.firing]
        assert [dict(a.labels)["alertname"] for a in fired] == [A_LAG]
        cluster.broker("broker-b").down()
        rnd = sampler.take()
        collector.publish(rnd)
        book.update(rnd)
    m = scrape(collector)
    assert m[g("mqctl_broker_up", broker="broker-b")] == 0
    assert m[g("mqctl_broker_up", broker="broker-a")] == 1
    assert m[g("mqctl_round_errors_total", broker="broker-b", reason="unreachable")] == 1
    # broker-a's series stay, broker-b's are gone (unknown now, not zero)
    assert m[q("mqctl_queue_lag_messages", "G2", "TopicTest", "broker-a", 2)] == 3
    assert q("mqctl_queue_lag_messages", "G2", "TopicTest", "broker-b", 0) not in m
    # G2's lag alert does not resolve for a gap in the data: same alert, still firing
    assert [(a.labels, a.starts_ms, a.firing) for a in book.current()] == [
        (fired[0].labels, fired[0].starts_ms, True)
    ]
    # both brokers gone, the name server still up: no group can be read; nothing resolves
    with LiveBackend(cluster.ns, timeout=3, request_timeout=1) as b2:
        cluster.broker("broker-a").down()
        rnd = FleetSampler(b2, Rules(window=3)).take()
    assert {x.group for x in rnd.groups if x.tick is None and x.failure} >= {"G1", "G2"}
    assert set(rnd.down) == {"broker-a", "broker-b"}
    book.update(rnd)
    assert [(a.labels, a.starts_ms, a.firing) for a in book.current()] == [
        (fired[0].labels, fired[0].starts_ms, True)
    ]


def test_name_servers_away_the_rounds_go_on_with_what_was_learnt(cluster: FakeCluster) -> None:
    """A name server restart must not stall the exporter while the brokers answer: the rounds go
    on with the routes, brokers and topic list learnt before (as a Java client keeps its route
    table), said once. (Before: every round failed until a name server answered.)"""
    collector = RoundCollector(Shape(), "test")
    with LiveBackend(cluster.ns, timeout=3, request_timeout=1) as b:
        sampler = FleetSampler(b, Rules(window=3))
        collector.publish(sampler.take())
        before = scrape(collector)
        for s in cluster.namesrvs:
            s.down()
        rounds = [sampler.take() for _ in range(2)]
        for rnd in rounds:
            collector.publish(rnd)
    after = scrape(collector)
    assert all(rnd.complete and not rnd.down for rnd in rounds)
    said = [[w for w in rnd.warnings if "name server" in w] for rnd in rounds]
    assert len(said[0]) == 1 and "Connection refused" in said[0][0] and said[1] == []
    assert after[g("mqctl_last_round_success")] == 1 and after[g("mqctl_rounds_total")] == 3

    def queues(m: dict) -> dict:  # every queue series; lag in seconds grows with the clock
        return {
            k: (None if k[0] == "mqctl_queue_lag_seconds" else v)
            for k, v in m.items()
            if k[0].startswith("mqctl_queue_")
        }

    assert queues(after) and queues(after) == queues(before)


def test_a_round_that_cannot_be_taken_leaves_the_last_one_served(cluster: FakeCluster) -> None:
    from mqctl.errors import MqctlError

    collector = RoundCollector(Shape(), "test")
    with LiveBackend(cluster.ns, timeout=3, request_timeout=1) as b:
        collector.publish(FleetSampler(b, Rules(window=3)).take())
    before = scrape(collector)
    for s in cluster.servers():
        s.down()
    # a backend that never learnt the cluster (the exporter started while it was away)
    with LiveBackend(cluster.ns, timeout=3, request_timeout=1) as b, pytest.raises(MqctlError) as e:
        FleetSampler(b, Rules(window=3)).take()
    collector.failed(e.value)
    after = scrape(collector)
    assert after[g("mqctl_last_round_success")] == 0
    assert after[g("mqctl_round_errors_total", broker="", reason="unreachable")] == 1
    assert after[g("mqctl_rounds_total")] == 2
    same = {k: v for k, v in after.items() if k[0].startswith("mqctl_queue_")}
    assert same and same == {k: v for k, v in before.items() if k[0].startswith("mqctl_queue_")}


def test_no_scrape_mixes_two_rounds(cluster: FakeCluster) -> None:
    """Each round moves G3's two committed offsets together (q0 = k, q1 = k + 4); a scraper
    hammering /metrics meanwhile must always see them from one round."""
    collector = RoundCollector(Shape(), "test")
    a = cluster.model.broker("broker-a")
    seen: list[float] = []
    stop = threading.Event()

    def scraper() -> None:
        while not stop.is_set():
            m = scrape(collector)
            c0 = m.get(q("mqctl_queue_consumer_offset", "G3", "Orders", "broker-a", 0))
            c1 = m.get(q("mqctl_queue_consumer_offset", "G3", "Orders", "broker-a", 1))
            if c0 is not None:
                seen.append(c1 - c0)  # type: ignore[operator]

    t = threading.Thread(target=scraper)
    with LiveBackend(cluster.ns, timeout=10) as b:
        sampler = FleetSampler(b, Rules(window=3))
        t.start()
        for k in range(8):
            a.offsets["G3"]["Orders"] = {0: k, 1: k + 4}
            collector.publish(sampler.take())
            time.sleep(0.02)
        stop.set()
        t.join()
    assert seen and set(seen) == {4.0}


def test_compat_families_carry_rocketmq_exporters_names_and_labels(cluster: FakeCluster) -> None:
    collector = RoundCollector(Shape(compat=True, cluster="DefaultCluster"), "test")
    with LiveBackend(cluster.ns, timeout=10) as b:
        collector.publish(FleetSampler(b, Rules()).take())
    m = scrape(collector)
    diff = {"countOfOnlineConsumers": "0", "msgModel": "1"}
    # its computeTotalDiff: the plain sum of broker - consumer offsets per (group, topic)
    assert m[g("rocketmq_group_diff", group="G2", topic="TopicTest", **diff)] == 0 + 2 + 3 + 0 + 4 * 3
    assert m[g("rocketmq_group_diff", group="G3", topic="Orders", **diff)] == 5 + 0
    assert (
        m[g("rocketmq_group_diff", group="G1", topic="Orders", countOfOnlineConsumers="2", msgModel="1")]
        == 32
    )
    assert (
        m[
            g(
                "rocketmq_group_retrydiff",
                group="G1",
                topic="%RETRY%G1",
                countOfOnlineConsumers="2",
                msgModel="1",
            )
        ]
        == 1
    )
    per = {"cluster": "DefaultCluster", "group": "G1", "topic": "Orders"}
    assert m[g("rocketmq_consumer_offset", broker="broker-a", **per)] == 3 + 2
    assert (
        m[g("rocketmq_producer_offset", broker="broker-a", cluster="DefaultCluster", topic="Orders")]
        == 25 + 12
    )


def test_thresholds_naming_no_group_of_the_cluster_are_said(cluster: FakeCluster) -> None:
    """The fake cluster has G1 and G2. A profile table for a misspelt group (G1x) would leave G1 on
    the defaults in silence; one for a group --group-deny leaves out would never apply: each is
    said once, after the first complete round. G1's own table is not mentioned."""
    import re

    from mqctl.ops.alertrules import parse_config
    from mqctl.ops.watch.fleet import FleetFilter
    from mqctl.serve.exporter import ExporterOptions, run

    table = {"groups": {"G1": {"max_lag": 5}, "G1x": {"max_lag": 5}, "G2": {"max_lag": 5}, "Zz": {}}}
    config = parse_config(table, "profiles.p.exporter")
    opts = ExporterOptions(
        listen="127.0.0.1:0",
        interval_s=0.1,
        config=config,
        only=FleetFilter(group_deny=re.compile("^G2$")),
        rounds=2,
    )
    said: list[str] = []
    with LiveBackend(cluster.ns, timeout=10) as b:
        run(b, opts, warn=said.append)
    assert said == [
        "profiles.p.exporter.groups.G1x: the cluster has no such group (did you mean 'G1'?); "
        "its thresholds apply to nothing yet",
        "profiles.p.exporter.groups.G2: --group-allow/--group-deny leave this group out; "
        "its thresholds apply to nothing",
        "profiles.p.exporter.groups.Zz: the cluster has no such group; its thresholds apply to nothing yet",
    ]
