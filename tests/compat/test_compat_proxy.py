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
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import versions
from compat_harness import LOG_DIR, REPO, RocketMQ, parse_consumer_progress
from matrix_proxy import GrpcEvent, GrpcRun, Proxy, enable_pop

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


def _keep_wheel(cluster: RocketMQ, cap: Captures, name: str) -> None:
    """The group's POP checkpoints and acks as mqctl read them from the brokers' timer wheels, with
    each checkpoint's revive time against now: the facts an in-flight count rests on, kept beside
    the outputs (the brokers' own record of what was popped and acknowledged)."""
    code = (
        "import sys, time\n"
        "from mqctl.backends.open import open_backend\n"
        "from mqctl.model import BackendKind, BackendTarget\n"
        "now = int(time.time() * 1000)\n"
        "with open_backend(BackendTarget(BackendKind.LIVE, namesrv=sys.argv[1])) as b:\n"
        "    w = b.pop_checkpoints(sys.argv[2], list(b.broker_names()), now - 30 * 60_000)\n"
        "print('now', now)\n"
        "for c in w.checkpoints:\n"
        "    print('ck', c.broker, c.topic, c.queue_id, c.start_offset, c.offsets, 'pop', c.pop_time,\n"
        "          'revive', c.revive_time, 'in', c.revive_time - now)\n"
        "for a in w.acks:\n"
        "    print('ack', a.broker, a.topic, a.queue_id, a.start_offset, a.offsets, 'pop', a.pop_time)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, cluster.namesrv_addr, GROUP],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    cap.keep(name, proc)


def _popped_per_queue(*runs: GrpcRun) -> Counter[tuple[str, int]]:
    """Distinct messages each queue of the topic handed out (retry deliveries not counted)."""
    seen = {(e.broker, e.queue_id, e.offset) for run in runs for e in run.received if not e.retry}
    return Counter((b, q) for b, q, _ in seen)


def test_pop_consumer_through_proxy(
    cluster: RocketMQ, proxy: Proxy, fidelity, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MQCTL_JOURNAL_DIR", str(tmp_path / "journal"))
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
    # mqctl finds the group's brokers and says it is a POP group: before any revive, by the
    # subscription the brokers remember for it (no consumer is registered with them).
    early = json.loads(
        _mqctl(
            cluster,
            cap,
            "mqctl-consumerProgress-g-json-after-24",
            "consumerProgress",
            "-g",
            GROUP,
            "-o",
            "json",
        ).stdout
    )
    assert early["pop"]["recentSubscriptions"] == {TOPIC: "*"}, early.get("pop")
    # the client acknowledged all it received: nothing in flight (counted from the timer wheels)
    fidelity.check("pop: in flight after the client acked all it got", early["totals"]["inflight"], 0)
    assert early["totals"]["inflight"] == 0 and early["pop"]["inflight"] == 0, early["pop"]
    assert early["pop"]["waiting"] == MESSAGES - FIRST_ACKED
    mine = {(r["brokerName"], r["queueId"]): (r["brokerOffset"], r["consumerOffset"]) for r in early["rows"]}
    for key, value in theirs.items():
        fidelity.check(f"pop: mqctl consumerProgress -g (no -t) {key}", mine.get(key), value)

    # 2. A second SimpleConsumer in the background never acknowledges STUCK_KEY: it stops once that
    #    message came twice (popped, invisible 10 s, revived into the retry topic, popped again).
    sent += cluster.produce(TOPIC, [f"send TagA {STUCK_KEY} 0 broker-a"])
    per_queue = Counter((m.broker, m.queue_id) for m in sent)
    stop = tmp_path / "stop-consumer"
    bg = proxy.grpc_consumer_start(
        "simple", TOPIC, GROUP, stop_file=stop, options=[f"noack={STUCK_KEY}", "invisible=10", "rounds=3"]
    )
    try:
        time.sleep(6)
        cap.keep("mqadmin-consumerConnection-g", cluster.mqadmin("consumerConnection", "-g", GROUP))
        at_proxy = f"127.0.0.1:{proxy.remoting_port}"
        conn = cap.keep(
            "mqadmin-consumerConnection-g-b-proxy",
            cluster.mqadmin("consumerConnection", "-g", GROUP, "-b", at_proxy),
        )
        _connections(cluster, cap, conn.stdout, at_proxy, fidelity)
        second = proxy.grpc_consumer_finish(bg, stop, timeout=120, stop=False)
        # its last receipt of STUCK_KEY stays in flight (invisible) until 10 s after it came
        stuck_invisible_until = time.monotonic() + 10
    finally:
        if bg.poll() is None:
            stop.touch()
            bg.kill()
    # The proxy answers GET_CONSUMER_CONNECTION_LIST from its own table: the gRPC client is there.
    assert "CONSUME_ACTIVELY" in conn.stdout and "JAVA" in conn.stdout, conn.stdout + conn.stderr

    stuck = [e for e in second.received if e.keys == STUCK_KEY]
    assert [e.attempt for e in stuck] == [1, 2, 3], second.stdout[-3000:]
    # The redeliveries came from the POP retry topic: v1 (%RETRY%<group>_<topic>) unless the broker
    # has enableRetryTopicV2 (default false in 5.3.3 and 5.5.1).
    assert [e.topic_type for e in stuck] == ["0", "1", "1"]
    # Revived twice, still coming back: --watch says STUCK on the retry queue, --why names it.
    _stuck(cluster, cap, stuck[0], fidelity)
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
    plain = _mqctl(
        cluster, cap, "mqctl-consumerProgress-g-plain", "consumerProgress", "-g", GROUP, "-o", "plain"
    )
    # Live, a POP group's in flight is counted from the brokers' checkpoints (N/A only on a store,
    # which cannot read them): a number, as the JSON's (checked against the client in _inflight).
    assert re.search(r"^Consume Inflight Total: \d+$", plain.stdout, re.M), plain.stdout + plain.stderr
    assert doc["pop"]["inflight"] is not None, doc["pop"]
    assert doc["pop"]["waiting"] == 0 and doc["pop"]["retryTopics"] == [retry_v1], doc["pop"]
    _overview(cluster, cap)
    # The stopped consumer's last copy of STUCK_KEY is in flight until its invisible time ends
    # (a run counted it, 4 for 3, when the steps above took under 10 s: the count was right).
    time.sleep(max(0.0, stuck_invisible_until + 1 - time.monotonic()))
    _inflight(cluster, proxy, cap, fidelity, tmp_path)
    alloc = _mqctl(cluster, cap, "mqctl-allocateMQ-g", "allocateMQ", "-t", TOPIC, "-g", GROUP, "-o", "plain")
    assert alloc.returncode == 7 and "POP has no client-side allocation" in alloc.stderr, alloc.stderr
    print(f"\nproxy {cluster.version}: POP scenario up to the resets {time.monotonic() - t0:.0f} s")
    _stopped_consumer_is_stop(cluster, cap, fidelity)
    _resets(cluster, proxy, cap, fidelity, tmp_path)
    print(f"\nproxy {cluster.version}: POP scenario {time.monotonic() - t0:.0f} s")


# ---------------------------------------------------------------------------- phase 2 of issue 18


def _client_ids(mqadmin_out: str) -> set[str]:
    return {line.split()[0] for line in mqadmin_out.splitlines() if "@" in line.split(" ", 1)[0]}


def _connections(cluster: RocketMQ, cap: Captures, theirs: str, at_proxy: str, fidelity) -> None:  # type: ignore[no-untyped-def]
    """While a gRPC client consumes: through the brokers, mqctl says the group's clients are behind
    a proxy (exit 3, as for no client); at the proxy's remoting port (-b) it lists what mqadmin -b
    lists, and says the version column is the proxy's."""
    brokers = _mqctl(
        cluster, cap, "mqctl-consumerConnection-g", "consumerConnection", "-g", GROUP, "-o", "plain"
    )
    assert brokers.returncode == 3, brokers.stderr
    assert "consumes in POP mode" in brokers.stderr and "-b PROXY_HOST:PORT" in brokers.stderr, brokers.stderr
    at = _mqctl(
        cluster,
        cap,
        "mqctl-consumerConnection-g-b-proxy",
        "consumerConnection",
        "-g",
        GROUP,
        "-b",
        at_proxy,
        "-o",
        "json",
    )
    assert at.returncode == 0, at.stderr
    doc = json.loads(at.stdout)
    ours = {c["clientId"] for c in doc["clients"]}
    fidelity.check("pop: consumerConnection -b PROXY clients", ours, _client_ids(theirs))
    assert ours == _client_ids(theirs) and doc["consumeType"] == "CONSUME_ACTIVELY"
    assert "rocketmq-proxy" in at.stderr and "#Version is the proxy's own version" in at.stderr, at.stderr


def _stuck(cluster: RocketMQ, cap: Captures, first: GrpcEvent, fidelity) -> None:  # type: ignore[no-untyped-def]
    """The message popped three times and never acknowledged: STUCK on its POP retry queue (broker-a
    queue 0: the broker revives into queue 0 of the broker that popped it), --why names it."""
    retry_q = f"%RETRY%{GROUP}_{TOPIC}/{first.broker}/0"
    watch = _mqctl(
        cluster,
        cap,
        "mqctl-consumerProgress-watch-stuck",
        "consumerProgress",
        "-g",
        GROUP,
        "--watch",
        "1",
        "--samples",
        "1",
        "-o",
        "json",
    )
    assert watch.returncode == 0, watch.stderr
    sample = json.loads(watch.stdout.splitlines()[-1])
    statuses = {f"{q['topic']}/{q['brokerName']}/{q['queueId']}": q["status"] for q in sample["queues"]}
    fidelity.check(
        "pop: --watch, a message popped again and again -> STUCK on its retry queue",
        statuses.get(retry_q),
        "STUCK",
    )
    assert statuses.get(retry_q) == "STUCK", sample
    assert all(s == "OK" for q, s in statuses.items() if q != retry_q), statuses
    why = _mqctl(
        cluster,
        cap,
        "mqctl-consumerProgress-why-retry",
        "consumerProgress",
        "-g",
        GROUP,
        "--why",
        retry_q,
        "-o",
        "json",
    )
    assert why.returncode == 0, why.stderr
    message = json.loads(why.stdout)["message"] or {}
    fidelity.check(
        "pop: --why names the message that keeps coming back",
        (message.get("uniqKey"), message.get("keys")),
        (first.msg_id, STUCK_KEY),
    )
    assert (message.get("uniqKey"), message.get("keys")) == (first.msg_id, STUCK_KEY), message
    _exporter_stuck(cluster, cap, first, fidelity)


def _exporter_stuck(cluster: RocketMQ, cap: Captures, first: GrpcEvent, fidelity) -> None:  # type: ignore[no-untyped-def]
    """mqctl exporter judges the POP group as --watch does: its first round says STUCK on the
    retry queue, and serves the group's lag with no in-flight series (a round does not read it)."""
    import urllib.request

    cmd = [sys.executable, "-m", "mqctl", "exporter", "-n", cluster.namesrv_addr, "--listen", "127.0.0.1:0"]
    p = subprocess.Popen([*cmd, "--interval", "2"], stderr=subprocess.PIPE, text=True, cwd=REPO)
    body = ""
    try:
        line = ""
        while "serving " not in line:
            line = p.stderr.readline()  # type: ignore[union-attr]
            assert line, "the exporter ended before serving"
        url = line.split("serving ", 1)[1].split(" ", 1)[0]
        deadline = time.monotonic() + 60
        while f'group="{GROUP}"' not in body and time.monotonic() < deadline:
            time.sleep(0.5)
            with urllib.request.urlopen(url, timeout=20) as r:
                body = r.read().decode()
    finally:
        p.terminate()
        p.wait(10)
    (LOG_DIR / cluster.version.name / "pop-captures").mkdir(parents=True, exist_ok=True)
    (LOG_DIR / cluster.version.name / "pop-captures" / "mqctl-exporter-metrics.txt").write_text(body)
    labels = (
        f'broker="{first.broker}",group="{GROUP}",mqctl_queue_status="STUCK",queue_id="0",'
        f'topic="%RETRY%{GROUP}_{TOPIC}"'
    )
    stuck = re.search(r"^mqctl_queue_status\{" + re.escape(labels) + r"\} (\S+)$", body, re.M)
    fidelity.check("pop: the exporter's round, STUCK on the retry queue", stuck and stuck.group(1), "1.0")
    assert stuck is not None and stuck.group(1) == "1.0", body[-3000:]
    assert re.search(rf'^mqctl_group_lag_messages\{{group="{GROUP}"\}} ', body, re.M), body[-3000:]
    assert not re.search(rf'^mqctl_queue_inflight_messages\{{[^}}]*group="{GROUP}"', body, re.M)
    assert not re.search(rf'^mqctl_group_unsupported\{{group="{GROUP}"', body, re.M)


def _overview(cluster: RocketMQ, cap: Captures) -> None:
    """The overview types the POP group and lists no ``GroupPop_TopicPop``, which mqadmin lists once
    the name server knows the POP retry topic (up to 30 s after it was created)."""
    theirs = cap.keep("mqadmin-consumerProgress-overview", cluster.mqadmin("consumerProgress"))
    ours = _mqctl(cluster, cap, "mqctl-consumerProgress-overview", "consumerProgress", "-o", "json")
    assert ours.returncode == 0, ours.stderr
    rows = {r["group"]: r for r in json.loads(ours.stdout)["rows"]}
    assert rows[GROUP]["type"] == "CONSUME_POP", rows.get(GROUP)
    assert f"{GROUP}_{TOPIC}" not in rows
    if f"{GROUP}_{TOPIC}" in theirs.stdout:
        assert f"left out {GROUP}_{TOPIC}" in ours.stderr, ours.stderr


def _watch_json(cluster: RocketMQ, cap: Captures, name: str, *args: str) -> dict:
    proc = _mqctl(cluster, cap, name, "consumerProgress", "-g", GROUP, "-t", TOPIC, *args, "-o", "json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def _stopped_consumer_is_stop(cluster: RocketMQ, cap: Captures, fidelity) -> None:  # type: ignore[no-untyped-def]
    """No consumer, one new message per queue: nothing moves for 10 s -> STOP on every queue."""
    cluster.produce(TOPIC, [f"send TagA late-{i} {i % 4} {BROKERS[i // 4]}" for i in range(8)])
    sample = _watch_json(cluster, cap, "mqctl-consumerProgress-watch-stop", "--watch", "5", "--samples", "4")
    statuses = {q["status"] for q in sample["queues"] if q["topic"] == TOPIC}
    fidelity.check("pop: --watch, the consumer stopped with lag left -> STOP", statuses, {"STOP"})
    assert statuses == {"STOP"}, sample


def _offsets(cluster: RocketMQ, cap: Captures, name: str) -> dict[tuple[str, int], tuple[int, int]]:
    return _mqadmin_rows(cluster, cap, name, TOPIC)


def _resets(cluster: RocketMQ, proxy: Proxy, cap: Captures, fidelity, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """resetOffsetByTime on the POP group, with a consumer popping through the proxy and without;
    then apache/rocketmq #9038's setting (useServerSideResetOffset=false)."""
    total = {k: v[0] for k, v in _offsets(cluster, cap, "mqadmin-consumerProgress-t-before-reset").items()}
    # 1. online: a SimpleConsumer pops everything (the 8 late messages), then the group is reset to
    #    the start: the consumer gets every message of the topic again.
    stop = tmp_path / "stop-reset-consumer"
    bg = proxy.grpc_consumer_start("simple", TOPIC, GROUP, stop_file=stop, options=["invisible=20"])
    try:
        _wait(
            lambda: all(c == b for b, c in _offsets(cluster, cap, "mqadmin-before-online-reset").values()), 40
        )
        reset = _mqctl(
            cluster,
            cap,
            "mqctl-reset-online",
            "resetOffsetByTime",
            "-g",
            GROUP,
            "-t",
            TOPIC,
            "-s",
            "0",
            "--execute",
        )
        assert reset.returncode == 0, reset.stderr
        executed = next(line for line in reset.stderr.splitlines() if line.startswith("EXECUTED"))
        assert "popped within the last 10 minutes: online" in executed, reset.stderr
        assert "queue(s) read back at their targets" in executed, reset.stderr
        _wait(
            lambda: all(c == b for b, c in _offsets(cluster, cap, "mqadmin-after-online-reset").values()), 60
        )
        got = proxy.grpc_consumer_finish(bg, stop, timeout=60)
    finally:
        if bg.poll() is None:
            stop.touch()
            bg.kill()
    again = Counter((e.broker, e.queue_id, e.offset) for e in got.received if not e.retry)
    want = {(b, q, o) for (b, q), n in total.items() for o in range(n)}
    fidelity.check(
        "pop: after an online reset to the start the consumer got every message again",
        set(again) >= want,
        True,
    )
    assert set(again) >= want, sorted(want - set(again))[:10]
    # 2. offline: nobody pops; the reset to the end takes, and the next consumer gets only what is new
    reset = _mqctl(
        cluster,
        cap,
        "mqctl-reset-to-now",
        "resetOffsetByTime",
        "-g",
        GROUP,
        "-t",
        TOPIC,
        "-s",
        "now",
        "--execute",
    )
    assert reset.returncode == 0, reset.stderr
    sent = cluster.produce(
        TOPIC, ["send TagA after-reset-0 0 broker-a", "send TagA after-reset-1 1 broker-b"]
    )
    # What the consumer of step 1 had popped but not acknowledged when it stopped comes back from the
    # POP retry topic (the broker's revive, not the reset): only the topic's own queues are compared.
    # A receive long-polls one broker at a time: on a loaded machine one short run may end before it
    # reached the other broker, so the consumer runs again (up to 60 s) until both new ones came.
    received: list[GrpcEvent] = []
    deadline = time.monotonic() + 60
    while True:
        received += proxy.grpc_consume("simple", TOPIC, GROUP, idle=6, options=["invisible=20"]).received
        fresh = [e for e in received if not e.retry]
        if {e.keys for e in fresh} >= {"after-reset-0", "after-reset-1"} or time.monotonic() > deadline:
            break
    fidelity.check(
        "pop: after a reset to now the consumer got only the new messages",
        sorted((e.broker, e.queue_id, e.offset) for e in fresh),
        sorted((m.broker, m.queue_id, m.offset) for m in sent),
    )
    assert sorted(e.keys or "" for e in fresh) == ["after-reset-0", "after-reset-1"], fresh
    _apache_9038(cluster, proxy, cap, tmp_path)


def _apache_9038(cluster: RocketMQ, proxy: Proxy, cap: Captures, tmp_path: Path) -> None:
    """useServerSideResetOffset=false (the 5.1.4 default): a reset reaches only clients registered
    with the broker, and a POP consumer behind a proxy is not. mqctl refuses before writing; what
    mqadmin does (its queue-by-queue fallback) and what the consumer then gets is recorded."""
    from matrix_servers import CLUSTER

    def setting(value: str) -> None:
        cluster.mqadmin_ok("updateBrokerConfig", "-c", CLUSTER, "-k", "useServerSideResetOffset", "-v", value)

    setting("false")
    stop = tmp_path / "stop-9038"
    bg = proxy.grpc_consumer_start("simple", TOPIC, GROUP, stop_file=stop, options=["invisible=20"])
    try:
        time.sleep(4)
        before = _offsets(cluster, cap, "mqadmin-9038-before")
        refused = _mqctl(
            cluster,
            cap,
            "mqctl-reset-9038",
            "resetOffsetByTime",
            "-g",
            GROUP,
            "-t",
            TOPIC,
            "-s",
            "0",
            "--execute",
        )
        assert refused.returncode == 5 and "useServerSideResetOffset=false" in refused.stderr, refused.stderr
        assert _offsets(cluster, cap, "mqadmin-9038-after-mqctl") == before
        cap.keep(
            "mqadmin-reset-9038", cluster.mqadmin("resetOffsetByTime", "-g", GROUP, "-t", TOPIC, "-s", "0")
        )
        time.sleep(12)
        cap.keep(
            "mqadmin-consumerProgress-t-9038-after-mqadmin",
            cluster.mqadmin("consumerProgress", "-g", GROUP, "-t", TOPIC),
        )
        got = proxy.grpc_consumer_finish(bg, stop, timeout=60)
    finally:
        if bg.poll() is None:
            stop.touch()
            bg.kill()
        setting("true")
    (cap.dir / "grpc-9038-received.txt").write_text(
        f"after mqadmin resetOffsetByTime -s 0 with useServerSideResetOffset=false the consumer received "
        f"{len(got.received)} message(s):\n"
        + "\n".join(f"{e.broker} {e.queue_id} {e.offset} {e.keys}" for e in got.received)
        + "\n"
    )
    print(
        f"\nproxy {cluster.version}: #9038 setting, mqadmin's reset: the consumer received {len(got.received)} message(s)"
    )


def _wait(ok, seconds: float) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not ok():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(1)


HOLD = "pop-hold"


def _inflight(cluster: RocketMQ, proxy: Proxy, cap: Captures, fidelity, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Three messages the client receives and holds (invisible 60 s, never acknowledged) among five:
    mqctl's in flight is those three, on the queues they came from (counted by the client), while
    the committed offsets already say "done"."""
    cluster.produce(
        TOPIC, [f"send TagA {HOLD if i < 3 else f'quick-{i}'} {i % 4} {BROKERS[i % 2]}" for i in range(5)]
    )
    stop = tmp_path / "stop-hold"
    bg = proxy.grpc_consumer_start(
        "simple", TOPIC, GROUP, stop_file=stop, options=[f"noack={HOLD}", "invisible=60", "rounds=3"]
    )
    held = proxy.grpc_consumer_finish(bg, stop, timeout=90, stop=False)
    assert len(held.not_acked) == 3, held.stdout[-3000:]
    doc = json.loads(
        _mqctl(
            cluster,
            cap,
            "mqctl-consumerProgress-g-json-inflight",
            "consumerProgress",
            "-g",
            GROUP,
            "-o",
            "json",
        ).stdout
    )
    theirs = Counter((e.broker, e.queue_id) for e in held.not_acked)
    ours = Counter(
        {
            (r["brokerName"], r["queueId"]): r["inflight"]
            for r in doc["rows"]
            if r["topic"] == TOPIC and r["inflight"]
        }
    )
    fidelity.check(
        "pop: in flight per queue = messages the client holds unacknowledged", dict(ours), dict(theirs)
    )
    _keep_wheel(cluster, cap, "mqctl-timer-wheel-inflight")
    assert doc["pop"]["inflight"] == 3 and ours == theirs, (doc["pop"], doc["rows"])
    assert doc["pop"]["waiting"] == 0  # the committed offsets moved at pop time
