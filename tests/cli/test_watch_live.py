"""consumerProgress --watch -n against the fake cluster (tests/backends/live_scenario.py): pull
offsets on a live cluster, and a broker that stops answering between samples (its queues keep
their last values, marked stale; the sample is incomplete; the watch goes on)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from mqctl_testkit.cli import ctrl_c_default
from mqctl_testkit.fakecluster import FakeCluster
from mqctl_testkit.live_scenario import build_model


@pytest.fixture()
def cluster() -> Iterator[FakeCluster]:
    c = FakeCluster(build_model())
    yield c
    c.close()


def test_live_watch_pull_offsets_and_a_broker_dropping_out(cluster: FakeCluster) -> None:
    a = next(b for b in cluster.model.brokers if b.name == "broker-a")
    p = subprocess.Popen(
        [sys.executable, "-m", "mqctl", "consumerProgress", "-n", cluster.ns, "-g", "G1", "-t", "Orders"]
        + ["-w", "0.1", "--samples", "300", "--timeout", "3"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PATH": "/usr/bin:/bin", "MQCTL_CONFIG": "/dev/null"},
        preexec_fn=ctrl_c_default,  # SIGINT below must be Ctrl-C whoever started the tests
    )
    try:
        first = json.loads(p.stdout.readline())  # type: ignore[union-attr]
        rows = {(q["brokerName"], q["queueId"]): q for q in first["queues"]}
        # broker-a q0: max 25, committed 3, pulled to 6 (scenario); broker-b q0: 8/8, pull 8.
        a0 = rows[("broker-a", 0)]
        assert (
            first["backend"],
            a0["brokerOffset"],
            a0["consumerOffset"],
            a0["pullOffset"],
            a0["inflight"],
        ) == (
            "live",
            25,
            3,
            6,
            3,
        )
        assert rows[("broker-b", 0)]["pullOffset"] == 8 and first["complete"]
        before_b = {k: v["status"] for k, v in rows.items() if k[0] == "broker-b"}
        a.pulls["G1"]["Orders"][0] = 9  # the consumer pulls on
        cluster.broker("broker-b").down()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            doc = json.loads(p.stdout.readline())  # type: ignore[union-attr]
            if not doc["complete"]:
                break
        else:
            pytest.fail("no incomplete sample")
        assert doc["missingBrokers"] == ["broker-b"]
        now = {(q["brokerName"], q["queueId"]): q for q in doc["queues"]}
        assert now[("broker-a", 0)]["pullOffset"] == 9 and not now[("broker-a", 0)]["stale"]
        # broker-b's queues are still there, with their last values and status, marked stale.
        assert {k: v["status"] for k, v in now.items() if k[0] == "broker-b"} == before_b
        assert all(
            v["stale"] and v["consumerOffset"] == rows[k]["consumerOffset"]
            for k, v in now.items()
            if k[0] == "broker-b"
        )
        # broker-b answers again (the same port): the samples are complete again, its queues fresh
        cluster.broker("broker-b").reset()
        while time.monotonic() < deadline:
            doc = json.loads(p.stdout.readline())  # type: ignore[union-attr]
            if doc["complete"]:
                break
        else:
            pytest.fail("no complete sample after broker-b came back")
        assert not any(q["stale"] for q in doc["queues"]) and doc["missingBrokers"] == []
        p.send_signal(signal.SIGINT)
        _out, err = p.communicate(timeout=30)
    finally:
        p.kill()
    assert p.returncode == 130, err
    # stderr says the outage once, with why, and the return once (not a line per sample)
    said = [line for line in err.splitlines() if "broker-b" in line]
    assert len(said) == 2, err
    assert said[0].startswith("mqctl: warning: broker broker-b did not answer: 127.0.0.1:")
    assert said[0].endswith("; its queues keep their last values and status (stale) until it answers")
    assert said[1] == "mqctl: warning: broker broker-b answers again"
