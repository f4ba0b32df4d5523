"""JVM plumbing for the compat harness: prerequisites, the helper jar per version, JVM flags, ports."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import socket
import subprocess
from collections.abc import Sequence
from pathlib import Path

from matrix_parse import HarnessError
from versions import JVM_OPENS, RmqVersion, classpath_ready, lib_dir

JAVA_SRC = Path(__file__).resolve().parent / "java"

# C1 only and one GC thread: the servers and clients do little work, and the box has 2 cores.
# JVM log output off stdout (a CDS warning there would corrupt mqadmin's output).
JVM_SMALL = (
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Xlog:disable",
    "-Xlog:all=warning,cds*=off:stderr",
)

__all__ = [
    "JVM_OPENS",
    "JVM_SMALL",
    "compile_grpc_java",
    "compile_java",
    "free_port",
    "missing_prerequisite",
    "port_open",
]


def missing_prerequisite(version: RmqVersion) -> str | None:
    """Why the compat suite cannot run ``version`` here, or None."""
    for tool in ("java", "javac", "jar"):
        if shutil.which(tool) is None:
            return f"'{tool}' not on PATH (tests/compat needs a JDK 17+)"
    if not classpath_ready(version):
        return (
            f"RocketMQ {version} classpath not in {lib_dir(version)}: "
            f"run tests/compat/fetch-classpath.sh {version}"
        )
    return None


def _run_or_raise(cmd: Sequence[str], what: str, staging: Path) -> None:
    proc = subprocess.run(list(cmd), capture_output=True, text=True)
    if proc.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise HarnessError(f"{what} failed:\n{proc.stdout}\n{proc.stderr}")


def compile_java(lib: Path) -> Path:
    """Compile the helper programs against ``lib`` once per source version; returns their jar.

    The jar lives next to ``lib`` (one per RocketMQ version and source hash): the same sources
    compile against the 4.x and the 5.x client (java/Admin.java avoids the moved classes).
    """
    return _compile(sorted(JAVA_SRC.glob("*.java")), lib, "compat-helpers.jar")


def compile_grpc_java(grpc_lib: Path) -> Path:
    """Compile java/grpc/*.java against the gRPC client (rocketmq-client-java) in ``grpc_lib``.

    Kept apart from :func:`compile_java`: the gRPC client's shaded jar and the remoting client
    (with its own gRPC/protobuf) must not share a classpath.
    """
    return _compile(sorted((JAVA_SRC / "grpc").glob("*.java")), grpc_lib, "compat-grpc-helpers.jar")


def _compile(sources: Sequence[Path], lib: Path, jar_name: str) -> Path:
    digest = hashlib.sha256()
    for src in sources:
        digest.update(src.name.encode() + b"\0" + src.read_bytes())
    out = lib.parent / f"classes-{digest.hexdigest()[:12]}"
    if (out / ".complete").is_file():
        return out / jar_name
    staging = lib.parent / f"{out.name}.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    javac = ["javac", "-nowarn", "-encoding", "UTF-8", "-cp", f"{lib}/*", "-d", str(staging / "classes")]
    _run_or_raise([*javac, *map(str, sources)], "javac", staging)
    # A jar, not a class directory: AppCDS refuses non-empty directories on the class path.
    jar = ["jar", "cf", str(staging / jar_name), "-C", str(staging / "classes"), "."]
    _run_or_raise(jar, "jar", staging)
    (staging / ".complete").write_text("ok\n")
    try:
        staging.rename(out)
    except OSError:  # another session won the race; its copy is identical
        shutil.rmtree(staging, ignore_errors=True)
    return out / jar_name


# --------------------------------------------------------------------------- ports


def _bindable(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def _port_window() -> tuple[int, int]:
    """Ports below the kernel's ephemeral range: no outgoing connection (every JVM of the suite
    opens dozens) can take one between our check and the server's bind. The HA port of a broker
    (listenPort + 1) was lost that way once."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    top = min(low, 32768) - 8
    return (max(10240, top - 12000), top)


def _candidate_port() -> int:
    lo, hi = _port_window()
    return random.randrange(lo, hi)


_taken: set[int] = set()


def free_port(*, also_free: Sequence[int] = (), wildcard: bool = False) -> int:
    """A loopback port p (p + d free too for every d in also_free) not handed out before.

    ``wildcard``: check that 0.0.0.0 is free too (4.x servers and every HA port bind it).
    """
    for _ in range(200):
        p = _candidate_port()
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
