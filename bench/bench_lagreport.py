"""lagReport throughput (run by hand, not in CI): the numpy kernel alone vs the Spark job.

Generates a store whose ConsumeQueue files hold about --gb GB (written directly with numpy: real
20-byte entries, tags from a small set of hashes, physical offsets past a tiny commit log), then
measures in one run, on the same files:

1. the kernel alone, single-threaded: read each CQ file (page cache) + count_tag_matches over the
   unconsumed range; also the count alone over bytes already in memory;
2. the whole lagReport Spark job (binaryFile -> mapInArrow kernel -> aggregates) on local[1]
   and local[2], each run twice on one session (the second, warm run is reported), once with
   the CQ bytes read by Spark (--cq-read spark, the default) and once read by the executors
   from the filesystem after Spark lists them (--cq-read direct).

Reports rows/s and GB/s, and the ratios local[2] / kernel (goal >= 0.5) and local[2] / local[1]
(goal >= 1.7). The store is deleted afterwards unless --keep.

    python bench/bench_lagreport.py [--gb 2.0] [--queues 16] [--workdir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import json
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


def generate(root: Path, gb: float, queues: int, seed: int = 7) -> tuple[int, dict[int, int]]:
    """Config via StoreWriter, CQ files via numpy. Returns (files, committed offset per queue)."""
    w = StoreWriter(root, broker_name="bench-a", commitlog_file_size=1 << 20, cq_file_size=CQ_FILE)
    w.create_topic(TOPIC, queues=queues)
    files_per_queue = max(1, round(gb * 1e9 / CQ_FILE / queues))
    total = files_per_queue * PER_FILE
    committed = {q: total // 10 + q for q in range(queues)}  # 90% of every queue unconsumed
    for q, off in committed.items():
        w.commit_offset(GROUP, TOPIC, q, off)
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
    return files_per_queue * queues, committed


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


def spark_run(root: Path, master: str, driver_memory: str, runs: int, direct: bool) -> dict[str, float]:
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
    return {"seconds": times[-1], "all_seconds": times, "matched": matched}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gb", type=float, default=2.0, help="ConsumeQueue data to generate (GB)")
    ap.add_argument("--queues", type=int, default=16)
    ap.add_argument("--runs", type=int, default=2, help="Spark runs per master (the last is reported)")
    ap.add_argument("--driver-memory", default="2g")
    ap.add_argument("--workdir", type=Path, default=None, help="where to generate (default: a temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the generated store")
    args = ap.parse_args()

    base = Path(tempfile.mkdtemp(prefix="mqctl-bench-lag-", dir=args.workdir))
    root = base / "store"
    try:
        t0 = time.perf_counter()
        n_files, committed = generate(root, args.gb, args.queues)
        gen_s = time.perf_counter() - t0
        hashes = sorted(parse_subexpr(EXPR).hashes)
        k = kernel_alone(root, committed, hashes)
        entries = k["bytes"] / 20
        results: dict[str, object] = {
            "cq_files": n_files,
            "cq_bytes": int(k["bytes"]),
            "entries": int(entries),
            "generate_seconds": round(gen_s, 2),
        }

        def rate(seconds: float) -> dict[str, float]:
            return {
                "seconds": round(seconds, 3),
                "rows_per_s": round(entries / seconds),
                "gb_per_s": round(k["bytes"] / seconds / 1e9, 3),
            }

        results["kernel_read_and_count"] = rate(k["seconds"])
        results["kernel_count_only"] = rate(k["compute_seconds"])
        for mode, direct in (("spark_read", False), ("direct_read", True)):
            one = spark_run(root, "local[1]", args.driver_memory, args.runs, direct)
            two = spark_run(root, "local[2]", args.driver_memory, args.runs, direct)
            for name, s in ((f"{mode}_local1", one), (f"{mode}_local2", two)):
                results[name] = {
                    **rate(float(s["seconds"])),
                    "runs_seconds": [round(x, 2) for x in s["all_seconds"]],
                }
                if s["matched"] != k["matched"]:
                    raise SystemExit(f"{name}: matchedDiff total {s['matched']} != kernel {k['matched']}")
            t2 = float(two["seconds"])
            results[f"{mode}_ratio_local2_vs_kernel_read_and_count"] = round(k["seconds"] / t2, 3)
            results[f"{mode}_ratio_local2_vs_kernel_count_only"] = round(k["compute_seconds"] / t2, 3)
            results[f"{mode}_ratio_local2_vs_local1"] = round(float(one["seconds"]) / t2, 3)
        results["matched_total"] = int(k["matched"])
        print(json.dumps(results, indent=2))
    finally:
        if args.keep:
            print(f"kept {base}", file=sys.stderr)
        else:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
