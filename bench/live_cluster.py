"""A real RocketMQ cluster for bench/bench_live.py: a name server and two brokers of one version
from the compat suite's Maven classpath (tests/compat/fetch-classpath.sh), with production-like
segment sizes (the compat suite's tiny consume-queue files would cut QUERY_CONSUME_QUEUE pages at
30 units) and the timer wheel off (its flush thread keeps an idle 5.x broker busy).

    python bench/live_cluster.py [--version 5.3.3] [--workdir DIR]

Prints the -n and --store values for bench_live.py, then runs until Ctrl-C / SIGTERM.
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "compat"))

import versions  # noqa: E402
from compat_harness import RocketMQ, compile_java, lib_dir, missing_prerequisite  # noqa: E402

BENCH_SETTINGS = (
    "timerWheelEnable=false",
    "mappedFileSizeConsumeQueue=6000000",  # the broker's default: 300,000 units per file
    "mappedFileSizeCommitLog=268435456",
    "maxIndexNum=5000000",
    "maxHashSlotNum=500000",
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", default="5.3.3")
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    version = versions.get(args.version)
    reason = missing_prerequisite(version)
    if reason:
        raise SystemExit(
            f"cannot start RocketMQ {version}: {reason} (run tests/compat/fetch-classpath.sh {version})"
        )
    lib = lib_dir(version)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="mqctl-bench-cluster-"))
    cluster = RocketMQ(version, lib, compile_java(lib), work)
    cluster.start_namesrv()
    for name in ("broker-a", "broker-b"):
        cluster.add_broker(name, work / name / "store", extra=BENCH_SETTINGS)
    cluster.start_brokers(["broker-a", "broker-b"])
    stores = " ".join(f"--store {n}={b.store}" for n, b in cluster.brokers.items())
    print(f"RocketMQ {version} up: -n {cluster.namesrv_addr} {stores}", flush=True)

    def stop(*_: object) -> None:
        cluster.stop_all(graceful=False)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while True:
        time.sleep(5)


if __name__ == "__main__":
    main()
