"""Broadcasting consumers (java/BroadcastConsumer.java) and the ``offsets.json`` they keep.

A BROADCASTING push consumer keeps its offsets in its own file (LocalFileOffsetStore):
``<dir>/<clientId>/<group>/offsets.json`` with ``<dir>`` the JVM's system property
``rocketmq.client.localOffsetStoreDir``. :class:`BroadcastClient` is one client instance (an
instance name and an offsets directory of its own, like one host of a fleet); ``run`` runs it to
its end, ``start``/``finish`` around something the test does while it runs. Every run returns
what the consumer printed: its clientId, each message it received and the offsets it held in
memory when it stopped (after its process queues drained).
"""

from __future__ import annotations

import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from compat_harness import HarnessError, Received, RocketMQ

OFFSET_STORE_PROPERTY = "rocketmq.client.localOffsetStoreDir"


@dataclass
class BroadcastRun:
    """What one run of BroadcastConsumer printed."""

    client_id: str
    received: list[Received]
    memory_offsets: dict[tuple[str, int], int]  # (broker, queueId) -> the client's in-memory offset
    stdout: str
    stderr: str

    def per_queue(self) -> Counter[tuple[str, int]]:
        return Counter((m.broker, m.queue_id) for m in self.received)


def parse_run(stdout: str, stderr: str = "") -> BroadcastRun:
    client_id = ""
    received: list[Received] = []
    offsets: dict[tuple[str, int], int] = {}
    for line in stdout.splitlines():
        if line.startswith("START "):
            client_id = line.split(" ", 1)[1].strip()
        elif line.startswith("RECV "):
            _, broker, qid, off, tag, ts, msg_id = line.split(" ")
            received.append(
                Received(broker, int(qid), int(off), None if tag == "-" else tag, int(ts), msg_id)
            )
        elif line.startswith("OFFSET "):
            _, broker, qid, off = line.split(" ")
            offsets[(broker, int(qid))] = int(off)
    return BroadcastRun(client_id, received, offsets, stdout, stderr)


@dataclass
class BroadcastClient:
    """One broadcasting client instance: ``instance`` name, its own offsets directory ``store_dir``."""

    cluster: RocketMQ
    topic: str
    group: str
    subexpr: str
    instance: str
    store_dir: Path
    options: dict[str, str] = field(default_factory=dict)
    wrapper: tuple[str, ...] = ()  # a command to run the JVM under (strace in a fact-finding run)
    proc: subprocess.Popen[str] | None = None
    _runs: int = 0
    _out: Path | None = None
    _err: Path | None = None

    def _cmd(self, extra: dict[str, str]) -> list[str]:
        c = self.cluster
        opts = {**self.options, **extra}
        jvm = [
            *c._jvm("160m", "client", role="BroadcastConsumer"),
            f"-D{OFFSET_STORE_PROPERTY}={self.store_dir}",
        ]
        args = [c.namesrv_addr, self.topic, self.group, self.subexpr, self.instance]
        return [
            *self.wrapper,
            *jvm,
            "-cp",
            f"{c.classes}:{c.lib}/*",
            "BroadcastConsumer",
            *args,
            *(f"{k}={v}" for k, v in opts.items()),
        ]

    def run(self, timeout: float = 120, **extra: str) -> BroadcastRun:
        """Run to the end (max / idle / stop file); raises unless it printed DONE."""
        proc = self.cluster.run(self._cmd(extra), timeout=timeout)
        self.cluster._adopt_cds("BroadcastConsumer")
        return self._result(proc.returncode, proc.stdout, proc.stderr)

    def start(self, **extra: str) -> None:
        """Start in the background, output to files in the cluster's workdir (``finish`` collects it)."""
        if self.proc is not None and self.proc.poll() is None:
            raise HarnessError(f"{self.instance} already running")
        self._runs += 1
        self._out = self.cluster.workdir / f"broadcast-{self.instance}-{self._runs}.out"
        self._err = self._out.with_suffix(".err")
        with self._out.open("w") as out, self._err.open("w") as err:
            self.proc = subprocess.Popen(
                self._cmd(extra),
                stdout=out,
                stderr=err,
                text=True,
                cwd=self.cluster.workdir,
                env=self.cluster.env(),
            )

    def printed(self) -> str:
        return self._out.read_text(errors="replace") if self._out is not None else ""

    def await_line(self, prefix: str, timeout: float = 60) -> str:
        """Block until the background run printed a line starting with ``prefix``; that line."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.printed().splitlines():
                if line.startswith(prefix):
                    return line
            if self.proc is None or self.proc.poll() is not None:
                break
            time.sleep(0.2)
        raise HarnessError(
            f"{self.instance}: no {prefix!r} line within {timeout}s:\n{self.printed()[-3000:]}"
        )

    def finish(self, timeout: float = 120) -> BroadcastRun:
        """Wait for the background run to end by itself; killed (and raised) after ``timeout``."""
        proc = self.proc
        if proc is None:
            raise HarnessError(f"{self.instance} was not started")
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise HarnessError(
                f"{self.instance} did not end within {timeout}s:\n{self.printed()[-3000:]}"
            ) from None
        self.proc = None
        self.cluster._adopt_cds("BroadcastConsumer")
        err = self._err.read_text(errors="replace") if self._err is not None else ""
        return self._result(proc.returncode, self.printed(), err)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def _result(self, code: int, out: str, err: str) -> BroadcastRun:
        with self.cluster.transcript.open("a", encoding="utf-8") as f:
            f.write(f"# BroadcastConsumer {self.instance} exit {code}\n{out}{err}\n")
        if code != 0 or "\nDONE " not in "\n" + out:
            raise HarnessError(
                f"BroadcastConsumer {self.instance} failed ({code}):\n{out[-4000:]}\n{err[-4000:]}"
            )
        return parse_run(out, err)

    # ------------------------------------------------------------------ its file

    def offsets_path(self, client_id: str) -> Path:
        return self.store_dir / client_id / self.group / "offsets.json"
