"""mqctl exporter end to end as a user runs it: bad flags are one line and exit 2, a missing
library is exit 7 with the pip line, a scrape of the real process passes ``promtool check
metrics``, and --print-rules passes ``promtool test rules`` with series and alerts worked out by
hand (both the real Prometheus tool: tests/mqctl_testkit/promtools.py)."""

from __future__ import annotations

import queue
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from mqctl_testkit.fakecluster import FakeCluster
from mqctl_testkit.live_scenario import build_model, cli_env, run_cli
from mqctl_testkit.promtools import require


@pytest.fixture()
def cluster() -> Iterator[FakeCluster]:
    c = FakeCluster(build_model())
    yield c
    c.close()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--interval", "soon"], "--interval soon: expected a duration"),
        # a round reads every group: '10ms' (or '0.5') is a typo that would hammer the cluster
        (["--interval", "10ms"], "--interval 10ms: at least 1 s between rounds"),
        (["--interval", "0.5"], "--interval 0.5: at least 1 s between rounds"),
        (["--window", "1"], "--window 1: a window needs at least 2 rounds"),
        (["--group-allow", "("], "--group-allow '(': not a regular expression"),
        (["--alertmanager", "am:9093"], "--alertmanager 'am:9093': expected http(s)://HOST:PORT"),
        (["--compat", "burrow"], "--compat 'burrow': the one compatibility offered is 'rocketmq-exporter'"),
        (["--listen", "nowhere"], "--listen 'nowhere': expected HOST:PORT"),
        # an unclosed bracket was split at its last ':' and bound the host ':' ("check the host name ':'")
        (["--listen", "[::1"], "--listen '[::1': expected HOST:PORT"),
        (["--listen", "[::1:9877"], "--listen '[::1:9877': expected HOST:PORT"),
    ],
)
def test_bad_flags_are_one_line_exit_2(args: list[str], message: str) -> None:
    r = run_cli("exporter", "-n", "127.0.0.1:1", *args)
    assert r.code == 2 and message in r.error_line()


@pytest.mark.parametrize("where", ["in-use", "not-ours"])
def test_a_listen_address_that_cannot_be_bound_says_why(where: str) -> None:
    """The hint follows the socket's reason: a port another process holds, or an address this
    machine does not have (203.0.113.0/24 is TEST-NET-3, never assigned)."""
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        listen = f"127.0.0.1:{held.getsockname()[1]}" if where == "in-use" else "203.0.113.77:9877"
        r = run_cli("exporter", "-n", "127.0.0.1:1", "--listen", listen)
    assert r.code == 2 and f"--listen {listen}: cannot listen there" in r.error_line()
    hint = "another process listens on that port" if where == "in-use" else "not an address of this machine"
    assert hint in r.err


def test_missing_library_is_exit_7_with_the_pip_line() -> None:
    probe = "import sys; sys.modules['prometheus_client'] = None\nfrom mqctl.cli.app import main\nmain()"
    p = subprocess.run(
        [sys.executable, "-c", probe, "exporter", "-n", "127.0.0.1:1"],
        capture_output=True,
        text=True,
        env=cli_env(),
    )
    assert p.returncode == 7, p.stderr
    assert p.stderr.splitlines() == [
        "mqctl: error: mqctl exporter needs prometheus-client, not installed",
        "hint: pip install 'mqctl[exporter]'",
    ]


def test_bad_threshold_table_is_exit_2(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '[profiles.p]\nnamesrv = "127.0.0.1:1"\n[profiles.p.exporter.defaults]\nmax_lag = "lots"\n'
    )
    r = run_cli("exporter", "--profile", "p", "--print-rules", env={**cli_env(), "MQCTL_CONFIG": str(cfg)})
    assert r.code == 2 and "profiles.p.exporter.defaults.max_lag: expected a whole number" in r.error_line()


def test_a_scrape_passes_promtool_check_metrics(cluster: FakeCluster) -> None:
    promtool = require("promtool")
    p = subprocess.Popen(
        [sys.executable, "-m", "mqctl", "exporter", "-n", cluster.ns, "--listen", "127.0.0.1:0"]
        + ["--interval", "1"],
        stderr=subprocess.PIPE, text=True, env=cli_env(),
    )  # fmt: skip
    try:
        lines = [p.stderr.readline() for _ in range(1)]  # type: ignore[union-attr]
        while "serving " not in lines[-1]:  # warnings may come first
            assert lines[-1], f"the exporter ended: {''.join(lines)}"
            lines.append(p.stderr.readline())  # type: ignore[union-attr]
        url = lines[-1].split("serving ", 1)[1].split(" ", 1)[0]
        deadline = time.monotonic() + 60
        while True:
            try:
                body = urllib.request.urlopen(url, timeout=20).read()
                if b"mqctl_queue_lag_messages{" in body:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "no round served"
            time.sleep(0.2)
        # read the whole OpenMetrics body before the exporter is stopped (a body read after
        # terminate() can come back short: IncompleteRead on a loaded machine)
        with urllib.request.urlopen(
            urllib.request.Request(url, headers={"Accept": "application/openmetrics-text; version=1.0.0"}),
            timeout=20,
        ) as om:
            om_type, om_body = om.headers["Content-Type"], om.read()
    finally:
        p.terminate()
        p.wait(10)
    assert "openmetrics-text" in om_type and om_body.rstrip().endswith(b"# EOF")
    check = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True)
    assert check.returncode == 0 and not check.stdout.strip() and not check.stderr.strip(), (
        check.stdout + check.stderr
    )


PROFILE = """
[profiles.p]
namesrv = "127.0.0.1:1"
[profiles.p.exporter.defaults]
max_lag = 1000
max_status = "REWIND"
for = "1m"
[profiles.p.exporter.groups.orders]
max_lag = 10
max_lag_time = "5m"
severity = "page"
"""

# Series worked out by hand: 'orders' has lag 50 from the start (over its own 10, under the default
# 1000); 'billing' lag 500 then 5000 after 5 m (over the default 1000 only then); 'audit' goes
# STOP at 3 m; orders' oldest message ages 60 s per minute from 0; broker-b stops answering at 2 m
# (its rule waits two intervals).
RULE_TESTS = """
rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'mqctl_group_lag_messages{group="orders"}'
        values: '50x15'
      - series: 'mqctl_group_lag_messages{group="billing"}'
        values: '500x4 5000x10'
      - series: 'mqctl_group_lag_seconds{group="orders"}'
        values: '0+60x15'
      - series: 'mqctl_group_status{group="audit",mqctl_group_status="STOP"}'
        values: '0 0 0 1x12'
      - series: 'mqctl_broker_up{broker="broker-b"}'
        values: '1 1 0x13'
    alert_rule_test:
      - eval_time: 1m
        alertname: MqctlConsumerLag
        exp_alerts:
          - exp_labels: {group: orders, severity: page}
            exp_annotations: {summary: "group orders: lag 50 > 10 messages"}
      - eval_time: 6m
        alertname: MqctlConsumerLag
        exp_alerts:
          - exp_labels: {group: orders, severity: page}
            exp_annotations: {summary: "group orders: lag 50 > 10 messages"}
          - exp_labels: {group: billing, severity: warning}
            exp_annotations: {summary: "group billing: lag 5000 > 1000 messages"}
      - eval_time: 5m
        alertname: MqctlConsumerLagTime
        exp_alerts: []
      - eval_time: 7m
        alertname: MqctlConsumerLagTime
        exp_alerts:
          - exp_labels: {group: orders, severity: page}
            exp_annotations: {summary: "group orders: oldest unconsumed message 420s old > 300s"}
      - eval_time: 3m
        alertname: MqctlConsumerStatus
        exp_alerts: []
      - eval_time: 4m
        alertname: MqctlConsumerStatus
        exp_alerts:
          - exp_labels: {group: audit, severity: warning, mqctl_group_status: STOP}
            exp_annotations: {summary: "group audit is STOP"}
      - eval_time: 3m
        alertname: MqctlExporterBrokerDown
        exp_alerts: []
      - eval_time: 4m
        alertname: MqctlExporterBrokerDown
        exp_alerts:
          - exp_labels: {broker: broker-b, severity: warning}
            exp_annotations: {summary: "broker broker-b does not answer mqctl exporter"}
"""


def test_a_broker_that_stops_answering_is_said_once_and_so_is_its_return(cluster: FakeCluster) -> None:
    p = subprocess.Popen(
        [sys.executable, "-m", "mqctl", "exporter", "-n", cluster.ns, "--listen", "127.0.0.1:0"]
        + ["--interval", "1", "--timeout", "3"],
        stderr=subprocess.PIPE, text=True, env=cli_env(),
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()  # stderr read aside: a line that never comes fails, not hangs
    threading.Thread(target=lambda: [lines.put(x) for x in p.stderr], daemon=True).start()  # type: ignore[union-attr]
    err: list[str] = []

    def until(text: str) -> None:
        deadline = time.monotonic() + 30
        while not err or text not in err[-1]:
            try:
                err.append(lines.get(timeout=max(0.0, deadline - time.monotonic())))
            except queue.Empty:
                pytest.fail(f"no {text!r} in 30 s: {''.join(err)}")

    try:
        until("serving ")
        cluster.broker("broker-b").down()
        until("broker broker-b did not answer")
        time.sleep(2.5)  # two more rounds without broker-b: no second line for the same outage
        cluster.broker("broker-b").reset()
        until("broker broker-b answers again")
        time.sleep(1.5)  # a round with broker-b back: nothing more about it
    finally:
        p.terminate()
        p.wait(10)
    while not lines.empty():
        err.append(lines.get())
    said = [line for line in err if "broker-b" in line]
    assert len(said) == 2, said
    assert said[0].startswith("mqctl: warning: broker broker-b did not answer: 127.0.0.1:")
    assert said[0].rstrip().endswith("; its queues' series are left out until it answers")


def test_print_rules_pass_promtool_test_rules(tmp_path: Path) -> None:
    promtool = require("promtool")
    cfg = tmp_path / "config.toml"
    cfg.write_text(PROFILE)
    r = run_cli(
        "exporter",
        "--profile",
        "p",
        "--print-rules",
        "--interval",
        "1m",
        env={**cli_env(), "MQCTL_CONFIG": str(cfg)},
    )
    assert r.code == 0, r.err
    (tmp_path / "rules.yml").write_text(r.out)
    (tmp_path / "tests.yml").write_text(textwrap.dedent(RULE_TESTS))
    check = subprocess.run(
        [promtool, "check", "rules", "rules.yml"], cwd=tmp_path, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
    test = subprocess.run(
        [promtool, "test", "rules", "tests.yml"], cwd=tmp_path, capture_output=True, text=True
    )
    assert test.returncode == 0, test.stdout + test.stderr
