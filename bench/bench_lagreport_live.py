"""lagReport -n over a cluster with many groups (``python bench/bench_lagreport.py live ...``).

--start runs RocketMQ 5.3.3 (a name server and broker-a, broker-b) through tests/compat's
harness, imported defensively (the version-matrix harness or the single-version one before
it); -n NAMESRV uses a running cluster instead. --setup (implied by --start) creates, on every
broker, --topics topics of --queues queues with --messages messages each, and --groups groups,
with mqctl's own RemotingClient: UPDATE_AND_CREATE_TOPIC (17) for the topics and each group's
%RETRY% topic, UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200, a SubscriptionGroupConfig JSON body),
SEND_MESSAGE (10), and UPDATE_CONSUMER_OFFSET (15) so each group has lag on its topic.

Measured (best of --runs, all runs printed): the driver's fetch (wall, CPU, requests) without
and with --lag-time; GET_CONSUME_STATS for every group from one process vs one process per
broker at once (what executors fetching per broker would do); the Spark part (rows -> report ->
parquet + top groups) on local[1] and local[2]; the whole CLI, python -m mqctl lagReport -n.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from multiprocessing import get_context
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BROKERS = ("broker-a", "broker-b")


def add_live_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-n", "--namesrv", help="name server of a running cluster (host:port)")
    p.add_argument("--start", action="store_true", help="start RocketMQ 5.3.3 with tests/compat's harness")
    p.add_argument("--setup", action="store_true", help="create topics, groups, messages, offsets")
    p.add_argument("--groups", type=int, default=1000)
    p.add_argument("--topics", type=int, default=50)
    p.add_argument("--queues", type=int, default=8)
    p.add_argument("--messages", type=int, default=20, help="messages per queue")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--workdir", type=Path, default=None)
    p.add_argument("--serve", type=float, default=0, metavar="SECONDS",
                   help="with --start: set up, print the name server, keep the cluster this long, stop")  # fmt: skip


def start_cluster(workdir: Path) -> Any:
    """Name server + broker-a + broker-b of RocketMQ 5.3.3, with whichever harness is there."""
    sys.path.insert(0, str(ROOT / "tests" / "compat"))
    try:  # the version matrix: servers only (no Java helpers needed)
        import versions  # type: ignore[import-not-found]
        from matrix_servers import Servers  # type: ignore[import-not-found]

        v = versions.get("5.3.3")
        if not versions.classpath_ready(v):
            raise SystemExit(
                f"no RocketMQ 5.3.3 jars under {versions.lib_dir(v)}: run tests/compat/fetch-classpath.sh 5.3.3"
            )
        cluster = Servers(v, versions.lib_dir(v), versions.lib_dir(v).parent, workdir)
    except ImportError:  # the single-version harness
        import compat_harness as H  # type: ignore[import-not-found]

        reason = H.missing_prerequisite()
        if reason:
            raise SystemExit(f"cannot start RocketMQ: {reason}") from None
        cluster = H.RocketMQ(H.lib_dir(), H.compile_java(H.lib_dir()), workdir)
    cluster.start_namesrv()
    for name in BROKERS:
        cluster.add_broker(name, workdir / name / "store")
    cluster.start_brokers(list(BROKERS))
    return cluster


def _call_all(net: Any, calls: list, what: str, chunk: int = 4000) -> None:
    from mqctl.errors import MqctlError

    for i in range(0, len(calls), chunk):
        for c, r in zip(calls[i : i + chunk], net.call_many(calls[i : i + chunk])):
            if isinstance(r, MqctlError) or r.code != 0:
                raise SystemExit(
                    f"{what} {c.ext_fields or ''}: {r if isinstance(r, MqctlError) else r.remark}"
                )


def setup(ns: str, args: argparse.Namespace) -> dict[str, float]:
    from mqctl.backends.live import LiveBackend
    from mqctl.remoting.client import Call

    def topic(name: str, queues: int) -> dict[str, object]:
        return {"topic": name, "defaultTopic": "TBW102", "readQueueNums": queues, "writeQueueNums": queues,
                "perm": 6, "topicFilterType": "SINGLE_TAG", "topicSysFlag": 0, "order": "false"}  # fmt: skip

    t0 = time.monotonic()
    with LiveBackend(ns, timeout=3600, request_timeout=120) as be:
        deadline = time.monotonic() + 60
        while {b.broker_name for b in be.net.brokers()} < set(BROKERS) and time.monotonic() < deadline:
            time.sleep(1)
            be.net._cluster = None  # ask the name server again
        addrs = [b.select_addr() for b in be.net.brokers()]
        topics = [f"BenchTopic{t}" for t in range(args.topics)]
        groups = [f"bench_group_{g:05d}" for g in range(args.groups)]
        _call_all(be.net, [Call(a, 17, topic(t, args.queues)) for a in addrs for t in topics], "create topic")
        config = {"consumeEnable": True, "consumeFromMinEnable": True, "consumeBroadcastEnable": True,
                  "retryQueueNums": 1, "retryMaxTimes": 16, "brokerId": 0, "whichBrokerWhenConsumeSlowly": 1,
                  "notifyConsumerIdsChangedEnable": True, "groupSysFlag": 0, "consumeTimeoutMinute": 15}  # fmt: skip
        bodies = [json.dumps({"groupName": g, **config}).encode() for g in groups]
        _call_all(be.net, [Call(a, 200, {}, b) for a in addrs for b in bodies], "create group")
        _call_all(
            be.net, [Call(a, 17, topic(f"%RETRY%{g}", 1)) for a in addrs for g in groups], "retry topic"
        )
        t1 = time.monotonic()
        sends = [
            Call(
                a,
                10,
                {
                    "producerGroup": "bench_producer",
                    "topic": t,
                    "defaultTopic": "TBW102",
                    "defaultTopicQueueNums": 4,
                    "queueId": q,
                    "sysFlag": 0,
                    "bornTimestamp": int(time.time() * 1000),
                    "flag": 0,
                    "properties": f"TAGS\x01Tag{m % 3}\x02",
                    "reconsumeTimes": 0,
                    "unitMode": "false",
                    "batch": "false",
                },
                b"x" * 100,
            )  # fmt: skip
            for a in addrs
            for t in topics
            for q in range(args.queues)
            for m in range(args.messages)
        ]
        _call_all(be.net, sends, "send")
        commits = [
            Call(
                a,
                15,
                {
                    "consumerGroup": g,
                    "topic": topics[i % len(topics)],
                    "queueId": q,
                    "commitOffset": (i * 7 + q) % (args.messages + 1),
                },
            )  # fmt: skip
            for a in addrs
            for i, g in enumerate(groups)
            for q in range(args.queues)
        ]
        commits += [Call(a, 15, {"consumerGroup": g, "topic": f"%RETRY%{g}", "queueId": 0, "commitOffset": 0})
                    for a in addrs for g in groups]  # fmt: skip
        _call_all(be.net, commits, "commit")
    return {"admin_seconds": round(t1 - t0, 1), "data_seconds": round(time.monotonic() - t1, 1)}


def _fetch(ns: str, lag_time: bool) -> dict[str, Any]:
    from mqctl.backends.live import LiveBackend
    from mqctl.pipeline.lagreport import live_snapshot

    w0, c0 = time.perf_counter(), time.process_time()
    with LiveBackend(ns, timeout=600, request_timeout=60) as be:
        snap, failure = live_snapshot(be, lag_time=lag_time)
        requests = dict(sorted(be.requests.items()))
    if failure is not None:
        raise SystemExit(f"fetch: {failure.message}")
    return {
        "wall": time.perf_counter() - w0,
        "cpu": time.process_time() - c0,
        "requests": requests,
        "snap": snap,
    }


def _stats_of(ns: str, groups: list[str], brokers: list[str]) -> float:
    """GET_CONSUME_STATS of every group on ``brokers``, pipelined and decoded: the seconds."""
    from mqctl.backends.live import LiveBackend

    t0 = time.perf_counter()
    with LiveBackend(ns, timeout=600, request_timeout=60) as be:
        reqs = [(b, 208, {"consumerGroup": g}) for g in groups for b in brokers]
        results = be.ask(reqs)
        n = len(brokers)
        for i, g in enumerate(groups):
            be.merge_stats(g, reqs[i * n : (i + 1) * n], results[i * n : (i + 1) * n])
    return time.perf_counter() - t0


def split_vs_driver(ns: str, groups: list[str]) -> dict[str, float]:
    one = _stats_of(ns, groups, list(BROKERS))
    t0 = time.perf_counter()
    with get_context("fork").Pool(len(BROKERS)) as pool:
        each = pool.starmap(_stats_of, [(ns, groups, [b]) for b in BROKERS])
    return {"one_process_s": round(one, 3), "per_broker_processes_s": round(time.perf_counter() - t0, 3),
            "per_broker_each_s": [round(x, 3) for x in each]}  # fmt: skip


def spark_part(snap: Any, master: str, runs: int, workdir: Path) -> dict[str, Any]:
    from pyspark.sql import SparkSession

    from mqctl.pipeline import spark_job
    from mqctl.pipeline.lagreport_live import run_live_report

    if (active := SparkSession.getActiveSession()) is not None:
        active.stop()
    spark = spark_job.build_session(master, driver_memory="1g")
    spark.sparkContext.setLogLevel("ERROR")
    times = []
    try:
        for i in range(runs):
            t0 = time.perf_counter()
            report = run_live_report(spark, snap, int(time.time() * 1000)).cache()
            spark_job.write_report(report, str(workdir / f"out-{master}-{i}"), "parquet")
            spark_job.top_groups_df(report, 20).collect()
            report.unpersist()
            times.append(time.perf_counter() - t0)
    finally:
        spark.stop()
    return {"seconds": round(min(times[1:] or times), 3), "runs_seconds": [round(t, 2) for t in times]}


def cli_run(ns: str, master: str, extra: list[str]) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MQCTL_", "NAMESRV_ADDR"))}
    cmd = [
        sys.executable,
        "-m",
        "mqctl",
        "lagReport",
        "-n",
        ns,
        "--master",
        master,
        "-o",
        "json",
        "--timeout",
        "600",
    ]
    t0 = time.perf_counter()
    p = subprocess.run(
        [*cmd, *extra], capture_output=True, text=True, env={**env, "MQCTL_CONFIG": os.devnull}, cwd=ROOT
    )
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-2000:]}")
    rows = json.loads(p.stdout)["rows"]
    return {"seconds": round(wall, 2), "rows": rows, "rows_per_s": round(rows / wall)}


def live_bench(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="mqctl-bench-live-", dir=args.workdir))
    cluster = start_cluster(work / "cluster") if args.start else None
    ns = cluster.namesrv_addr if cluster is not None else args.namesrv
    if not ns:
        raise SystemExit("live: give -n NAMESRV or --start")
    try:
        out: dict[str, Any] = {"loadavg_start": [round(x, 1) for x in os.getloadavg()], "namesrv": ns}
        if args.start or args.setup:
            out["setup"] = setup(ns, args)
        if args.serve:
            print(json.dumps(out), flush=True)
            time.sleep(args.serve)
            return
        for lag_time in (False, True):
            runs = [_fetch(ns, lag_time) for _ in range(args.runs)]
            best = min(runs, key=lambda r: r["wall"])
            out[f"driver_fetch{'_lag_time' if lag_time else ''}"] = {
                "seconds": round(best["wall"], 3), "cpu_seconds": round(best["cpu"], 3),
                "runs_seconds": [round(r["wall"], 2) for r in runs], "rows": best["snap"].queue_count,
                "requests": best["requests"]}  # fmt: skip
        snap = best["snap"]
        out["consume_stats_split"] = split_vs_driver(ns, [ov.ref.name for ov in snap.overviews])
        for master in ("local[1]", "local[2]"):
            out[f"spark_{master}"] = spark_part(snap, master, args.runs, work)
            out[f"spark_{master}"]["rows_per_s"] = round(snap.queue_count / out[f"spark_{master}"]["seconds"])
        for master in ("local[1]", "local[2]"):
            out[f"cli_{master}"] = cli_run(ns, master, [])
            out[f"cli_{master}_lag_time"] = cli_run(ns, master, ["--lag-time"])
        out["loadavg_end"] = [round(x, 1) for x in os.getloadavg()]
        print(json.dumps(out, indent=2))
    finally:
        if cluster is not None:
            cluster.stop_all(graceful=False)
