"""Scenario 2: ``mqctl allocateMQ -o plain`` is byte-identical to ``mqadmin allocateMQ``."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from compat_harness import RocketMQ

pytestmark = pytest.mark.compat

TEN_IPS = ",".join(f"10.0.{i // 4}.{i * 7 % 250}" for i in range(10))
CASES = [
    # two brokers x 4 queues (spec 7.3's worked example ip list)
    ("TopicProgress", "10.0.0.1,10.0.0.2,192.168.1.100"),
    ("TopicProgress", "10.0.0.1"),
    # more ips than queues: the last ones get []
    ("TopicProgress", TEN_IPS),
    # duplicates are kept in cidAll (index = first occurrence), the map keeps one key
    ("TopicProgress", "10.0.0.2,10.0.0.1,10.0.0.2"),
    # 3 queues on broker-a, 5 on broker-b
    ("TopicAlloc", "c1,c2,c3"),
    # broker-a's queues are write-only (perm 2): not readable, not allocated
    ("TopicWriteOnly", "x,y"),
]


def test_allocate_plain_equals_mqadmin(cluster: RocketMQ, fidelity) -> None:
    # Two JVMs at a time: each mqadmin call is a ~2-4 s JVM start.
    with ThreadPoolExecutor(max_workers=2) as pool:
        theirs = list(pool.map(lambda c: cluster.mqadmin_ok("allocateMQ", "-t", c[0], "-i", c[1]), CASES))
    ok = True
    for (topic, ips), expected in zip(CASES, theirs):
        assert expected.startswith('{"result":{'), expected
        proc = cluster.mqctl("allocateMQ", "-t", topic, "-i", ips, "-o", "plain")
        ok &= fidelity.check(f"allocateMQ -t {topic} -i {ips} exit", proc.returncode, 0)
        ok &= fidelity.check(f"allocateMQ -t {topic} -i {ips} stdout", proc.stdout, expected)
    assert ok, "allocateMQ output differs from mqadmin, see the fidelity section"


def test_allocate_empty_ip_item_fails_like_mqadmin(cluster: RocketMQ) -> None:
    # mqadmin: "currentCID is empty" inside a stack trace, exit 0 (spec 7.3); mqctl must fail visibly.
    proc = cluster.mqadmin("allocateMQ", "-t", "TopicProgress", "-i", "a,,b")
    assert "currentCID is empty" in proc.stdout + proc.stderr
    ours = cluster.mqctl("allocateMQ", "-t", "TopicProgress", "-i", "a,,b", "-o", "plain")
    assert ours.returncode != 0
    assert ours.stdout == ""
