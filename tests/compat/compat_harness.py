"""A real Apache RocketMQ 5.3.3 NameServer + Broker(s), mqadmin and tiny Java clients for tests.

The servers are the Maven Central jars resolved by ``fetch-classpath.sh``; they are started the
way ``bin/mqnamesrv`` / ``bin/mqbroker`` start them (``NamesrvStartup`` / ``BrokerStartup -c``),
with small heaps, loopback ports picked at run time and a temporary store. Recipe and pitfalls:
the workplace spec ``real-broker.md``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROCKETMQ_VERSION = "5.3.3"
CLUSTER = "MqctlCluster"
HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
JAVA_SRC = HERE / "java"
LOG_DIR = HERE / "logs"

# Segment sizes the session brokers run with: far below the defaults (1 GiB / 300000 entries) so
# a few hundred messages span several commit-log and consume-queue files.
COMMITLOG_FILE_SIZE = 1024 * 1024
CQ_FILE_SIZE = 600  # 30 entries of 20 bytes
FLUSH_OFFSET_INTERVAL_MS = 1000

# A non-UTC zone for every process: mqadmin prints LastTime in the JVM's local time, mqctl in
# Python's; running both under one explicit TZ makes a time-zone slip visible.
TZ = "Asia/Shanghai" if Path("/usr/share/zoneinfo/Asia/Shanghai").exists() else "UTC"

JVM_OPENS = [
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
]
# C1 only and one GC thread: the servers and clients do little work, and the box has 2 cores.
# JVM log output off stdout (a CDS warning there would corrupt mqadmin's output).
JVM_SMALL = [
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Xlog:disable",
    "-Xlog:all=warning,cds*=off:stderr",
]


class HarnessError(RuntimeError):
    """The test harness itself failed (a server did not start, a client crashed)."""


# --------------------------------------------------------------------------- classpath


def cache_root() -> Path:
    env = os.environ.get("MQCTL_COMPAT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "mqctl-compat"


def lib_dir() -> Path:
    return cache_root() / f"rocketmq-{ROCKETMQ_VERSION}" / "lib"


def missing_prerequisite() -> str | None:
    """Why the compat suite cannot run here, or None."""
    for tool in ("java", "javac", "jar"):
        if shutil.which(tool) is None:
            return f"'{tool}' not on PATH (tests/compat needs a JDK 17+)"
    if not (lib_dir() / ".complete").is_file():
        return (
            f"RocketMQ {ROCKETMQ_VERSION} classpath not in {lib_dir()}: run tests/compat/fetch-classpath.sh"
        )
    return None


def compile_java(lib: Path) -> Path:
    """Compile the helper programs once per source version into the cache; returns their jar."""
    sources = sorted(JAVA_SRC.glob("*.java"))
    digest = hashlib.sha256()
    for src in sources:
        digest.update(src.name.encode() + b"\0" + src.read_bytes())
    out = lib.parent / f"classes-{digest.hexdigest()[:12]}"
    if (out / ".complete").is_file():
        return out / "compat-helpers.jar"
    staging = lib.parent / f"{out.name}.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    proc = subprocess.run(
        [
            "javac",
            "-nowarn",
            "-encoding",
            "UTF-8",
            "-cp",
            f"{lib}/*",
            "-d",
            str(staging / "classes"),
            *map(str, sources),
        ],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise HarnessError(f"javac failed:\n{proc.stdout}\n{proc.stderr}")
    # A jar, not a class directory: AppCDS refuses non-empty directories on the class path.
    proc = subprocess.run(
        ["jar", "cf", str(staging / "compat-helpers.jar"), "-C", str(staging / "classes"), "."],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise HarnessError(f"jar failed:\n{proc.stdout}\n{proc.stderr}")
    (staging / ".complete").write_text("ok\n")
    try:
        staging.rename(out)
    except OSError:  # another session won the race; its copy is identical
        shutil.rmtree(staging, ignore_errors=True)
    return out / "compat-helpers.jar"


# --------------------------------------------------------------------------- ports


def _bindable(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def _ephemeral_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_taken: set[int] = set()


def free_port(*, also_free: Sequence[int] = (), wildcard: bool = False) -> int:
    """A loopback port p (p + d free too for every d in also_free) not handed out before."""
    for _ in range(200):
        p = _ephemeral_port()
        ports = [p, *(p + d for d in also_free)]
        if any(q in _taken or not 1024 < q < 65536 for q in ports):
            continue
        if all(_bindable(q, "0.0.0.0" if wildcard else "127.0.0.1") for q in ports):
            _taken.update(ports)
            return p
    raise HarnessError("no free loopback port found")


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


# --------------------------------------------------------------------------- fidelity


@dataclass
class Fidelity:
    """Counts every value compared between mqctl and the real broker/mqadmin."""

    compared: int = 0
    equal: int = 0
    mismatches: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def check(self, what: str, mqctl_value: object, broker_value: object) -> bool:
        ok = mqctl_value == broker_value
        with self._lock:
            self.compared += 1
            if ok:
                self.equal += 1
            else:
                self.mismatches.append(f"{what}: mqctl={mqctl_value!r} broker={broker_value!r}")
        return ok

    def summary(self) -> str:
        pct = 100.0 * self.equal / self.compared if self.compared else 0.0
        return f"fidelity: {self.equal}/{self.compared} values equal ({pct:.1f}%) between mqctl and RocketMQ 5.3.3"


# --------------------------------------------------------------------------- processes


@dataclass(frozen=True)
class Sent:
    broker: str
    queue_id: int
    offset: int
    msg_id: str
    tag: str | None


@dataclass(frozen=True)
class Received:
    broker: str
    queue_id: int
    offset: int
    tag: str | None
    store_timestamp: int
    msg_id: str


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


class RocketMQ:
    """One name server and its brokers, all in ``workdir``; every command run is logged."""

    def __init__(self, lib: Path, classes: Path, workdir: Path) -> None:
        self.lib = lib
        self.classes = classes
        self.workdir = workdir
        self.home = workdir / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.transcript = workdir / "transcript.log"
        self.namesrv_port = free_port()
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
        env.pop("ROCKETMQ_HOME", None)
        return env

    def _jvm(self, heap: str, logback: str, role: str | None = None) -> list[str]:
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

    def _cds_opts(self, role: str) -> list[str]:
        # A dynamic AppCDS archive per short-lived tool halves every later JVM start (~2 s saved
        # per mqadmin call on 2 cores). Dumped by the first run, used by the following ones.
        archive = self.cds / f"{role}.jsa"
        if archive.is_file():
            return [f"-XX:SharedArchiveFile={archive}"]
        return [f"-XX:ArchiveClassesAtExit={self.cds / f'{role}.jsa.tmp-{os.getpid()}'}"]

    def _adopt_cds(self, role: str) -> None:
        tmp = self.cds / f"{role}.jsa.tmp-{os.getpid()}"
        if tmp.is_file():
            os.replace(tmp, self.cds / f"{role}.jsa")

    def _log(self, cmd: Sequence[str], proc: subprocess.CompletedProcess[str], seconds: float) -> None:
        with self.transcript.open("a", encoding="utf-8") as f:
            f.write(f"$ {' '.join(cmd)}\n# exit {proc.returncode} after {seconds:.1f}s\n")
            if proc.stdout:
                f.write(proc.stdout if proc.stdout.endswith("\n") else proc.stdout + "\n")
            if proc.stderr:
                f.write("# stderr:\n" + proc.stderr + ("" if proc.stderr.endswith("\n") else "\n"))

    def run(
        self, cmd: Sequence[str], *, input: str | None = None, timeout: float = 180, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        t0 = time.monotonic()
        proc = subprocess.run(
            list(cmd),
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd or self.workdir,
            env=self.env(),
        )
        self._log(cmd, proc, time.monotonic() - t0)
        return proc

    def java_tool(
        self, main: str, args: Sequence[str], *, input: str | None = None, timeout: float = 180
    ) -> subprocess.CompletedProcess[str]:
        cmd = [*self._jvm("192m", "client", role=main), "-cp", f"{self.classes}:{self.lib}/*", main, *args]
        proc = self.run(cmd, input=input, timeout=timeout)
        self._adopt_cds(main)
        return proc

    # ------------------------------------------------------------------ servers

    def start_namesrv(self) -> None:
        conf = self.workdir / "namesrv.conf"
        conf.write_text(
            "\n".join(
                [
                    f"listenPort={self.namesrv_port}",
                    "bindAddress=127.0.0.1",
                    f"rocketmqHome={self.home}",
                    f"kvConfigPath={self.home / 'namesrv' / 'kvConfig.json'}",
                    "",
                ]
            )
        )
        out = self.workdir / "namesrv.out"
        cmd = [
            *self._jvm("192m", "namesrv"),
            "-cp",
            f"{self.lib}/*",
            "org.apache.rocketmq.namesrv.NamesrvStartup",
            "-c",
            str(conf),
        ]
        self.namesrv_proc = self._spawn(cmd, out)
        self._await_boot(self.namesrv_proc, out, "The Name Server boot success", self.namesrv_port)

    def add_broker(self, name: str, store: Path, *, extra: Iterable[str] = ()) -> Broker:
        """Configure (not start) a broker; ``extra`` lines override the defaults."""
        port = free_port(also_free=(-2,))  # listenPort - 2 is the broker's "fast" port
        ha_port = free_port(wildcard=True)  # the HA port always binds 0.0.0.0
        conf = self.workdir / f"{name}.conf"
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
        }
        for line in extra:
            key, _, value = line.partition("=")
            settings[key.strip()] = value.strip()
        # Values must not carry trailing spaces: the broker silently ignores unparsable numbers.
        conf.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        broker = Broker(
            name, settings["brokerClusterName"], store, conf, self.workdir / f"{name}.out", port, ha_port
        )
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
            cmd = [
                "java",
                "-Xms128m",
                "-Xmx384m",
                "-XX:MaxDirectMemorySize=256m",
                *self._jvm("384m", "broker")[2:],
                "-cp",
                f"{self.lib}/*",
                "org.apache.rocketmq.broker.BrokerStartup",
                "-c",
                str(b.conf),
            ]
            with b.out.open("a") as f:
                f.write(f"\n===== start {time.strftime('%H:%M:%S')} =====\n")
            b.proc = self._spawn(cmd, b.out)
        for name in names:
            b = self.brokers[name]
            assert b.proc is not None
            self._await_boot(b.proc, b.out, f"The broker[{name}, {b.addr}] boot success", b.port)
        self.admin(*(f"broker:{name}" for name in names))

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

    def stop_all(self) -> None:
        # SIGTERM every broker first: each shutdown takes 10-20 s, so wait for them together.
        for b in self.brokers.values():
            if b.proc is not None and b.proc.poll() is None:
                b.proc.send_signal(signal.SIGTERM)
        for name in list(self.brokers):
            try:
                self.stop_broker(name)
            except HarnessError:
                pass
        if self.namesrv_proc is not None and self.namesrv_proc.poll() is None:
            self.namesrv_proc.send_signal(signal.SIGTERM)
            try:
                self.namesrv_proc.wait(30)
            except subprocess.TimeoutExpired:
                self.namesrv_proc.kill()
                self.namesrv_proc.wait()
        self.namesrv_proc = None

    def _spawn(self, cmd: list[str], out: Path) -> subprocess.Popen[bytes]:
        with self.transcript.open("a", encoding="utf-8") as f:
            f.write(f"$ {' '.join(cmd)} > {out.name} &\n")
        fh = out.open("ab")
        try:
            return subprocess.Popen(
                cmd,
                stdout=fh,
                stderr=subprocess.STDOUT,
                cwd=self.workdir,
                env=self.env(),
                start_new_session=True,
            )
        finally:
            fh.close()

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

    # ------------------------------------------------------------------ clients

    def mqadmin(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Real mqadmin against this name server. It exits 0 even on failure: parse stdout/stderr."""
        cmd = [
            *self._jvm("256m", "tools", role="mqadmin"),
            "-cp",
            f"{self.lib}/*",
            "org.apache.rocketmq.tools.command.MQAdminStartup",
            args[0],
            "-n",
            self.namesrv_addr,
            *args[1:],
        ]
        proc = self.run(cmd, timeout=timeout)
        self._adopt_cds("mqadmin")
        return proc

    def mqadmin_ok(self, *args: str, attempts: int = 3) -> str:
        """mqadmin stdout; raises when it printed a stack trace (its exit status is always 0).

        Retries RPC timeouts: on a loaded 2-core box the name server can miss mqadmin's 5 s
        deadline. The commands used here are idempotent (a reset to a time sets the same offsets).
        """
        for attempt in range(attempts):
            proc = self.mqadmin(*args)
            failed = "command failed" in proc.stderr or "Exception" in proc.stderr or proc.returncode != 0
            if not failed:
                return proc.stdout
            if "RemotingTimeoutException" not in proc.stderr or attempt == attempts - 1:
                break
        raise HarnessError(f"mqadmin {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")

    def admin(self, *ops: str) -> None:
        """Create topics/groups in one JVM (see java/Admin.java for the op syntax)."""
        proc = self.java_tool("Admin", [self.namesrv_addr, *ops])
        if proc.returncode != 0 or "DONE" not in proc.stdout:
            raise HarnessError(f"Admin {' '.join(ops)} failed:\n{proc.stdout}\n{proc.stderr}")

    def produce(self, topic: str, plan: Iterable[str], group: str = "compat-producer") -> list[Sent]:
        """Run java/Producer.java with a plan (one verb per line); returns what was stored where."""
        text = "\n".join(plan) + "\n"
        proc = self.java_tool("Producer", [self.namesrv_addr, topic, group], input=text)
        if proc.returncode != 0 or "\nDONE " not in "\n" + proc.stdout:
            raise HarnessError(f"Producer failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
        sent = []
        for line in proc.stdout.splitlines():
            if line.startswith("SENT "):
                _, broker, qid, off, msg_id, tag = line.split(" ")
                sent.append(Sent(broker, int(qid), int(off), msg_id, None if tag == "-" else tag))
        return sent

    def consume(
        self,
        topic: str,
        group: str,
        subexpr: str = "*",
        *,
        max_messages: int = 0,
        idle: int = 5,
        linger: int = 4,
    ) -> list[Received]:
        """Run java/Consumer.java (push, clustering) until ``idle`` seconds pass without a message."""
        args = [self.namesrv_addr, topic, group, subexpr, str(max_messages), str(idle), str(linger)]
        proc = self.java_tool("Consumer", args, timeout=300)
        if proc.returncode != 0 or "\nDONE " not in "\n" + proc.stdout:
            raise HarnessError(f"Consumer failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
        got = []
        for line in proc.stdout.splitlines():
            if line.startswith("RECV "):
                _, broker, qid, off, tag, ts, msg_id = line.split(" ")
                got.append(Received(broker, int(qid), int(off), None if tag == "-" else tag, int(ts), msg_id))
        return got

    def mqctl(
        self, *args: str, stores: Sequence[str] | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """``python -m mqctl ARGS --store NAME=ROOT ...`` from this interpreter (the repo's venv).

        Default stores: every broker of the session cluster (not the demo broker's own cluster).
        """
        names = (
            [n for n, b in self.brokers.items() if b.cluster == CLUSTER] if stores is None else list(stores)
        )
        store_args: list[str] = []
        for name in names:
            store_args += ["--store", f"{name}={self.brokers[name].store}"]
        return self.run([sys.executable, "-m", "mqctl", *args, *store_args], timeout=timeout, cwd=REPO)

    def wait_offsets_flushed(self) -> None:
        """Consumers commit on shutdown (one-way); the broker writes the file every interval."""
        time.sleep(2.5 * FLUSH_OFFSET_INTERVAL_MS / 1000)

    # ------------------------------------------------------------------ logs

    def keep_logs(self, dest: Path = LOG_DIR) -> Path:
        """Copy server output, broker logs and the command transcript to ``dest``."""
        dest.mkdir(parents=True, exist_ok=True)
        for old in dest.iterdir():  # one session's logs, not a mix of runs
            if old.is_file() and old.name != "fidelity.txt":
                old.unlink()
        for f in [*self.workdir.glob("*.out"), *self.workdir.glob("*.conf"), self.transcript]:
            if f.is_file():
                shutil.copy2(f, dest / f.name)
        rmq_logs = self.home / "logs" / "rocketmqlogs"
        for name in ("broker.log", "namesrv.log", "store.log", "broker_default.log", "tools.log"):
            src = rmq_logs / name
            if src.is_file():
                (dest / f"rocketmqlogs-{name}").write_text(tail(src, 4000))
        return dest


def tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as e:
        return f"<{path}: {e}>"
    return "\n".join(text.splitlines()[-lines:])


# --------------------------------------------------------------------------- mqadmin output


_PROGRESS_ROW = re.compile(
    r"^(?P<topic>\S+)\s+(?P<broker>\S+)\s+(?P<qid>\d+)\s+(?P<broker_offset>-?\d+)\s+(?P<consumer_offset>-?\d+)"
    r"\s+(?P<diff>-?\d+)\s+(?P<inflight>-?\d+)\s+(?P<last>N/A|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)$"
)


@dataclass(frozen=True)
class ProgressRow:
    topic: str
    broker: str
    queue_id: int
    broker_offset: int
    consumer_offset: int
    diff: int
    inflight: int
    last_time: str  # "N/A" or "yyyy-MM-dd HH:mm:ss" (local time of TZ)

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.topic, self.broker, self.queue_id)


def parse_consumer_progress(stdout: str) -> tuple[list[ProgressRow], dict[str, str]]:
    """Rows and the totals lines of ``mqadmin consumerProgress -g G`` (5.1+ layout, spec 3.3)."""
    lines = stdout.splitlines()
    if not lines or not lines[0].startswith("#Topic"):
        raise HarnessError(f"no consumerProgress header in:\n{stdout}")
    rows: list[ProgressRow] = []
    totals: dict[str, str] = {}
    for line in lines[1:]:
        if not line.strip():
            continue
        m = _PROGRESS_ROW.match(line)
        if m:
            rows.append(
                ProgressRow(
                    m["topic"],
                    m["broker"],
                    int(m["qid"]),
                    int(m["broker_offset"]),
                    int(m["consumer_offset"]),
                    int(m["diff"]),
                    int(m["inflight"]),
                    m["last"],
                )
            )
        elif ":" in line:
            k, _, v = line.partition(":")
            totals[k.strip()] = v.strip()
        else:
            raise HarnessError(f"unexpected consumerProgress line {line!r}")
    return rows, totals


def parse_reset_table(stdout: str) -> dict[tuple[str, int], int]:
    """(brokerName, queueId) -> offset from ``mqadmin resetOffsetByTime`` (path B, spec 4.3)."""
    lines = stdout.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("start reset consumer offset"))
    except StopIteration:
        raise HarnessError(f"no reset table in mqadmin output:\n{stdout}") from None
    if not lines[start + 1].startswith("#brokerName"):
        raise HarnessError(f"unexpected reset header {lines[start + 1]!r}")
    table: dict[tuple[str, int], int] = {}
    for line in lines[start + 2 :]:
        if not line.strip():
            continue
        broker, qid, off = line.split()
        table[(broker, int(qid))] = int(off)
    return table


def local_seconds(ms: int) -> str:
    """Epoch ms as mqadmin's LastTime (``yyyy-MM-dd HH:mm:ss``) in the TZ of the test processes."""
    if ms == 0:
        return "N/A"
    old = os.environ.get("TZ")
    os.environ["TZ"] = TZ
    time.tzset()
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms // 1000))
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
        time.tzset()
