"""The RocketMQ versions the compat suite runs against, and what differs between them for the harness.

``MQCTL_COMPAT_VERSIONS`` (comma list) picks the cells, default :data:`DEFAULT_VERSIONS`. A cell is
named after its broker; its name server, mqadmin (tools) and Java client may come from another
release when the broker's line is not published whole (5.5.1: only broker, store, common,
remoting, tiered-store and controller are on Maven Central, the rest is 5.5.0). Facts:
docs/rocketmq-versions.md.

Also a tiny CLI for ``fetch-classpath.sh`` (the single source of the version table)::

    python3 versions.py list            # the cells of MQCTL_COMPAT_VERSIONS or the default
    python3 versions.py maven 5.5.1     # "5.5.1 5.5.0": broker line, tools line
    python3 versions.py proxy 5.5.1     # "5.5.0": the rocketmq-proxy version (exit 1 on 4.x)
    python3 versions.py grpc-client     # the rocketmq-client-java version of every 5.x cell
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

DEFAULT_VERSIONS = ("4.9.7", "5.3.3", "5.5.1")
# The gRPC client (SimpleConsumer, PushConsumer over gRPC) of every 5.x cell: one version that
# talks to the 5.3.3 proxy (rocketmq-proto 2.0.4) and the 5.5.0 proxy (rocketmq-proto 2.1.2).
GRPC_CLIENT_VERSION = "5.2.0"
ENV_VERSIONS = "MQCTL_COMPAT_VERSIONS"

# JDK 17 flags. 4.9.7 needs java.nio and jdk.internal.ref (MappedFile.clean on shutdown and file
# deletion); sun.nio.ch only on non-default store paths; java.lang/java.util for 5.x (hessian,
# fastjson reflection). Harmless where unneeded, so every version gets the same set.
JVM_OPENS = (
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
)


@dataclass(frozen=True)
class RmqVersion:
    """One cell of the matrix."""

    name: str  # the cell, = the broker's version ("5.5.1")
    broker: str  # Maven version of broker/store/common/remoting/tiered-store/controller
    tools: str  # Maven version of namesrv/tools/client/srvutil/filter/auth

    def __str__(self) -> str:
        return self.name

    @property
    def major(self) -> int:
        return int(self.name.split(".")[0])

    def at_least(self, *release: int) -> bool:
        """The broker line is ``release`` or newer: ``v.at_least(5, 5)``."""
        own = tuple(int(p) for p in self.broker.split("."))
        return own[: len(release)] >= release

    @property
    def legacy(self) -> bool:
        """A 4.x cell: 4.x mqadmin layouts, logback confs in ROCKETMQ_HOME, no bindAddress."""
        return self.major < 5

    @property
    def binds_loopback(self) -> bool:
        """5.x servers honour ``bindAddress``; 4.x NettyServerConfig has none (0.0.0.0)."""
        return not self.legacy

    @property
    def progress_has_topic_option(self) -> bool:
        """``mqadmin consumerProgress -t`` exists from 5.x on (4.9.7: -g and -s only)."""
        return not self.legacy

    @property
    def offline_reset_path(self) -> str:
        """The path ``mqadmin resetOffsetByTime`` takes for an offline group (docs §2.2).

        4.x: the broker answers 206 (consumer not online) when the group has a committed offset
        on every write queue (without one it fails: "THe consumer group <G> not exist"), and
        mqadmin resets queue by queue itself (path C, 6-column table). 5.x: server side (B).
        """
        return "C" if self.legacy else "B"

    @property
    def proxy(self) -> str | None:
        """Maven version of ``rocketmq-proxy`` for this cell, None when the line has none (4.x).

        The tools line: rocketmq-proxy 5.5.1 is not on Central, a 5.5.1 cell runs the 5.5.0 proxy
        (on the cell's broker/common/remoting jars, like its name server)."""
        return None if self.legacy else self.tools

    @property
    def description(self) -> str:
        if self.broker == self.tools:
            return f"RocketMQ {self.name}"
        return f"RocketMQ {self.broker} broker with {self.tools} name server/mqadmin/client"


KNOWN = {
    "4.9.7": RmqVersion("4.9.7", "4.9.7", "4.9.7"),
    "5.3.3": RmqVersion("5.3.3", "5.3.3", "5.3.3"),
    "5.5.1": RmqVersion("5.5.1", "5.5.1", "5.5.0"),
}


def get(name: str) -> RmqVersion:
    name = name.strip()
    if name in KNOWN:
        return KNOWN[name]
    parts = name.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ValueError(f"not a RocketMQ version: {name!r} (expected like 5.3.3)")
    return RmqVersion(name, name, name)  # a release published whole


def selected() -> list[RmqVersion]:
    """The cells of ``MQCTL_COMPAT_VERSIONS`` (default :data:`DEFAULT_VERSIONS`), in that order."""
    raw = os.environ.get(ENV_VERSIONS, "").strip()
    names = [n for n in raw.split(",") if n.strip()] if raw else list(DEFAULT_VERSIONS)
    out: list[RmqVersion] = []
    for n in names:
        v = get(n)
        if v not in out:
            out.append(v)
    return out


# --------------------------------------------------------------------------- cache


def cache_root() -> Path:
    env = os.environ.get("MQCTL_COMPAT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "mqctl-compat"


def version_dir(v: RmqVersion) -> Path:
    return cache_root() / f"rocketmq-{v.name}"


def lib_dir(v: RmqVersion) -> Path:
    return version_dir(v) / "lib"


def classpath_ready(v: RmqVersion) -> bool:
    return (lib_dir(v) / ".complete").is_file()


def proxy_lib_dir(v: RmqVersion) -> Path:
    """The proxy's jars (rocketmq-proxy and its dependencies, the cell's pins) for a 5.x cell."""
    return version_dir(v) / "proxy-lib"


def grpc_client_dir() -> Path:
    """The gRPC client's jar(s), shared by every 5.x cell (kept apart from the remoting client)."""
    return cache_root() / f"rocketmq-client-java-{GRPC_CLIENT_VERSION}" / "lib"


def proxy_classpath_ready(v: RmqVersion) -> bool:
    return (proxy_lib_dir(v) / ".complete").is_file() and (grpc_client_dir() / ".complete").is_file()


# --------------------------------------------------------------------------- 4.x logback

# 4.x NamesrvStartup / BrokerStartup / MQAdminStartup configure logback 1.2 from
# <rocketmqHome>/conf/logback_<role>.xml and nothing else (mqadmin prints a JoranException and
# does nothing when it is missing). One file appender per role, INFO and up.
_LOGBACK = """<?xml version="1.0" encoding="UTF-8"?>
<configuration>
  <appender name="file" class="ch.qos.logback.core.FileAppender">
    <file>{log_dir}/{role}.log</file>
    <append>true</append>
    <encoder>
      <pattern>%d{{yyyy-MM-dd HH:mm:ss.SSS}} %-5level [%thread] %logger{{0}} - %msg%n</pattern>
    </encoder>
  </appender>
  <root level="INFO">
    <appender-ref ref="file"/>
  </root>
</configuration>
"""
LOGBACK_ROLES = {"namesrv": "namesrv", "broker": "broker", "tools": "tools"}


def write_logback_confs(home: Path, log_dir: Path) -> None:
    """conf/logback_{namesrv,broker,tools}.xml under ``home`` (the 4.x ROCKETMQ_HOME)."""
    conf = home / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    for role, log_name in LOGBACK_ROLES.items():
        text = _LOGBACK.format(log_dir=log_dir, role=log_name)
        (conf / f"logback_{role}.xml").write_text(text, encoding="utf-8")


def _main(argv: list[str]) -> int:
    if argv[:1] == ["list"] and len(argv) == 1:
        print(" ".join(v.name for v in selected()))
        return 0
    if argv[:1] == ["maven"] and len(argv) == 2:
        v = get(argv[1])
        print(f"{v.broker} {v.tools}")
        return 0
    if argv[:1] == ["proxy"] and len(argv) == 2:
        proxy = get(argv[1]).proxy
        if proxy is None:
            return 1
        print(proxy)
        return 0
    if argv == ["grpc-client"]:
        print(GRPC_CLIENT_VERSION)
        return 0
    print("usage: versions.py list | maven VERSION | proxy VERSION | grpc-client", file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(_main(sys.argv[1:]))
    except ValueError as e:
        print(f"versions.py: {e}", file=sys.stderr)
        sys.exit(2)
