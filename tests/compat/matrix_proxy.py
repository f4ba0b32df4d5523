"""rocketmq-proxy in front of the session cluster, and the gRPC clients that talk to it (5.x).

RocketMQ 5's recommended clients (rocketmq-client-java 5.x and the other gRPC SDKs) do not talk
to the brokers: they talk gRPC to a proxy, and their consumers (SimpleConsumer, PushConsumer)
consume in POP mode. The proxy is ``org.apache.rocketmq.proxy.ProxyStartup`` from
``rocketmq-proxy`` (fetch-classpath.sh puts it in ``proxy-lib/``: the tools line's proxy on the
cell's jars; rocketmq-proxy 5.5.1 is not on Central, a 5.5.1 cell runs the 5.5.0 proxy).

- CLUSTER mode (``-pm cluster``): a stateless process in front of the name server; it reaches the
  brokers with the remoting protocol (pop, ack, change-invisible, heartbeats). ``Proxy(servers)``.
- LOCAL mode (``-pm local -bc BROKER.conf``): the proxy and a broker in one JVM (the broker
  registers with the name server like any other). ``Proxy(servers, broker=...)`` with a broker
  configured by ``Servers.add_broker`` and not started.

4.x has neither the proxy nor POP (``RmqVersion.proxy`` is None).

Ports (gRPC, remoting) are picked at run time; heap 256m. Output goes to ``<name>.out`` in the
cluster's workdir (kept with the other logs on failure), the proxy's own log to
``<home>/logs/rocketmqlogs/proxy.log``.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from matrix_jvm import JVM_SMALL, compile_grpc_java, free_port
from matrix_parse import HarnessError
from matrix_servers import CLUSTER, Broker, Servers, tail
from versions import grpc_client_dir, proxy_lib_dir

BOOT_LINE = "rocketmq-proxy startup successfully"

# POP needs the broker's timer wheel: PopMessageProcessor.processRequest answers SYSTEM_ERROR "pop
# message is forbidden because timerWheelEnable is false", and PopReviveService skips the revive
# topic without it (5.3.3 and 5.5.1). The session brokers run without it (its flush thread costs
# CPU), so a POP scenario turns it on with :func:`enable_pop`.
POP_SETTINGS = {"timerWheelEnable": "true"}


def _read_conf(conf: Path) -> dict[str, str]:
    settings = {}
    for line in conf.read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep:
            settings[key.strip()] = value.strip()
    return settings


def enable_pop(servers: Servers) -> bool:
    """Restart the session cluster's brokers with :data:`POP_SETTINGS` unless they run with them.

    Orderly (SIGTERM: offsets and configs persisted), same ports and stores, both brokers at
    once; the rest of the session keeps the timer wheel on. True when a restart happened.
    """
    names = [n for n, b in servers.brokers.items() if b.cluster == CLUSTER]
    todo = [
        n
        for n in names
        if any(_read_conf(servers.brokers[n].conf).get(k) != v for k, v in POP_SETTINGS.items())
    ]
    if not todo:
        return False
    for name in todo:
        b = servers.brokers[name]
        settings = {**_read_conf(b.conf), **POP_SETTINGS}
        b.conf.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        if b.proc is not None and b.proc.poll() is None:
            b.proc.send_signal(signal.SIGTERM)
    for name in todo:
        servers.stop_broker(name)
    servers.start_brokers(todo)
    return True


@dataclass
class GrpcEvent:
    """One line of java/grpc/GrpcConsumer.java's output (RECV, ACK or NOACK)."""

    kind: str
    broker: str
    queue_id: int  # of the stored message: the topic's, or the POP retry topic's (retry)
    offset: int
    topic_type: str  # receipt handle: "0" the topic, "1" POP retry topic v1, "2" v2
    msg_id: str  # the producer's id: the same on every delivery of one message
    tag: str | None = None
    attempt: int = 0
    keys: str | None = None

    @property
    def retry(self) -> bool:
        """Delivered from the group's POP retry topic, not from the topic itself."""
        return self.topic_type != "0"


@dataclass
class GrpcRun:
    """What one GrpcConsumer run received and acknowledged, counted by the client."""

    events: list[GrpcEvent] = field(default_factory=list)
    stdout: str = ""

    @property
    def received(self) -> list[GrpcEvent]:
        return [e for e in self.events if e.kind == "RECV"]

    @property
    def acked(self) -> list[GrpcEvent]:
        return [e for e in self.events if e.kind == "ACK"]

    @property
    def not_acked(self) -> list[GrpcEvent]:
        return [e for e in self.events if e.kind == "NOACK"]


def parse_grpc_run(stdout: str) -> GrpcRun:
    run = GrpcRun(stdout=stdout)
    for line in stdout.splitlines():
        f = line.split(" ")
        if f[0] not in ("RECV", "ACK", "NOACK") or len(f) < 6:
            continue
        where = (f[1], int(f[2]), int(f[3]), f[4])
        if f[0] == "RECV" and len(f) == 9:
            tag = None if f[5] == "-" else f[5]
            keys = None if f[8] == "-" else f[8]
            run.events.append(GrpcEvent("RECV", *where, f[7], tag, int(f[6]), keys))
        elif f[0] == "ACK" and len(f) == 6:
            run.events.append(GrpcEvent("ACK", *where, f[5]))
        elif f[0] == "NOACK" and len(f) == 7:
            run.events.append(GrpcEvent("NOACK", *where, f[6], attempt=int(f[5])))
    return run


class Proxy:
    """One rocketmq-proxy process of ``servers``' version (CLUSTER mode, or LOCAL with ``broker``)."""

    def __init__(self, servers: Servers, name: str = "proxy", *, broker: Broker | None = None) -> None:
        if servers.version.proxy is None:
            raise HarnessError(f"RocketMQ {servers.version} has no proxy (4.x)")
        self.servers = servers
        self.name = name
        self.broker = broker
        self.mode = "local" if broker is not None else "cluster"
        self.lib = proxy_lib_dir(servers.version)
        self.grpc_port = free_port()
        self.remoting_port = free_port()
        self.conf = servers.workdir / f"{name}.json"
        self.out = servers.workdir / f"{name}.out"
        self.proc: subprocess.Popen[bytes] | None = None
        self._grpc_helpers: Path | None = None

    @property
    def endpoint(self) -> str:
        """What a gRPC client is given (``ClientConfiguration.setEndpoints``)."""
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _settings(self) -> dict[str, object]:
        cluster = self.broker.cluster if self.broker is not None else CLUSTER
        return {
            "rocketMQClusterName": cluster,
            "namesrvAddr": self.servers.namesrv_addr,
            "proxyMode": self.mode,
            "proxyName": self.name,
            "grpcServerPort": self.grpc_port,
            "remotingListenPort": self.remoting_port,
            # Fewer threads than the defaults (2-core box; a handful of clients).
            "grpcWorkerLoopNum": 2,
            "grpcThreadPoolNums": 8,
        }

    def start(self, timeout: float = 120) -> None:
        if self.running:
            raise HarnessError(f"{self.name} already running")
        self.conf.write_text(json.dumps(self._settings(), indent=2) + "\n")
        main = "org.apache.rocketmq.proxy.ProxyStartup"
        heap = "384m" if self.broker is not None else "256m"
        jvm = self.servers._jvm(heap, "proxy")
        if self.broker is not None:
            jvm.insert(1, "-XX:MaxDirectMemorySize=256m")
        args = ["-pc", str(self.conf), "-pm", self.mode]
        if self.broker is not None:
            self.broker.store.mkdir(parents=True, exist_ok=True)
            args += ["-bc", str(self.broker.conf)]
        cmd = [*jvm, "-cp", f"{self.lib}/*", main, *args]
        with self.out.open("a") as f:
            f.write(f"\n===== start {time.strftime('%H:%M:%S')} =====\n")
        self.proc = self.servers._spawn(cmd, self.out)
        try:
            self.servers._await_boot(self.proc, self.out, BOOT_LINE, self.grpc_port, timeout)
        except HarnessError:
            self.stop()
            raise
        if self.broker is not None:
            self.servers.await_registered([self.broker.name])

    def stop(self, timeout: float = 30) -> None:
        """SIGTERM (the proxy's shutdown hook closes its servers), SIGKILL after ``timeout``."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def log_tail(self, lines: int = 60) -> str:
        return tail(self.out, lines) + "\n--- proxy.log\n" + tail(self.servers.rmq_logs / "proxy.log", lines)

    # ------------------------------------------------------------------ gRPC clients

    def grpc_helpers(self) -> Path:
        if self._grpc_helpers is None:
            self._grpc_helpers = compile_grpc_java(grpc_client_dir())
        return self._grpc_helpers

    def grpc_consume(
        self,
        mode: str,
        topic: str,
        group: str,
        tags: str = "*",
        *,
        max_messages: int = 0,
        idle: int = 8,
        options: Sequence[str] = (),
        timeout: float = 240,
    ) -> GrpcRun:
        """Run java/grpc/GrpcConsumer.java (``mode`` simple or push) to its end; see its usage."""
        cmd = self._grpc_cmd(mode, topic, group, tags, max_messages, idle, options)
        proc = self.servers.run(cmd, timeout=timeout)
        if proc.returncode != 0 or "\nDONE " not in "\n" + proc.stdout:
            raise HarnessError(f"GrpcConsumer failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
        return parse_grpc_run(proc.stdout)

    def grpc_consumer_start(
        self,
        mode: str,
        topic: str,
        group: str,
        tags: str = "*",
        *,
        stop_file: Path,
        idle: int = 3600,
        options: Sequence[str] = (),
    ) -> subprocess.Popen[str]:
        """Start a GrpcConsumer in the background until ``stop_file`` exists; read it with
        :meth:`grpc_consumer_finish`."""
        opts = [*options, f"stopfile={stop_file}"]
        cmd = self._grpc_cmd(mode, topic, group, tags, 0, idle, opts)
        with self.servers.transcript.open("a", encoding="utf-8") as f:
            f.write(f"$ {' '.join(cmd)} &\n")
        return subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=self.servers.workdir,
            env=self.servers.env(),
            start_new_session=True,
        )

    def grpc_consumer_finish(
        self, proc: subprocess.Popen[str], stop_file: Path, timeout: float = 60, *, stop: bool = True
    ) -> GrpcRun:
        """Stop a background GrpcConsumer (``stop``: create ``stop_file``; else wait for it to end
        by itself, e.g. its ``rounds=K``) and parse what it printed."""
        if stop:
            stop_file.touch()
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            raise HarnessError(f"GrpcConsumer did not stop:\n{out[-4000:]}\n{err[-4000:]}") from None
        with self.servers.transcript.open("a", encoding="utf-8") as f:
            f.write(f"# background GrpcConsumer exit {proc.returncode}\n{out}")
        if proc.returncode != 0 or "\nDONE " not in "\n" + out:
            raise HarnessError(f"GrpcConsumer failed:\n{out[-4000:]}\n{err[-4000:]}")
        return parse_grpc_run(out)

    def _grpc_cmd(
        self,
        mode: str,
        topic: str,
        group: str,
        tags: str,
        max_messages: int,
        idle: int,
        options: Sequence[str],
    ) -> list[str]:
        home = self.servers.home
        cp = f"{self.grpc_helpers()}:{grpc_client_dir()}/*"
        return [
            "java",
            "-Xmx128m",
            *JVM_SMALL,
            f"-Duser.home={home}",
            "-Drocketmq.log.level=info",
            "-cp",
            cp,
            "GrpcConsumer",
            mode,
            self.endpoint,
            topic,
            group,
            tags,
            str(max_messages),
            str(idle),
            *options,
        ]
