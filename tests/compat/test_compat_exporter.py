"""Scenario 10: `mqctl exporter` on the real cluster, scraped by a real Prometheus and pushing to a
real Alertmanager (Debian packages ``prometheus`` and ``prometheus-alertmanager``; missing, this
fails in CI and skips with one line elsewhere):

1. a scrape passes ``promtool check metrics``;
2. PromQL through Prometheus's HTTP API: per-queue lag of GroupProgress = mqadmin's Diff, and the
   filtered lag of a group whose subscription the profile names = what a real consumer with that
   subscription then receives, queue by queue;
3. a consumer stopped with a backlog over the group's max_lag: the alert reaches Alertmanager
   (GET /api/v2/alerts) within one interval plus a few seconds; a consumer resumed: resolved.

Every expected value comes from mqadmin or from what the Java clients sent and received."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from compat_harness import REPO, Received, RocketMQ, free_port, parse_consumer_progress, port_open
from mqctl_testkit.promtools import require

pytestmark = pytest.mark.compat

INTERVAL_S = 2
TAGS_GROUP, ALERT_GROUP, ALERT_TOPIC, MAX_LAG = "GroupExporterTags", "GroupExporterAlert", "TopicExporter", 20


@dataclass
class Stack:
    exporter: str  # its /metrics URL
    prometheus: str
    alertmanager: str
    logs: Path


def _wait_port(port: int, proc: subprocess.Popen, what: str, log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not port_open(port):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"{what} did not start:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read()


def promql(stack: Stack, query: str) -> list[dict]:
    doc = json.loads(_get(f"{stack.prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": query})))
    assert doc["status"] == "success", doc
    return doc["data"]["result"]


def am_alerts(stack: Stack, group: str) -> list[dict]:
    return [
        a
        for a in json.loads(_get(f"{stack.alertmanager}/api/v2/alerts"))
        if a["labels"].get("group") == group
    ]


@pytest.fixture(scope="module")
def stack(cluster: RocketMQ, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    prometheus, alertmanager = require("prometheus"), require("prometheus-alertmanager")
    work = tmp_path_factory.mktemp("exporter-stack")
    cluster.admin(
        f"topic:{ALERT_TOPIC}:1:broker-a",
        f"group:{ALERT_GROUP}:broker-a",
        f"group:{TAGS_GROUP}:broker-a+broker-b",
    )
    ports = {k: free_port() for k in ("exporter", "prometheus", "alertmanager")}
    config = work / "config.toml"
    config.write_text(
        f'[profiles.p]\nnamesrv = "{cluster.namesrv_addr}"\n'
        '[profiles.p.exporter.defaults]\nmax_status = "STUCK"\n'  # nothing is worse: no status alerts
        f"[profiles.p.exporter.groups.{ALERT_GROUP}]\nmax_lag = {MAX_LAG}\n"
        f'[profiles.p.exporter.groups.{TAGS_GROUP}]\nsubscriptions = {{ TopicProgress = "TagA || TagB" }}\n'
    )
    (work / "am.yml").write_text("route:\n  receiver: none\nreceivers:\n  - name: none\n")
    (work / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: mqctl\n"
        f"    static_configs:\n      - targets: ['127.0.0.1:{ports['exporter']}']\n"
    )
    procs: list[subprocess.Popen] = []

    def spawn(cmd: list[str], name: str, env: dict | None = None) -> subprocess.Popen:
        log = (work / f"{name}.log").open("wb")
        p = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, cwd=REPO, env=env, start_new_session=True
        )
        procs.append(p)
        return p

    try:
        am = spawn([alertmanager, f"--config.file={work / 'am.yml'}", f"--storage.path={work / 'am-data'}",
                    f"--web.listen-address=127.0.0.1:{ports['alertmanager']}", "--cluster.listen-address="], "alertmanager")  # fmt: skip
        _wait_port(ports["alertmanager"], am, "alertmanager", work / "alertmanager.log")
        env = {**cluster.env(), "MQCTL_CONFIG": str(config)}
        ex = spawn([sys.executable, "-m", "mqctl", "exporter", "--profile", "p", "--listen", f"127.0.0.1:{ports['exporter']}",
                    "--interval", f"{INTERVAL_S}s", "--timeout", "30", "--window", "5",
                    "--alertmanager", f"http://127.0.0.1:{ports['alertmanager']}"], "exporter", env)  # fmt: skip
        _wait_port(ports["exporter"], ex, "mqctl exporter", work / "exporter.log")
        pr = spawn([prometheus, f"--config.file={work / 'prometheus.yml'}", f"--storage.tsdb.path={work / 'prom-data'}",
                    f"--web.listen-address=127.0.0.1:{ports['prometheus']}"], "prometheus")  # fmt: skip
        _wait_port(ports["prometheus"], pr, "prometheus", work / "prometheus.log")
        yield Stack(
            f"http://127.0.0.1:{ports['exporter']}/metrics",
            f"http://127.0.0.1:{ports['prometheus']}",
            f"http://127.0.0.1:{ports['alertmanager']}",
            work,
        )
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def _until(what: str, fn, timeout: float = 60):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        got = fn()
        if got:
            return got
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def _by_queue(result: list[dict]) -> dict[tuple[str, str, int], float]:
    return {
        (r["metric"]["topic"], r["metric"]["broker"], int(r["metric"]["queue_id"])): float(r["value"][1])
        for r in result
    }


def test_exporter_scrape_and_promql_equal_mqadmin_and_a_filtering_consumer(
    cluster: RocketMQ, stack: Stack, progress_data, progress_mqadmin, fidelity
) -> None:
    promtool = require("promtool")
    topic = progress_data.topic
    cluster.admin(f"clone:{progress_data.group}:{TAGS_GROUP}:{topic}")

    def scraped() -> bytes | None:
        b = _get(stack.exporter)
        return b if b"mqctl_queue_lag_messages{" in b else None

    body = _until("a round on /metrics", scraped)
    check = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True)
    assert check.returncode == 0 and not (check.stdout + check.stderr).strip(), check.stdout + check.stderr
    theirs = {r.key: r.diff for r in parse_consumer_progress(progress_mqadmin)[0]}
    lag = _until(
        "GroupProgress in Prometheus",
        lambda: (
            (r := _by_queue(promql(stack, f'mqctl_queue_lag_messages{{group="{progress_data.group}"}}')))
            and len(r) >= len(theirs)
            and r
        ),
    )
    ok = fidelity.check("exporter: PromQL per-queue lag = mqadmin's Diff (keys)", sorted(lag), sorted(theirs))
    for key in sorted(set(lag) & set(theirs)):
        ok &= fidelity.check(
            f"exporter: PromQL mqctl_queue_lag_messages {key} = mqadmin Diff",
            int(lag[key]),
            max(theirs[key], 0),
        )
    query = f'mqctl_queue_filtered_lag_messages{{group="{TAGS_GROUP}",topic="{topic}"}}'
    filtered = _until(
        "the cloned group's filtered lag",
        lambda: (r := _by_queue(promql(stack, query))) and len(r) == 8 and r,
    )
    got: list[Received] = cluster.consume(topic, TAGS_GROUP, "TagA || TagB", idle=15, linger=3)
    per_queue = Counter((m.broker, m.queue_id) for m in got)
    ok &= fidelity.check(
        "exporter: PromQL sum of filtered lag = messages a TagA || TagB consumer receives",
        int(sum(filtered.values())),
        len(got),
    )
    for (t, broker, qid), v in sorted(filtered.items()):
        ok &= fidelity.check(
            f"exporter: filtered lag {t}/{broker}/{qid}", int(v), per_queue.get((broker, qid), 0)
        )
    assert got, "the filtering consumer received nothing: the scenario is void"
    assert ok, "exporter numbers differ from mqadmin / the consumer, see the fidelity section"


def test_exporter_says_the_alertmanager_takes_the_empty_set(stack: Stack, fidelity) -> None:
    """Before any alert fires, the real Alertmanager has taken mqctl's (empty) alert set: an
    Alertmanager that could not take alerts would be mqctl_alertmanager_up 0 now, not at the first
    incident. (It runs before the alert test: nothing has fired yet.)"""
    query = f'mqctl_alertmanager_up{{alertmanager="{stack.alertmanager}"}}'
    got = _until("mqctl_alertmanager_up in Prometheus", lambda: promql(stack, query), timeout=60)
    ok = fidelity.check("exporter: no alert has fired yet", am_alerts(stack, ALERT_GROUP), [])
    ok &= fidelity.check(
        "exporter: the real Alertmanager took the empty alert set (mqctl_alertmanager_up)",
        got[0]["value"][1],
        "1",
    )
    assert ok, "the exporter's Alertmanager health differs, see the fidelity section"


def test_exporter_finds_the_profiles_groups(stack: Stack, fidelity) -> None:
    """The profile's two group tables name groups the real cluster has (subscription groups made
    before the exporter started, one without any committed offset yet): after its first complete
    round the exporter says nothing about thresholds that apply to no group."""
    _until("a served round", lambda: promql(stack, "mqctl_round_timestamp_seconds"), timeout=60)
    log = (stack.logs / "exporter.log").read_text()
    said = [ln for ln in log.splitlines() if "thresholds apply to nothing" in ln]
    assert fidelity.check("exporter: the profile's groups are the cluster's", said, []), log


def test_exporter_alert_reaches_alertmanager_and_resolves(
    cluster: RocketMQ, stack: Stack, fidelity, tmp_path: Path
) -> None:
    def lag_now() -> float | None:
        r = promql(stack, f'mqctl_group_lag_messages{{group="{ALERT_GROUP}"}}')
        return float(r[0]["value"][1]) if r else None

    def committed() -> float | None:  # the group has no queue row until its consumer commits
        r = promql(stack, f'mqctl_queue_consumer_offset{{group="{ALERT_GROUP}",topic="{ALERT_TOPIC}"}}')
        return float(r[0]["value"][1]) if r else None

    cluster.produce(ALERT_TOPIC, [f"send TagX k{i} 0 broker-a" for i in range(5)])
    stop1 = tmp_path / "stop-1"
    first = threading.Thread(
        target=cluster.consume,
        args=(ALERT_TOPIC, ALERT_GROUP, "*"),
        kwargs=dict(idle=120, linger=1, stop_file=stop1),
    )
    first.start()
    try:
        _until(
            "the consumer caught up (committed 5 in Prometheus)",
            lambda: committed() == 5 and lag_now() == 0,
            timeout=120,
        )
    finally:
        stop1.touch()
        first.join(timeout=120)
    time.sleep(2)
    backlog = MAX_LAG + 10
    cluster.produce(ALERT_TOPIC, [f"send TagX b{i} 0 broker-a" for i in range(backlog)])
    t0 = time.monotonic()
    alerts = _until("the lag alert in Alertmanager", lambda: am_alerts(stack, ALERT_GROUP), timeout=60)
    took = time.monotonic() - t0
    a = alerts[0]
    ok = fidelity.check(
        "exporter alert: name and group",
        (a["labels"]["alertname"], a["labels"]["group"]),
        ("MqctlConsumerLag", ALERT_GROUP),
    )
    ok &= fidelity.check(
        "exporter alert: the backlog in its annotations", a["annotations"]["lag_messages"], str(backlog)
    )
    ok &= fidelity.check(
        f"exporter alert: within one interval ({INTERVAL_S}s) plus a few seconds",
        took <= INTERVAL_S + 8,
        True,
    )
    stop2 = tmp_path / "stop-2"
    second = threading.Thread(
        target=cluster.consume,
        args=(ALERT_TOPIC, ALERT_GROUP, "*"),
        kwargs=dict(idle=120, linger=1, stop_file=stop2),
    )
    second.start()
    try:
        _until("the alert resolved in Alertmanager", lambda: not am_alerts(stack, ALERT_GROUP), timeout=90)
        # Prometheus scrapes every second: the round that resolved the alert may not be in it yet
        ok &= fidelity.check(
            "exporter alert: resolved once the consumer resumed",
            _until("lag 0", lambda: lag_now() == 0, 20),
            True,
        )
    finally:
        stop2.touch()
        second.join(timeout=120)
    assert ok, "the exporter's alert flow differs, see the fidelity section"
