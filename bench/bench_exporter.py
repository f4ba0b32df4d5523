"""Benchmark of `mqctl exporter` and `consumerProgress --watch 1` against a real RocketMQ cluster
(run by hand, not in CI; start one with bench/live_cluster.py). Figures side by side in one run:

1. the exporter's rounds over --groups groups (default 1,000) on both brokers, each lagging on 4
   queues per broker: round time (median, p95 over --rounds rounds), requests per round, the
   families' build time and a scrape's encoding time, the process's peak RSS; measured in a
   child process running exactly what `mqctl exporter` runs per round (FleetSampler.take, then
   RoundCollector.publish; plus one /metrics encoding);
2. consumerProgress --watch 1 on a group with 1,000 lagging queues (bench_live.py's data): mqctl's
   CPU as a share of one core over --watch-seconds.

    python bench/bench_exporter.py -n 127.0.0.1:9876 [--groups 1000] [--rounds 20] [--watch-seconds 60]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import live_fixture as fx  # noqa: E402

TOPIC = "bench-exp-topic"
QUEUES, MESSAGES = 4, 200


def groups(n: int) -> list[str]:
    return [f"bench-exp-{i:04d}" for i in range(n)]


def prepare(ns: str, n: int) -> None:
    from mqctl.remoting.client import RemotingClient
    from mqctl.remoting.frame import ext_int

    with RemotingClient(timeout=60) as client:
        addrs = fx.broker_addrs(client, ns)
        names = groups(n)
        fx.create_topics(client, list(addrs.values()), [TOPIC], QUEUES)
        for name, addr in addrs.items():
            if ext_int(client.call(addr, 30, {"topic": TOPIC, "queueId": QUEUES - 1}), "offset") < MESSAGES:
                for q in range(QUEUES):
                    fx.send_batches(
                        client, addr, name, TOPIC, q, itertools.cycle(("TagA", "TagB", None)), MESSAGES, 200
                    )
        fx.create_groups(client, list(addrs.values()), names)
        fx.create_topics(client, list(addrs.values()), [f"%RETRY%{g}" for g in names], 1)
        for i, g in enumerate(names):  # every group lags, on 50 distinct positions per queue
            for addr in addrs.values():
                fx.commit(client, addr, g, TOPIC, {q: (i % 50) * 2 + q for q in range(QUEUES)})


def child(ns: str, rounds: int) -> None:
    """One process doing what `mqctl exporter` does per round; prints its figures as JSON."""
    import resource

    from prometheus_client.exposition import generate_latest

    from mqctl.backends.live import LiveBackend
    from mqctl.model import Rules
    from mqctl.ops.watch.fleet import FleetSampler
    from mqctl.serve.families import Shape
    from mqctl.serve.metrics import RoundCollector, registry_for

    out: dict = {"round_s": [], "publish_s": [], "requests": [], "encode_s": [], "groups": 0, "series": 0}
    collector = RoundCollector(Shape(), "bench")
    with LiveBackend(ns, timeout=60) as b:
        sampler = FleetSampler(b, Rules())
        for i in range(rounds + 1):
            rnd = sampler.take()
            t = time.perf_counter()
            collector.publish(rnd)
            published = time.perf_counter() - t
            if i == 0:  # the first round asks every lag time: reported apart
                out["first_round_s"], out["first_requests"] = rnd.duration_s, rnd.requests
                continue
            out["round_s"].append(rnd.duration_s)
            out["publish_s"].append(published)
            out["requests"].append(rnd.requests)
            out["groups"] = len(rnd.groups)
        t = time.perf_counter()
        body = generate_latest(registry_for(collector))
        out["encode_s"] = time.perf_counter() - t
        out["series"] = sum(1 for line in body.splitlines() if line and not line.startswith(b"#"))
        out["bytes"] = len(body)
    out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def p95(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=20, method="inclusive")[-1] if len(xs) > 1 else xs[0]


def bench_exporter(ns: str, rounds: int) -> None:
    p = subprocess.run(
        [sys.executable, __file__, "--child", "-n", ns, "--rounds", str(rounds)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if p.returncode != 0:
        raise SystemExit(f"child failed:\n{p.stderr[-3000:]}")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    rt, pub = r["round_s"], r["publish_s"]
    print(
        f"exporter, {r['groups']:,} groups x 2 brokers, {r['series']:,} series ({r['bytes'] / 1e6:.1f} MB per scrape): "
        f"first round {r['first_round_s']:.2f} s ({r['first_requests']} requests); then over {len(rt)} rounds "
        f"median {statistics.median(rt):.2f} s, p95 {p95(rt):.2f} s (goal <= 5 s), "
        f"{statistics.median(r['requests']):.0f} requests per round; families built in {statistics.median(pub):.2f} s "
        f"(median, after the round), a scrape encoded in {r['encode_s']:.2f} s; peak RSS {r['maxrss_mb']:.0f} MB "
        "(goal <= 200 MB)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "-n", "--namesrv", default=os.environ.get("NAMESRV_ADDR"), required="NAMESRV_ADDR" not in os.environ
    )
    ap.add_argument("--groups", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--watch-seconds", type=float, default=60)
    ap.add_argument("--only", default="exporter,watch")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.namesrv, args.rounds)
        return
    os.environ.setdefault("TZ", "UTC")
    only = set(args.only.split(","))
    print(f"cluster {args.namesrv}; {os.cpu_count()} cores")
    if "exporter" in only:
        t = time.perf_counter()
        prepare(args.namesrv, args.groups)
        print(f"  data ready in {time.perf_counter() - t:.0f} s")
        time.sleep(3)  # consume queues are dispatched asynchronously
        bench_exporter(args.namesrv, args.rounds)
    if "watch" in only:
        import bench_live

        from mqctl.remoting.client import RemotingClient

        with RemotingClient(timeout=60) as client:
            bench_live.prepare_watch(client, fx.broker_addrs(client, args.namesrv))
        time.sleep(3)
        bench_live.bench_watch(args.namesrv, args.watch_seconds)


if __name__ == "__main__":
    main()
