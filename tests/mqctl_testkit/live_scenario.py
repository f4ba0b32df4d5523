"""The cluster the live CLI tests run against, and how they run the CLI.

Two brokers, listed by the name server broker-b first (as a real name server's HashMap has them):

* ``Orders``: broker-a queue 0 holds 25 messages, queue 1 12 (the first 4 expired: min 4);
  broker-b queue 0 holds 8, queue 1 none. Tags cycle through ``TAGS`` (``Aa`` and ``BB`` share
  a Java hash). Consume-queue "files" hold 10 units, so a scan of broker-a queue 0 crosses two.
* ``TopicTest``: 4 queues of 3 messages on each broker (mqadmin.md 7.3's allocateMQ example).
* ``G1``: a push group online with two clients (versions 479 and 477), committed offsets on Orders
  and its retry topic, pull offsets ahead of them (inflight), consume TPS 1.5 + 0.125.
* ``G2``: offline, offsets on TopicTest; ``G3``: committed offsets only (no retry topic);
  ``G4``: a subscription group config only; plus two system groups mqctl must leave out.

Message ``i`` of a queue is stored at ``base + i`` minutes, ``base`` distinct per queue.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mqctl_testkit.cli import NOW_MS, invoke
from mqctl_testkit.fakemodel import Broker, Client, Cluster, Msg, Online, Queue, Topic

NOW = NOW_MS  # 2026-01-01T00:00:00Z
T0 = NOW - 7_200_000  # 2025-12-31T22:00:00Z: the first message
MINUTE = 60_000
TAGS = ("TagA", "Aa", "TagB", "BB", None, "TagA", "TagC")
ACCESS_KEY = "rocketmq2"
SECRET = "s3cr3t-Key-never-printed"


def _queue(n: int, base: int, *, tagged: bool = True, min_offset: int = 0) -> Queue:
    msgs = [Msg(base + i * MINUTE, TAGS[i % len(TAGS)] if tagged else None) for i in range(n)]
    return Queue(msgs, min_offset)


def build_model() -> Cluster:
    a = Broker("broker-a")
    a.topics = {
        "Orders": Topic([_queue(25, T0), _queue(12, T0 + 1000, min_offset=4)]),
        "%RETRY%G1": Topic([_queue(2, T0 + 5000, tagged=False)]),
        "%RETRY%G2": Topic([Queue()]),
        "TopicTest": Topic([_queue(3, T0 + 7000 + q, tagged=False) for q in range(4)]),
    }
    a.offsets = {
        "G1": {"Orders": {0: 3, 1: 2}, "%RETRY%G1": {0: 1}},
        "G2": {"TopicTest": {0: 3, 1: 1, 2: 0, 3: 3}, "%RETRY%G2": {0: 0}},
        "G3": {"Orders": {0: 20, 1: 12}},
    }
    a.pulls = {"G1": {"Orders": {0: 6, 1: 5}}}
    a.groups = ["G1", "G2", "TOOLS_CONSUMER", "CID_RMQ_SYS_TRANS"]
    a.tps = {"G1": 1.5}
    b = Broker("broker-b")
    b.topics = {
        "Orders": Topic([_queue(8, T0 + 2000), Queue()]),
        "%RETRY%G1": Topic([Queue()]),
        "%RETRY%G2": Topic([Queue()]),
        "TopicTest": Topic([_queue(3, T0 + 9000 + q, tagged=False) for q in range(4)]),
    }
    b.offsets = {
        "G1": {"Orders": {0: 8, 1: 0}, "%RETRY%G1": {0: 0}},
        "G2": {"TopicTest": {0: 0, 1: 0, 2: 0, 3: 0}, "%RETRY%G2": {0: 0}},
    }
    b.pulls = {"G1": {"Orders": {0: 8}}}
    b.groups = ["G1", "G2", "G4", "TOOLS_CONSUMER"]
    b.tps = {"G1": 0.125}
    g1 = Online(
        clients=[
            Client("10.0.0.5@1111", "10.0.0.5:50001", [("Orders", "broker-a", 0), ("Orders", "broker-a", 1)]),
            Client("10.0.0.6@2222", "10.0.0.6:50002", [("Orders", "broker-b", 0)], version=477),
        ],
        subscriptions={"Orders": "TagA || TagB", "%RETRY%G1": "*"},
    )
    return Cluster([b, a], {"G1": g1}, cq_file_units=10)


def with_twins(model: Cluster, names: Sequence[str], of: str = "broker-b") -> Cluster:
    """The model plus copies of broker ``of`` under other names (brokers to break one way each)."""
    for name in names:
        twin = copy.deepcopy(model.broker(of))
        twin.name = name
        model.brokers.append(twin)
    return model


# --- running the CLI -------------------------------------------------------------------------


@dataclass
class Run:
    code: int
    out: str
    err: str
    elapsed: float

    def error_line(self) -> str:
        """The one ``mqctl: error:`` line a failure prints, after checking stderr holds nothing
        else but an optional hint and warnings, and no traceback."""
        lines = self.err.splitlines()
        errors = [x for x in lines if x.startswith("mqctl: error: ")]
        hints = [x for x in lines if x.startswith("hint: ")]
        others = [x for x in lines if not x.startswith(("mqctl: error: ", "hint: ", "mqctl: warning: "))]
        assert len(errors) == 1 and len(hints) <= 1 and not others, self.err
        assert "Traceback" not in self.err + self.out
        return errors[0]


def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MQCTL_", "NAMESRV_ADDR", "ROCKETMQ_"))}
    env.update(TZ="UTC", COLUMNS="250", MQCTL_CONFIG=os.devnull, **extra)
    return env


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 30) -> Run:
    """``python -m mqctl ARGS`` as a process of its own, in ``env`` (default ``cli_env()``)."""
    start = time.monotonic()
    p = subprocess.run(
        [sys.executable, "-m", "mqctl", *args],
        capture_output=True,
        text=True,
        env=env or cli_env(),
        timeout=timeout,
    )
    return Run(p.returncode, p.stdout, p.stderr, time.monotonic() - start)


def run_here(*args: str, env: dict[str, str] | None = None) -> Run:
    """mqctl ARGS in this process (typer's CliRunner on the real app), ~10x sooner than
    ``run_cli``: ``env`` (default ``cli_env()``) is the environment while it runs, local time
    included, and the test's own after it. An exception mqctl did not turn into an exit status
    is raised here (``mqctl_testkit.cli.invoke``)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env or cli_env())
    time.tzset()
    start = time.monotonic()
    try:
        r = invoke(*args)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        time.tzset()
    return Run(r.exit_code, r.stdout, r.stderr, time.monotonic() - start)


def run_batch(cases: Mapping[str, tuple[Sequence[str], dict[str, str] | None]]) -> dict[str, Run]:
    """CLI runs one after the other, in this process: name -> Run."""
    return {name: run_here(*args, env=env) for name, (args, env) in cases.items()}


def ts(model: Cluster, broker: str, topic: str, qid: int, offset: int) -> int:
    """The store time of a message of the model."""
    return model.broker(broker).topics[topic].queues[qid].msgs[offset].store_ts
