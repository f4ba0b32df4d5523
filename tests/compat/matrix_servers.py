"""Name server and broker processes of one RocketMQ version (the lifecycle half of the harness).

The servers are the Maven Central jars resolved by ``fetch-classpath.sh``; they are started the
way ``bin/mqnamesrv`` / ``bin/mqbroker`` start them (``NamesrvStartup`` / ``BrokerStartup -c``),
with small heaps, ports picked at run time and a temporary store. Per-version differences
(docs/rocketmq-versions.md §10): 4.x needs ``conf/logback_*.xml`` in its ROCKETMQ_HOME and binds
0.0.0.0 (no ``bindAddress``); 5.x reads its logback config from the jars and binds 127.0.0.1.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from matrix_jvm import JVM_OPENS, JVM_SMALL, free_port, port_open
from matrix_parse import TZ, HarnessError
from versions import RmqVersion, write_logback_confs

CLUSTER = "MqctlCluster"
LOG_DIR = Path(__file__).resolve().parent / "logs"

# Segment sizes the session brokers run with: far below the defaults (1 GiB / 300000 entries) so
# a few hundred messages span several commit-log and consume-queue files.
COMMITLOG_FILE_SIZE = 1024 * 1024
CQ_FILE_SIZE = 600  # 30 entries of 20 bytes
FLUSH_OFFSET_INTERVAL_MS = 1000


@dataclass
class Broker:
    name: str
    cluster: str
    store: Path
    conf: Path
    out: Path
    port: int
    ha_port: int
    proc: subprocess.Popen[bytes] | None = None

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


def tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as e:
        return f"<{path}: {e}>"
    return "\n".join(text.splitlines()[-lines:])


class Servers:
    """One name server and its brokers of one version, all in ``workdir``; every command is logged."""

    def __init__(self, version: RmqVersion, lib: Path, classes: Path, workdir: Path) -> None:
        self.version = version
        self.lib = lib
        self.classes = classes
        self.workdir = workdir
        self.home = workdir / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.rmq_logs = self.home / "logs" / "rocketmqlogs"
        if version.legacy:
            write_logback_confs(self.home, self.rmq_logs)
        self.transcript = workdir / "transcript.log"
        self.namesrv_port = free_port(wildcard=not version.binds_loopback)
        self.namesrv_addr = f"127.0.0.1:{self.namesrv_port}"
        self.namesrv_proc: subprocess.Popen[bytes] | None = None
        self.brokers: dict[str, Broker] = {}
        self.cds = lib.parent / "cds"
        self.cds.mkdir(exist_ok=True)

    # ------------------------------------------------------------------ java

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["TZ"] = TZ
        env.pop("NAMESRV_ADDR", None)
        env.pop("ROCKETMQ_HOME", None)  # -Drocketmq.home.dir wins anyway; keep the env clean
        return env

    def _jvm(self, heap: str, logback: str, role: str | None = None) -> list[str]:
        # rocketmq.home.dir: 4.x loads <home>/conf/logback_<role>.xml from it and the servers
        # refuse to start without it; 5.x picks rmq.<role>.logback.xml from its jars instead.
        opts = [
            "java",
            f"-Xmx{heap}",
            *JVM_SMALL,
            f"-Duser.home={self.home}",
            f"-Drocketmq.home.dir={self.home}",
            f"-Drocketmq.client.logRoot={self.workdir / 'clientlogs'}",
            f"-Drocketmq.namesrv.addr={self.namesrv_addr}",
            f"-Drmq.logback.configurationFile=rmq.{logback}.logback.xml",
            *JVM_OPENS,
        ]
        if role is not None:
            opts += self._cds_opts(role)
        return opts

    def _cds_key(self, role: str) -> str:
        # An archive only works with the class path it was dumped with (else the JVM silently
        # runs without it): key it by the helper jar (its dir name carries the source hash) and
        # the lib dir's completion marker (a re-fetch rewrites it).
        marker = self.lib / ".complete"
        stamp = marker.stat().st_mtime_ns if marker.exists() else 0
        raw = f"{self.classes}|{self.lib}|{stamp}".encode()
        return f"{role}-{hashlib.sha256(raw).hexdigest()[:10]}"

    def _cds_opts(self, role: str) -> list[str]:
        # A dynamic AppCDS archive per short-lived tool and version halves every later JVM start
        # (~2 s saved per mqadmin call on 2 cores). Dumped by the first run, used by the next ones.
        key = self._cds_key(role)
        archive = self.cds / f"{key}.jsa"
        if archive.is_file():
            return [f"-XX:SharedArchiveFile={archive}"]
        return [f"-XX:ArchiveClassesAtExit={self.cds / f'{key}.jsa.tmp-{os.getpid()}'}"]

    def _adopt_cds(self, role: str) -> None:
        key = self._cds_key(role)
        tmp = self.cds / f"{key}.jsa.tmp-{os.getpid()}"
        if tmp.is_file():
            os.replace(tmp, self.cds / f"{key}.jsa")

    def _log(self, cmd: Sequence[str], proc: subprocess.CompletedProcess[str], seconds: float) -> None:
        with self.transcript.open("a", encoding="utf-8") as f:
            f.write(f"$ {' '.join(cmd)}\n# exit {proc.returncode} after {seconds:.1f}s\n")
            if proc.stdout:
                f.write(proc.stdout if proc.stdout.endswith("\n") else proc.stdout + "\n")
            if proc.stderr:
                f.write("# stderr:\n" + proc.stderr + ("" if proc.stderr.endswith("\n") else "\n"))

    def run(
        self,
        cmd: Sequence[str],
        *,
        input: str | None = None,
        timeout: float = 180,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """``cmd`` to completion, logged in the transcript; ``env`` is added to the environment
        (and not logged: the secured cluster's keys travel there)."""
        t0 = time.monotonic()
        proc = subprocess.run(
            list(cmd),
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd or self.workdir,
            env={**self.env(), **(env or {})},
        )
        self._log(cmd, proc, time.monotonic() - t0)
        return proc

    # ------------------------------------------------------------------ servers

    def start_namesrv(self) -> None:
        settings = [
            f"listenPort={self.namesrv_port}",
            f"rocketmqHome={self.home}",
            f"kvConfigPath={self.home / 'namesrv' / 'kvConfig.json'}",
        ]
        if self.version.binds_loopback:
            settings.insert(1, "bindAddress=127.0.0.1")
        conf = self.workdir / "namesrv.conf"
        conf.write_text("\n".join([*settings, ""]))
        out = self.workdir / "namesrv.out"
        main = "org.apache.rocketmq.namesrv.NamesrvStartup"
        cmd = [*self._jvm("192m", "namesrv"), "-cp", f"{self.lib}/*", main, "-c", str(conf)]
        self.namesrv_proc = self._spawn(cmd, out)
        self._await_boot(self.namesrv_proc, out, "The Name Server boot success", self.namesrv_port)

    def _broker_settings(self, name: str, store: Path, port: int, ha_port: int) -> dict[str, str]:
        settings = {
            "brokerClusterName": CLUSTER,
            "brokerName": name,
            "brokerId": "0",
            "brokerRole": "ASYNC_MASTER",
            "flushDiskType": "ASYNC_FLUSH",
            "namesrvAddr": self.namesrv_addr,
            "listenPort": str(port),
            "haListenPort": str(ha_port),
            "bindAddress": "127.0.0.1",
            "brokerIP1": "127.0.0.1",
            "brokerIP2": "127.0.0.1",
            "rocketmqHome": str(self.home),
            "storePathRootDir": str(store),
            "storePathCommitLog": str(store / "commitlog"),
            "mappedFileSizeCommitLog": str(COMMITLOG_FILE_SIZE),
            "mappedFileSizeConsumeQueue": str(CQ_FILE_SIZE),
            "maxIndexNum": "10000",
            "maxHashSlotNum": "40000",
            # Topics are created explicitly (Admin.java): a typo must fail, not auto-create.
            "autoCreateTopicEnable": "false",
            "autoCreateSubscriptionGroup": "true",
            "flushConsumerOffsetInterval": str(FLUSH_OFFSET_INTERVAL_MS),
            "fileReservedTime": "48",
            "deleteWhen": "04",
            "diskSpaceCleanForciblyRatio": "97",
            "diskSpaceWarningLevelRatio": "99",
            # On a loaded 2-core box a send can wait >200 ms in the broker's queue; the default
            # then rejects it as "[TIMEOUT_CLEAN_QUEUE]broker busy" (flow control).
            "waitTimeMillsInSendQueue": "10000",
            "osPageCacheBusyTimeOutMills": "10000",
            # 5.x's timer-message store: its flush thread keeps an idle broker at ~40% of a core
            # (measured with top -H: TimerFlushService), half the box for two brokers. No scenario
            # sends delayed messages; 4.x ignores the key.
            "timerWheelEnable": "false",
        }
        if not self.version.binds_loopback:
            del settings["bindAddress"]  # 4.x has no such key (listens on 0.0.0.0)
        return settings

    def add_broker(self, name: str, store: Path, *, extra: Iterable[str] = ()) -> Broker:
        """Configure (not start) a broker; ``extra`` lines override the defaults."""
        # listenPort - 2 is the broker's "fast" port, listenPort + 1 its HA port (always 0.0.0.0;
        # 4.x BrokerStartup sets it to listenPort + 1 whatever the file says).
        port = free_port(also_free=(-2, 1), wildcard=True)
        settings = self._broker_settings(name, store, port, port + 1)
        for line in extra:
            key, _, value = line.partition("=")
            settings[key.strip()] = value.strip()
        # Values must not carry trailing spaces: the broker silently ignores unparsable numbers.
        conf = self.workdir / f"{name}.conf"
        conf.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        out = self.workdir / f"{name}.out"
        broker = Broker(name, settings["brokerClusterName"], store, conf, out, port, port + 1)
        self.brokers[name] = broker
        return broker

    def start_broker(self, name: str) -> None:
        self.start_brokers([name])

    def start_brokers(self, names: Sequence[str]) -> None:
        """Start several brokers in parallel (each JVM start takes ~10 s on 2 cores)."""
        for name in names:
            b = self.brokers[name]
            if b.running:
                raise HarnessError(f"{name} already running")
            b.store.mkdir(parents=True, exist_ok=True)
            heap = ["java", "-Xms128m", "-Xmx384m", "-XX:MaxDirectMemorySize=256m"]
            main = "org.apache.rocketmq.broker.BrokerStartup"
            cmd = [*heap, *self._jvm("384m", "broker")[2:], "-cp", f"{self.lib}/*", main, "-c", str(b.conf)]
            with b.out.open("a") as f:
                f.write(f"\n===== start {time.strftime('%H:%M:%S')} =====\n")
            b.proc = self._spawn(cmd, b.out)
        for name in names:
            b = self.brokers[name]
            assert b.proc is not None
            self._await_boot(b.proc, b.out, f"The broker[{name}, {b.addr}] boot success", b.port)
        self.await_registered(names)

    def await_registered(self, names: Sequence[str]) -> None:
        """Wait until the name server lists these brokers (subclasses ask it)."""

    def stop_broker(self, name: str, timeout: float = 60) -> None:
        """SIGTERM and wait: the shutdown hook persists consumerOffset.json and removes ``abort``."""
        b = self.brokers[name]
        if b.proc is None:
            return
        if b.proc.poll() is None:
            b.proc.send_signal(signal.SIGTERM)
            try:
                b.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                b.proc.kill()
                b.proc.wait()
                raise HarnessError(f"{name} did not stop within {timeout}s of SIGTERM") from None
        b.proc = None

    def stop_all(self, *, graceful: bool = True) -> None:
        """Stop every broker, then the name server; returns when no JVM of this cluster is left.

        ``graceful=False`` (SIGKILL) is for a cluster whose files nobody reads afterwards: a 5.5
        broker's orderly shutdown takes ~20 s.
        """
        # SIGTERM every broker first: each shutdown takes 10-20 s, so wait for them together.
        for b in self.brokers.values():
            if b.proc is not None and b.proc.poll() is None:
                b.proc.send_signal(signal.SIGTERM if graceful else signal.SIGKILL)
        for name in list(self.brokers):
            try:
                self.stop_broker(name)
            except HarnessError:
                pass
        if self.namesrv_proc is not None and self.namesrv_proc.poll() is None:
            self.namesrv_proc.send_signal(signal.SIGTERM if graceful else signal.SIGKILL)
            try:
                self.namesrv_proc.wait(30)
            except subprocess.TimeoutExpired:
                self.namesrv_proc.kill()
                self.namesrv_proc.wait()
        self.namesrv_proc = None

    def _spawn(self, cmd: list[str], out: Path) -> subprocess.Popen[bytes]:
        with self.transcript.open("a", encoding="utf-8") as f:
            f.write(f"$ {' '.join(cmd)} > {out.name} &\n")
        with out.open("ab") as fh:
            return subprocess.Popen(
                cmd,
                stdout=fh,
                stderr=subprocess.STDOUT,
                cwd=self.workdir,
                env=self.env(),
                start_new_session=True,
            )

    def _await_boot(
        self, proc: subprocess.Popen[bytes], out: Path, line: str, port: int, timeout: float = 120
    ) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise HarnessError(f"{out.name}: exited with {proc.returncode} before booting:\n{tail(out)}")
            if line in out.read_text(errors="replace") and port_open(port):
                return
            time.sleep(0.3)
        raise HarnessError(f"{out.name}: no {line!r} within {timeout}s:\n{tail(out)}")

    # ------------------------------------------------------------------ logs

    def keep_logs(self, dest: Path | None = None) -> Path:
        """Copy server output, broker logs and the command transcript to ``dest`` (logs/<version>)."""
        dest = dest or LOG_DIR / self.version.name
        dest.mkdir(parents=True, exist_ok=True)
        for old in dest.iterdir():  # one session's logs, not a mix of runs
            if old.is_file() and old.name != "fidelity.txt":
                old.unlink()
        for f in [*self.workdir.glob("*.out"), *self.workdir.glob("*.conf"), self.transcript]:
            if f.is_file():
                shutil.copy2(f, dest / f.name)
        for name in ("broker.log", "namesrv.log", "store.log", "broker_default.log", "tools.log"):
            src = self.rmq_logs / name
            if src.is_file():
                (dest / f"rocketmqlogs-{name}").write_text(tail(src, 4000))
        return dest
