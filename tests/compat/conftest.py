"""Fixtures for the compat suite: one real RocketMQ cluster per version of the matrix.

``MQCTL_COMPAT_VERSIONS`` (comma list, default 4.9.7,5.3.3,5.5.1; versions.py) picks the
versions. ``rmq_version`` is a session fixture parametrized by them, so every test that uses a
cluster runs once per version, with the version in its id (``test_x[4.9.7]``); pytest orders
the tests so that all of one version run before the next version's cluster starts, and tears
the previous cluster down (every JVM stopped) first.

Fixtures: ``rmq_version`` (the version string, e.g. "4.9.7"), ``rocketmq`` (the started
cluster: name server + broker-a + broker-b), ``cluster`` (the same with every scenario's topics
and groups), ``progress_data`` / ``progress_mqadmin`` (shared data set on TopicProgress),
``fidelity`` (this version's counter of compared values) and ``secure`` (an extra cluster with ACL
and TLS, matrix_secure.py, started only for the tests that ask for it).

Prerequisites: a JDK 17+ and Maven (the classpath is fetched once by ``fetch-classpath.sh``).
Without them the suite skips (one line of reason), or fails loudly when ``CI`` is set.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import versions
from compat_harness import (
    LOG_DIR,
    Fidelity,
    FidelityBook,
    Received,
    RocketMQ,
    Sent,
    compile_java,
    lib_dir,
    missing_prerequisite,
)

if TYPE_CHECKING:
    from matrix_secure import SecureRocketMQ

BROKERS = ("broker-a", "broker-b")
VERSIONS = versions.selected()

_book = FidelityBook()
_timings: dict[str, dict[str, float]] = {}  # version -> {"start": s, "session": s, "stop": s}


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"compat suite cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.compat)


@pytest.fixture(scope="session", params=[v.name for v in VERSIONS], ids=[v.name for v in VERSIONS])
def rmq_version(request: pytest.FixtureRequest) -> str:
    """The RocketMQ version (cell of the matrix) of the cluster under test, e.g. "4.9.7"."""
    return request.param


def _rmq_lib(version: versions.RmqVersion) -> Path:
    """This version's runtime jars, fetched once into the cache when Maven is here."""
    reason = missing_prerequisite(version)
    if reason is not None and "classpath" in reason and shutil.which("mvn") is not None:
        script = Path(__file__).with_name("fetch-classpath.sh")
        proc = subprocess.run(["bash", str(script), version.name], capture_output=True, text=True)
        if proc.returncode != 0:
            _unavailable(f"fetch-classpath.sh failed: {(proc.stderr or proc.stdout).strip()[-300:]}")
        reason = missing_prerequisite(version)
    if reason is not None:
        _unavailable(reason)
    return lib_dir(version)


@pytest.fixture(scope="session")
def rmq_lib(rmq_version: str) -> Path:
    """The directory of this version's RocketMQ runtime jars."""
    return _rmq_lib(versions.get(rmq_version))


@pytest.fixture(scope="session")
def fidelity(rmq_version: str) -> Fidelity:
    """The counter of values compared between mqctl and this version's broker/mqadmin."""
    v = versions.get(rmq_version)
    return _book.for_version(v.name, v.description)


@pytest.fixture(scope="session")
def rocketmq(
    rmq_version: str, rmq_lib: Path, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[RocketMQ]:
    """NameServer + broker-a + broker-b (cluster MqctlCluster) of ``rmq_version`` on free ports."""
    version = versions.get(rmq_version)
    t0 = time.monotonic()
    classes = compile_java(rmq_lib)
    workdir = tmp_path_factory.mktemp(f"rocketmq-{version.name}")
    cluster = RocketMQ(version, rmq_lib, classes, workdir)
    try:
        cluster.start_namesrv()
        for name in BROKERS:
            cluster.add_broker(name, workdir / name / "store")
        cluster.start_brokers(list(BROKERS))
    except BaseException:
        cluster.stop_all()
        cluster.keep_logs()
        raise
    t1 = time.monotonic()
    failed_before = request.session.testsfailed
    try:
        yield cluster
    finally:
        t2 = time.monotonic()
        # The stores are temporary: no orderly shutdown needed (and every JVM is gone before the
        # next version's cluster starts).
        cluster.stop_all(graceful=False)
        _timings[version.name] = {"start": t1 - t0, "session": t2 - t1, "stop": time.monotonic() - t2}
        if request.session.testsfailed > failed_before:
            dest = cluster.keep_logs()
            print(f"\ncompat {version}: server logs and command transcript kept in {dest}")


# Every topic and group the scenarios use, created in one JVM (java/Admin.java op syntax).
TOPOLOGY = (
    "topic:TopicProgress:4:broker-a+broker-b",
    "topic:TopicTime:2:broker-a+broker-b",
    "topic:TopicOffline:2:broker-a",
    "topic:TopicAlloc:3:broker-a",
    "topic:TopicAlloc:5:broker-b",
    # write-only on broker-a (perm 2): allocateMQ must leave its queues out
    "topic:TopicWriteOnly:4:broker-a:2",
    "topic:TopicWriteOnly:2:broker-b",
    # broadcasting consumers (test_compat_broadcast.py); broker-a's queue 2 stays empty
    "topic:TopicBroadcast:3:broker-a",
    "topic:TopicBroadcast:2:broker-b",
    "group:GroupReset:broker-a+broker-b",
    "group:GroupTags:broker-a+broker-b",
)


@pytest.fixture(scope="session")
def cluster(rocketmq: RocketMQ) -> RocketMQ:
    """The session cluster with every scenario's topics and groups created."""
    rocketmq.admin(*TOPOLOGY)
    return rocketmq


# Tags cycle with period 5 while messages go round-robin to the 8 queues, so every queue holds
# every tag (and untagged messages).
TAG_CYCLE = ("TagA", "TagB", "TagC", "TagA", None)
PROGRESS_PHASE1 = 280  # consumed by GroupProgress: ~35 per queue, past the first 30-entry CQ file
PROGRESS_PHASE2 = 240  # left unconsumed: the lag


@dataclass(frozen=True)
class ProgressData:
    topic: str
    group: str
    phase1: list[Sent]
    phase2: list[Sent]
    consumed: list[Received]


def tag_plan(start: int, count: int) -> list[str]:
    # Explicit queues (i mod 8 over both brokers): the client's own choice may skip a broker it
    # finds slow (latency fault avoidance), which made the data set depend on machine load.
    return [
        f"send {TAG_CYCLE[i % len(TAG_CYCLE)] or '-'} key-{i} {i % 4} {BROKERS[(i // 4) % 2]}"
        for i in range(start, start + count)
    ]


@pytest.fixture(scope="session")
def progress_data(cluster: RocketMQ) -> ProgressData:
    """TopicProgress (4 queues on each broker): GroupProgress consumed phase 1, not phase 2."""
    phase1 = cluster.produce("TopicProgress", tag_plan(0, PROGRESS_PHASE1))
    consumed = cluster.consume(
        "TopicProgress", "GroupProgress", "*", max_messages=len(phase1), idle=20, linger=3
    )
    phase2 = cluster.produce("TopicProgress", tag_plan(PROGRESS_PHASE1, PROGRESS_PHASE2))
    cluster.wait_offsets_flushed()
    return ProgressData("TopicProgress", "GroupProgress", phase1, phase2, consumed)


@pytest.fixture(scope="session")
def progress_mqadmin(cluster: RocketMQ, progress_data: ProgressData) -> str:
    """``mqadmin consumerProgress -g GroupProgress`` stdout, taken once (nothing changes the group later)."""
    return cluster.mqadmin_ok("consumerProgress", "-g", progress_data.group)


@pytest.fixture(scope="session")
def secure(
    rmq_version: str, rmq_lib: Path, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[SecureRocketMQ]:
    """This version's secured cluster (matrix_secure.py: one name server, broker-a with ACL and
    mutual TLS, the accounts, TopicSecure and its groups). Started only when a test asks for it
    (tests/compat/test_compat_secure*.py); every JVM of it stopped when the version's tests end."""
    from matrix_pki import make_pki
    from matrix_secure import SecureRocketMQ

    if shutil.which("openssl") is None:
        _unavailable("'openssl' not on PATH (the secured cluster's certificates are made with it)")
    version = versions.get(rmq_version)
    t0 = time.monotonic()
    workdir = tmp_path_factory.mktemp(f"secure-{version.name}")
    cluster = SecureRocketMQ(version, rmq_lib, compile_java(rmq_lib), workdir, make_pki(workdir / "pki"))
    failed_before = request.session.testsfailed
    try:
        cluster.start()
        _timings[f"{version.name} secured cluster"] = {
            "start": time.monotonic() - t0,
            "session": 0.0,
            "stop": 0.0,
        }
        yield cluster
    finally:
        t2 = time.monotonic()
        cluster.stop_all(graceful=False)
        timing = _timings.setdefault(f"{version.name} secured cluster", {"start": t2 - t0, "session": 0.0})
        timing["session"] = t2 - t0 - timing["start"]
        timing["stop"] = time.monotonic() - t2
        if request.session.testsfailed > failed_before:
            dest = cluster.keep_logs(LOG_DIR / version.name / "secure")
            print(f"\ncompat {version} secured cluster: logs kept in {dest}")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _timings:
        terminalreporter.section("compat version matrix: wall time")
        for name, t in _timings.items():
            total = sum(t.values())
            terminalreporter.write_line(
                f"RocketMQ {name}: {total:.0f} s (cluster start {t['start']:.0f} s, "
                f"tests {t['session']:.0f} s, stop {t['stop']:.0f} s)"
            )
    if _book.compared == 0:
        return
    terminalreporter.section("mqctl vs RocketMQ (fidelity)")
    for line in _book.lines():
        terminalreporter.write_line(line)
    mismatches = _book.mismatches
    for m in mismatches[:50]:
        terminalreporter.write_line(f"  differs: {m}")
    if len(mismatches) > 50:
        terminalreporter.write_line(f"  ... and {len(mismatches) - 50} more (see {LOG_DIR / 'fidelity.txt'})")
    _book.write(LOG_DIR / "fidelity.txt")
