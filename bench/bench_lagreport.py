"""lagReport throughput (run by hand, not in CI), on stores and on a live cluster.

``store`` (the default): generates a store whose ConsumeQueue files hold about --gb GB (written
directly with numpy: real 20-byte entries, tags from a small set of hashes, physical offsets
past a tiny commit log), or reuses one (--store), then measures on the same files:

1. the kernel alone, single-threaded: read each CQ file (page cache) + count_tag_matches over the
   unconsumed range; also the count alone over bytes already in memory;
2. the whole lagReport Spark job (CQ files -> mapInArrow kernel -> aggregates) on local[1] and
   local[2], --runs times each on one session, once per CQ read mode: ``spark`` (binaryFile:
   Spark reads the bytes) and ``direct`` (the driver lists, executors map the files).

Every figure is the best of its runs (the machine may be shared: the best run is the one least
disturbed; all runs are printed too, with the load average), and ratios are side by side:
Spark / kernel for local[1] and local[2] (goal >= 0.5 on local[2]) and local[2] / local[1].

``live``: lagReport -n over a cluster with many groups: -n NAMESRV of a running cluster, or
--start to start RocketMQ 5.3.3 (name server + two brokers, tests/compat's harness); --setup
creates --groups groups with the admin requests through mqctl's own RemotingClient (see
bench_lagreport_live.py). Prints the driver's fetch (wall, CPU, requests), the per-broker split
(one process per broker fetching its consume stats, as executors would), the Spark part on
local[1] and local[2], and the whole CLI (python -m mqctl lagReport -n) wall time and rows/s.

    python bench/bench_lagreport.py [store] [--gb 2.0] [--queues 16] [--store DIR] [--keep]
    python bench/bench_lagreport.py live (--start | -n HOST:PORT) [--setup] [--groups 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mqctl.model import java_string_hash, parse_subexpr  # noqa: E402
from mqctl.pipeline.inputs import consumer_queues, load_broker_input, parse_subscriptions  # noqa: E402
from mqctl.store.consumequeue import CQ_DTYPE  # noqa: E402
from mqctl.store.scan import count_tag_matches  # noqa: E402
from mqctl.store.writer import StoreWriter  # noqa: E402

CQ_FILE = 6_000_000  # the broker default: 300,000 entries
PER_FILE = CQ_FILE // 20
TOPIC, GROUP = "BenchTopic", "bench_group"
EXPR = "TagA || TagB"
TAGS = ["TagA", "TagB", "TagC", "TagD", "Aa", ""]


def generate(root: Path, gb: float, queues: int, seed: int = 7) -> None:
    """Config via StoreWriter, CQ files via numpy; 90% of every queue unconsumed."""
    w = StoreWriter(root, broker_name="bench-a", commitlog_file_size=1 << 20, cq_file_size=CQ_FILE)
    w.create_topic(TOPIC, queues=queues)
    files_per_queue = max(1, round(gb * 1e9 / CQ_FILE / queues))
    total = files_per_queue * PER_FILE
    for q in range(queues):
        w.commit_offset(GROUP, TOPIC, q, total // 10 + q)
    w.close()
    rng = np.random.default_rng(seed)
    codes = np.array([java_string_hash(t) for t in TAGS], dtype=np.int64)
    for q in range(queues):
        qdir = root / "consumequeue" / TOPIC / str(q)
        qdir.mkdir(parents=True, exist_ok=True)
        for k in range(files_per_queue):
            e = np.empty(PER_FILE, dtype=CQ_DTYPE)
            first = k * PER_FILE
            e["phys"] = (np.arange(first, first + PER_FILE, dtype=np.int64) * 64) + (1 << 30)
            e["size"] = 64
            e["tags"] = codes[rng.integers(0, len(codes), PER_FILE)]
            e.tofile(qdir / f"{first * 20:020d}")


def kernel_alone(root: Path, committed: dict[int, int], hashes: list[int]) -> dict[str, float]:
    files = sorted((root / "consumequeue" / TOPIC).glob("*/[0-9]*"))
    total_bytes = sum(p.stat().st_size for p in files)
    matched = 0
    compute = 0.0
    t0 = time.perf_counter()
    for p in files:
        entries = np.fromfile(p, dtype=CQ_DTYPE)
        start = int(p.name) // 20
        lo = max(committed[int(p.parent.name)] - start, 0)
        c0 = time.perf_counter()
        matched += count_tag_matches(entries[lo:], hashes)
        compute += time.perf_counter() - c0
    wall = time.perf_counter() - t0
    return {"seconds": wall, "compute_seconds": compute, "bytes": total_bytes, "matched": matched}


def spark_run(root: Path, master: str, driver_memory: str, runs: int, direct: bool) -> dict[str, object]:
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from mqctl.pipeline import spark_job

    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()
    spark = spark_job.build_session(master, driver_memory=driver_memory)
    spark.sparkContext.setLogLevel("ERROR")
    brokers = [load_broker_input("bench-a", root)]
    rows = consumer_queues(brokers, parse_subscriptions({GROUP: {TOPIC: EXPR}}, "bench"))
    times = []
    matched = 0
    try:
        for _ in range(runs):
            t0 = time.perf_counter()
            report = spark_job.run_lag_report(spark, brokers, rows, int(time.time() * 1000), direct=direct)
            (row,) = report.agg(F.sum("matchedDiff").alias("m")).collect()
            times.append(time.perf_counter() - t0)
            matched = int(row.m)
    finally:
        spark.stop()
    # The first run starts the Python workers and warms the JVM: the best of the others counts.
    return {"seconds": min(times[1:] or times), "all_seconds": times, "matched": matched}


def store_bench(args: argparse.Namespace) -> None:
    base = Path(tempfile.mkdtemp(prefix="mqctl-bench-lag-", dir=args.workdir)) if args.store is None else None
    root = args.store if args.store is not None else base / "store"  # type: ignore[operator]
    try:
        t0 = time.perf_counter()
        if args.store is None:
            generate(root, args.gb, args.queues)
        gen_s = time.perf_counter() - t0
        committed = dict(load_broker_input("bench-a", root).offsets[f"{TOPIC}@{GROUP}"])
        hashes = sorted(parse_subexpr(EXPR).hashes)
        runs = [kernel_alone(root, committed, hashes) for _ in range(args.kernel_runs)]
        k = min(runs, key=lambda r: r["seconds"])
        k["compute_seconds"] = min(r["compute_seconds"] for r in runs)
        entries = k["bytes"] / 20
        results: dict[str, object] = {"loadavg_start": [round(x, 1) for x in os.getloadavg()]}
        results |= {"cq_files": len(list((root / "consumequeue" / TOPIC).glob("*/[0-9]*")))}
        results |= {"cq_bytes": int(k["bytes"]), "entries": int(entries), "generate_seconds": round(gen_s, 2)}

        def rate(seconds: float) -> dict[str, float]:
            return {
                "seconds": round(seconds, 3),
                "rows_per_s": round(entries / seconds),
                "gb_per_s": round(k["bytes"] / seconds / 1e9, 3),
            }

        results["kernel_read_and_count"] = {
            **rate(k["seconds"]),
            "runs_seconds": [round(r["seconds"], 3) for r in runs],
        }
        results["kernel_count_only"] = rate(k["compute_seconds"])
        for mode in args.modes.split(","):
            direct = {"spark": False, "direct": True}[mode]
            one = spark_run(root, "local[1]", args.driver_memory, args.runs, direct)
            two = spark_run(root, "local[2]", args.driver_memory, args.runs, direct)
            for name, s in ((f"{mode}_read_local1", one), (f"{mode}_read_local2", two)):
                results[name] = {
                    **rate(float(s["seconds"])),
                    "runs_seconds": [round(x, 2) for x in s["all_seconds"]],
                }  # type: ignore[attr-defined]
                if s["matched"] != k["matched"]:
                    raise SystemExit(f"{name}: matchedDiff total {s['matched']} != kernel {k['matched']}")
            t1, t2 = float(one["seconds"]), float(two["seconds"])  # type: ignore[arg-type]
            results[f"{mode}_read_ratios"] = {
                "local1_vs_kernel_read_and_count": round(k["seconds"] / t1, 3),
                "local2_vs_kernel_read_and_count": round(k["seconds"] / t2, 3),
                "local2_vs_kernel_count_only": round(k["compute_seconds"] / t2, 3),
                "local2_vs_local1": round(t1 / t2, 3),
            }
        results["matched_total"] = int(k["matched"])
        results["loadavg_end"] = [round(x, 1) for x in os.getloadavg()]
        print(json.dumps(results, indent=2))
    finally:
        if base is not None and args.keep:
            print(f"kept {base}", file=sys.stderr)
        elif base is not None:
            shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what")
    st = sub.add_parser("store", help="stores: the kernel vs the Spark job (default)")
    for p in (ap, st):
        p.add_argument("--gb", type=float, default=2.0, help="ConsumeQueue data to generate (GB)")
        p.add_argument("--queues", type=int, default=16)
        p.add_argument("--runs", type=int, default=3, help="Spark runs per master (the best warm one counts)")
        p.add_argument("--kernel-runs", type=int, default=3, help="kernel runs (the best counts)")
        p.add_argument("--modes", default="spark,direct", help="CQ read modes to run: spark,direct")
        p.add_argument("--driver-memory", default="2g")
        p.add_argument("--workdir", type=Path, default=None, help="where to generate (default: a temp dir)")
        p.add_argument("--store", type=Path, default=None, help="reuse a store generated with --keep")
        p.add_argument("--keep", action="store_true", help="keep the generated store")
    live = sub.add_parser("live", help="lagReport -n over a cluster with many groups")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_lagreport_live import add_live_args, live_bench

    add_live_args(live)
    args = ap.parse_args()
    if args.what == "live":
        live_bench(args)
    else:
        store_bench(args)


if __name__ == "__main__":
    main()
