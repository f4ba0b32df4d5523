"""A real Apache RocketMQ name server + brokers, mqadmin and tiny Java clients for tests, per version.

``RocketMQ(version, ...)`` runs one cell of the version matrix (versions.py): the processes are
in matrix_servers.py, the parsers of each version's mqadmin output in matrix_parse.py, the JVM
plumbing in matrix_jvm.py. Recipe and pitfalls: the workplace spec ``real-broker.md`` and
docs/rocketmq-versions.md. The names the scenario modules import are all re-exported here.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from matrix_fidelity import Fidelity, FidelityBook
from matrix_jvm import JVM_OPENS, JVM_SMALL, compile_java, free_port, missing_prerequisite, port_open
from matrix_parse import (
    TZ,
    HarnessError,
    ProgressRow,
    ResetRow,
    ResetTable,
    diff_total,
    local_seconds,
    parse_consumer_progress,
    parse_reset,
    parse_reset_table,
    progress_layout,
)
from matrix_servers import (
    CLUSTER,
    COMMITLOG_FILE_SIZE,
    CQ_FILE_SIZE,
    FLUSH_OFFSET_INTERVAL_MS,
    LOG_DIR,
    Broker,
    Servers,
    tail,
)
from versions import RmqVersion, lib_dir

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

__all__ = [
    "CLUSTER",
    "COMMITLOG_FILE_SIZE",
    "CQ_FILE_SIZE",
    "FLUSH_OFFSET_INTERVAL_MS",
    "JVM_OPENS",
    "JVM_SMALL",
    "LOG_DIR",
    "TZ",
    "Broker",
    "Fidelity",
    "FidelityBook",
    "HarnessError",
    "ProgressRow",
    "Received",
    "ResetRow",
    "ResetTable",
    "RmqVersion",
    "RocketMQ",
    "Sent",
    "compile_java",
    "diff_total",
    "free_port",
    "lib_dir",
    "local_seconds",
    "missing_prerequisite",
    "parse_consumer_progress",
    "parse_reset",
    "parse_reset_table",
    "port_open",
    "progress_layout",
    "tail",
]


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


class RocketMQ(Servers):
    """One version's name server and brokers plus the clients run against them (mqadmin, the
    Java helpers, mqctl). ``version`` says which cell of the matrix this is."""

    def java_tool(
        self, main: str, args: Sequence[str], *, input: str | None = None, timeout: float = 180
    ) -> subprocess.CompletedProcess[str]:
        """Run one of the helper programs (java/*.java, compiled against this version's client)."""
        cmd = [*self._jvm("192m", "client", role=main), "-cp", f"{self.classes}:{self.lib}/*", main, *args]
        proc = self.run(cmd, input=input, timeout=timeout)
        self._adopt_cds(main)
        return proc

    def mqadmin(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Real mqadmin against this name server. It exits 0 even on failure: parse stdout/stderr.

        Run through java/MqadminMain.java: ``MQAdminStartup.main`` unchanged, then an immediate
        exit instead of ~3 s of idle netty threads.
        """
        cmd = [
            *self._jvm("256m", "tools", role="mqadmin"),
            "-cp",
            f"{self.classes}:{self.lib}/*",
            "MqadminMain",
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

    def consumer_progress(self, group: str, topic: str | None = None) -> str:
        """``mqadmin consumerProgress -g GROUP [-t TOPIC]`` stdout; 4.x has no ``-t`` (its rows
        then cover every topic of the group: filter them)."""
        args = ["consumerProgress", "-g", group]
        if topic is not None and self.version.progress_has_topic_option:
            args += ["-t", topic]
        return self.mqadmin_ok(*args)

    def await_registered(self, names: Sequence[str]) -> None:
        self.admin(*(f"broker:{name}" for name in names))

    def admin(self, *ops: str) -> None:
        """Create topics/groups in one JVM (see java/Admin.java for the op syntax)."""
        proc = self.java_tool("Admin", [self.namesrv_addr, *ops])
        if proc.returncode != 0 or "DONE" not in proc.stdout:
            raise HarnessError(f"Admin {' '.join(ops)} failed:\n{proc.stdout}\n{proc.stderr}")

    def _client_run(
        self, main: str, args: Sequence[str], marker: str, *, input: str | None = None, timeout: float = 180
    ) -> subprocess.CompletedProcess[str]:
        """java_tool, run again (twice at most) when it failed before doing anything (no
        ``marker`` line): on a loaded 2-core box a client's first name-server request can time
        out, and the client then closes the channel under its own start(). Nothing was sent or
        consumed, so a second run is the same run."""
        for _ in range(3):
            proc = self.java_tool(main, args, input=input, timeout=timeout)
            if proc.returncode == 0 or marker in proc.stdout:
                break
        return proc

    def produce(self, topic: str, plan: Iterable[str], group: str = "compat-producer") -> list[Sent]:
        """Run java/Producer.java with a plan (one verb per line); returns what was stored where."""
        text = "\n".join(plan) + "\n"
        proc = self._client_run("Producer", [self.namesrv_addr, topic, group], "SENT ", input=text)
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
        block_key: str | None = None,
        stop_file: Path | None = None,
    ) -> list[Received]:
        """Run java/Consumer.java (push, clustering) until ``idle`` seconds pass without a message.

        With ``max_messages``, a run that stopped short (a loaded box: the first rebalance came
        after ``idle`` seconds) is followed by up to two more for the rest; the group's offsets
        carry over; a message a later run receives again is not repeated (within one run every
        delivery is kept: a reset's redeliveries are what some scenarios look at). ``block_key``:
        the message with these keys is never acknowledged (Consumer.java's BLOCK_KEY); ``stop_file``:
        the consumer stops as soon as that file exists (the test is done with it)."""
        got: list[Received] = []
        seen: set[tuple[str, int, int]] = set()
        for _ in range(3 if max_messages else 1):
            cap = max_messages - len(seen) if max_messages else 0
            args = [self.namesrv_addr, topic, group, subexpr, str(cap), str(idle), str(linger)]
            args += [block_key or "-", str(stop_file)] if stop_file else [block_key] if block_key else []
            proc = self._client_run("Consumer", args, "RECV ", timeout=300)
            if proc.returncode != 0 or "\nDONE " not in "\n" + proc.stdout:
                raise HarnessError(f"Consumer failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
            run: list[Received] = []
            for line in proc.stdout.splitlines():
                if line.startswith("RECV "):
                    _, broker, qid, off, tag, ts, msg_id = line.split(" ")
                    run.append(
                        Received(broker, int(qid), int(off), None if tag == "-" else tag, int(ts), msg_id)
                    )
            got += [m for m in run if (m.broker, m.queue_id, m.offset) not in seen]
            seen |= {(m.broker, m.queue_id, m.offset) for m in run}
            if len(seen) >= max_messages:
                break
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
