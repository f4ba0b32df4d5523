"""RocketMQ 5 as deployed: a rocketmq-proxy in front of the session cluster and gRPC clients
(rocketmq-client-java 5.x) consuming in POP mode, compared with mqadmin and with mqctl.

Smoke scenario of the proxy harness (matrix_proxy.py). It asserts only what holds today on the
real broker (POP commits the consumer offset when it pops, not when the client acknowledges;
mqctl's offsets equal mqadmin's) and keeps what both tools print for a POP group in
``logs/<version>/pop-captures/`` (mqadmin consumerProgress with and without -t, consumerConnection
through the brokers and through the proxy, the overview; mqctl's the same), where the facts about
POP are read from. 4.x has no proxy and no POP: skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import versions
from compat_harness import LOG_DIR, RocketMQ, parse_consumer_progress
from matrix_proxy import GrpcRun, Proxy, enable_pop

pytestmark = pytest.mark.compat

TOPIC = "TopicPop"
GROUP = "GroupPop"
BROKERS = ("broker-a", "broker-b")
MESSAGES = 40  # i -> queue i % 4 of BROKERS[(i // 4) % 2]: 5 per queue
FIRST_ACKED = 24
# Sent after the first consumer stopped, never acknowledged: popped, invisible, then back through
# the group's POP retry topic.
STUCK_KEY = "pop-stuck"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"compat proxy scenario cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def _proxy_classpath(version: versions.RmqVersion) -> None:
    if versions.proxy_classpath_ready(version):
        return
    if shutil.which("mvn") is None:
        _unavailable(f"no proxy/gRPC client classpath for {version} and no Maven")
    script = Path(__file__).with_name("fetch-classpath.sh")
    proc = subprocess.run(["bash", str(script), version.name], capture_output=True, text=True)
    if proc.returncode != 0 or not versions.proxy_classpath_ready(version):
        _unavailable(f"fetch-classpath.sh failed: {(proc.stderr or proc.stdout).strip()[-300:]}")


@pytest.fixture(scope="module")
def proxy(cluster: RocketMQ) -> Iterator[Proxy]:
    """A CLUSTER-mode proxy in front of the session cluster, whose brokers now run POP."""
    if cluster.version.proxy is None:
        pytest.skip(f"RocketMQ {cluster.version} has no proxy and no POP consumption (5.x only)")
    _proxy_classpath(cluster.version)
    t0 = time.monotonic()
    enable_pop(cluster)
    cluster.admin(*(f"topic:{TOPIC}:4:{b}" for b in BROKERS), f"group:{GROUP}:{'+'.join(BROKERS)}")
    p = Proxy(cluster)
    p.start()
    print(f"\nproxy {cluster.version}: brokers with POP + proxy up in {time.monotonic() - t0:.0f} s")
    try:
        yield p
    finally:
        p.stop()
        dest = LOG_DIR / cluster.version.name / "pop-captures"
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "proxy-log-tail.txt").write_text(p.log_tail(400))


class Captures:
    """What the tools printed, one file per command, in logs/<version>/pop-captures/."""

    def __init__(self, version: str) -> None:
        self.dir = LOG_DIR / version / "pop-captures"
        self.dir.mkdir(parents=True, exist_ok=True)

    def keep(self, name: str, proc: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
        text = f"$ {' '.join(map(str, proc.args))}\n# exit {proc.returncode}\n{proc.stdout}"
        if proc.stderr:
            text += "# stderr:\n" + proc.stderr
        (self.dir / f"{name}.txt").write_text(text)
        return proc


def _plan() -> list[str]:
    return [
        f"send {'TagA' if i % 2 == 0 else 'TagB'} pop-{i} {i % 4} {BROKERS[(i // 4) % 2]}"
        for i in range(MESSAGES)
    ]


def _mqadmin_rows(
    cluster: RocketMQ, cap: Captures, name: str, topic: str
) -> dict[tuple[str, int], tuple[int, int]]:
    proc = cap.keep(name, cluster.mqadmin("consumerProgress", "-g", GROUP, "-t", topic))
    rows, _ = parse_consumer_progress(proc.stdout)
    return {(r.broker, r.queue_id): (r.broker_offset, r.consumer_offset) for r in rows if r.topic == topic}


def _mqctl(cluster: RocketMQ, cap: Captures, name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return cap.keep(name, cluster.mqctl(*args, "-n", cluster.namesrv_addr, stores=[]))


def _popped_per_queue(*runs: GrpcRun) -> Counter[tuple[str, int]]:
    """Distinct messages each queue of the topic handed out (retry deliveries not counted)."""
    seen = {(e.broker, e.queue_id, e.offset) for run in runs for e in run.received if not e.retry}
    return Counter((b, q) for b, q, _ in seen)


def test_pop_consumer_through_proxy(cluster: RocketMQ, proxy: Proxy, fidelity, tmp_path: Path) -> None:
    t0 = time.monotonic()
    cap = Captures(cluster.version.name)
    sent = cluster.produce(TOPIC, _plan())
    assert len(sent) == MESSAGES
    per_queue = Counter((m.broker, m.queue_id) for m in sent)

    # 1. A SimpleConsumer acknowledges the first 24 messages the broker hands out.
    first = proxy.grpc_consume("simple", TOPIC, GROUP, max_messages=FIRST_ACKED, options=["batch=4"])
    assert len(first.acked) == FIRST_ACKED and len(first.received) == FIRST_ACKED, first.stdout[-2000:]
    assert all(e.offset >= 0 and not e.retry for e in first.received)
    popped = _popped_per_queue(first)
    # POP hands out every queue from its start, in order: queue q gave offsets 0..n-1.
    for (b, q), n in popped.items():
        assert {e.offset for e in first.received if (e.broker, e.queue_id) == (b, q)} == set(range(n))
    theirs = _mqadmin_rows(cluster, cap, "mqadmin-consumerProgress-t-after-24", TOPIC)
    assert set(theirs) == {(b, q) for b in BROKERS for q in range(4)}
    for key, (broker_offset, consumer_offset) in theirs.items():
        assert broker_offset == per_queue[key]
        # the broker's committed offset = what the client received from that queue
        fidelity.check(
            f"pop: committed offset of {key} = messages the client got", popped.get(key, 0), consumer_offset
        )
        assert consumer_offset == popped.get(key, 0)

    # mqadmin without -t looks up the route of %RETRY%<group>, which no gRPC client creates.
    cap.keep("mqadmin-consumerProgress-g", cluster.mqadmin("consumerProgress", "-g", GROUP))

    # 2. A second SimpleConsumer in the background never acknowledges STUCK_KEY: it stops once that
    #    message came twice (popped, invisible 10 s, revived into the retry topic, popped again).
    sent += cluster.produce(TOPIC, [f"send TagA {STUCK_KEY} 0 broker-a"])
    per_queue = Counter((m.broker, m.queue_id) for m in sent)
    stop = tmp_path / "stop-consumer"
    bg = proxy.grpc_consumer_start(
        "simple", TOPIC, GROUP, stop_file=stop, options=[f"noack={STUCK_KEY}", "invisible=10", "rounds=2"]
    )
    try:
        time.sleep(6)
        cap.keep("mqadmin-consumerConnection-g", cluster.mqadmin("consumerConnection", "-g", GROUP))
        at_proxy = f"127.0.0.1:{proxy.remoting_port}"
        conn = cap.keep(
            "mqadmin-consumerConnection-g-b-proxy",
            cluster.mqadmin("consumerConnection", "-g", GROUP, "-b", at_proxy),
        )
        _mqctl(cluster, cap, "mqctl-consumerConnection-g", "consumerConnection", "-g", GROUP, "-o", "plain")
        second = proxy.grpc_consumer_finish(bg, stop, timeout=90, stop=False)
    finally:
        if bg.poll() is None:
            stop.touch()
            bg.kill()
    # The proxy answers GET_CONSUMER_CONNECTION_LIST from its own table: the gRPC client is there.
    assert "CONSUME_ACTIVELY" in conn.stdout and "JAVA" in conn.stdout, conn.stdout + conn.stderr

    stuck = [e for e in second.received if e.keys == STUCK_KEY]
    assert [e.attempt for e in stuck] == [1, 2], second.stdout[-3000:]
    # The redelivery came from the POP retry topic: v1 (%RETRY%<group>_<topic>) unless the broker
    # has enableRetryTopicV2 (default false in 5.3.3 and 5.5.1).
    assert [e.topic_type for e in stuck] == ["0", "1"]
    assert not any(e.keys == STUCK_KEY for e in second.acked)
    all_popped = _popped_per_queue(first, second)
    assert all_popped == per_queue

    # 3. Every message was popped, one was never acknowledged: the committed offsets say "done"
    #    (the broker commits a popped range once its checkpoint is stored: give it a few seconds).
    for _ in range(10):
        theirs = _mqadmin_rows(cluster, cap, "mqadmin-consumerProgress-t-after-stuck", TOPIC)
        if all(c == b for b, c in theirs.values()):
            break
        time.sleep(1)
    assert theirs == {key: (n, n) for key, n in per_queue.items()}
    doc = json.loads(
        _mqctl(
            cluster, cap, "mqctl-consumerProgress-g-json", "consumerProgress", "-g", GROUP, "-o", "json"
        ).stdout
    )
    ours = {
        (r["brokerName"], r["queueId"]): (r["brokerOffset"], r["consumerOffset"])
        for r in doc["rows"]
        if r["topic"] == TOPIC
    }
    for key, value in theirs.items():
        fidelity.check(f"pop: mqctl consumerProgress {TOPIC} {key}", ours.get(key), value)
    assert ours == theirs

    # The name server learns the retry topic at the broker's next registration (up to 30 s):
    # recorded, not asserted.
    retry_v1 = f"%RETRY%{GROUP}_{TOPIC}"
    cap.keep("mqadmin-topicList", cluster.mqadmin("topicList"))
    cap.keep(
        "mqadmin-consumerProgress-t-retry", cluster.mqadmin("consumerProgress", "-g", GROUP, "-t", retry_v1)
    )
    _mqctl(cluster, cap, "mqctl-consumerProgress-g-plain", "consumerProgress", "-g", GROUP, "-o", "plain")
    cap.keep("mqadmin-consumerProgress-overview", cluster.mqadmin("consumerProgress"))
    _mqctl(cluster, cap, "mqctl-consumerProgress-overview", "consumerProgress", "-o", "plain")
    _mqctl(cluster, cap, "mqctl-allocateMQ-g", "allocateMQ", "-t", TOPIC, "-g", GROUP, "-o", "plain")
    print(f"\nproxy {cluster.version}: POP smoke scenario {time.monotonic() - t0:.0f} s")
