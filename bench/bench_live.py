"""Benchmarks of mqctl -n against a real RocketMQ cluster and the real mqadmin on the same cluster
(run by hand, not in CI). Figures and ratios measured side by side in one run:

0. start-up: `python -c "import typer"`, `mqctl --version`, `mqctl --help`, and the shell
   completion of a subcommand's flags (bench/bench_startup.py);
1. consumerProgress -g G: wall time of mqadmin vs mqctl -o plain vs `mqctl --version` (median of
   --runs, interleaved) for a group with committed offsets and one without, and the requests
   mqctl sends (mqadmin's columns, then with its extras);
2. the groups overview with --groups groups (created with the brokers' admin requests): mqadmin
   vs mqctl, wall time and peak RSS;
3. exact filtered lag live over --entries unconsumed entries of one queue: entries/s through
   QUERY_CONSUME_QUEUE pages, and the ratio to the store scan of the same queue (--store);
4. consumerProgress --watch 1 on a group with 1,000 queues (500 per broker, each lagging):
   the requests per sample next to one consumerProgress -g, and mqctl's CPU over --watch-seconds
   as a share of one core (getrusage of the child: user + system).

The data is written by bench/live_fixture.py (topics, groups, offsets, messages) under names
starting with ``bench-``; a second run reuses what is there.

    python bench/bench_live.py -n 127.0.0.1:9876 --mqadmin-lib ~/.cache/mqctl-compat/rocketmq-5.3.3/lib \\
        [--store broker-a=/path/to/store] [--runs 7] [--groups 1000] [--entries 1000000] \\
        [--only startup,progress,overview,filtered,watch]

Start a cluster for it with bench/live_cluster.py (prints the -n and --store values).
"""

from __future__ import annotations

import argparse
import itertools
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

from mqctl.remoting.client import RemotingClient  # noqa: E402

TOPIC, GROUP = "bench-topic", "bench-group"
# issue 20's goals for one consumerProgress -g: vs mqadmin, and vs mqctl --version in the same run
GOAL_VS_MQADMIN, GOAL_VS_VERSION = 35, 1.3
EMPTY_GROUP = "bench-group-no-offsets"  # subscribed like GROUP (config, retry topic), never committed
WATCH_TOPIC, WATCH_GROUP = "bench-watch-topic", "bench-watch-group"
FILTER_TOPIC, FILTER_GROUP = "bench-filter-topic", "bench-filter-group"
TAGS = ("TagA", "TagB", "TagC", "TagD", "TagE", "TagF", None, "TagG")  # TagA || TagB: 1 in 4
EXPR = "TagA || TagB"


def mqadmin_cmd(lib: Path, home: Path) -> list[str]:
    return [
        "java",
        "-Xmx256m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-Xlog:disable",
        f"-Duser.home={home}",
        f"-Drocketmq.home.dir={home}",
        "--add-opens=java.base/java.nio=ALL-UNNAMED",
        "--add-opens=java.base/java.lang=ALL-UNNAMED",
        "--add-opens=java.base/java.util=ALL-UNNAMED",
        "-cp",
        f"{lib}/*",
        "org.apache.rocketmq.tools.command.MQAdminStartup",
    ]


def timed(cmd: list[str], env: dict[str, str] | None = None, check: bool = True) -> tuple[float, str]:
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    elapsed = time.perf_counter() - t
    if p.returncode != 0 and check:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(cmd[-8:])}\n{p.stderr[-2000:]}")
    return elapsed, p.stdout


def timed_rss(cmd: list[str]) -> tuple[float, int, str]:
    """Wall seconds, peak RSS in MiB (the process's own, from wait4) and stdout of one run."""
    import tempfile

    with tempfile.TemporaryFile("w+") as out:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL)
        _pid, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd[-8:])}")
        out.seek(0)
        return elapsed, usage.ru_maxrss // 1024, out.read()


def median_ms(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:.0f} ms"


# --- data ----------------------------------------------------------------------------------


def prepare_progress(client: RemotingClient, addrs: dict[str, str]) -> None:
    fx.create_topics(client, list(addrs.values()), [TOPIC], 4)
    # A consumer's first start creates its group's retry topic: mqadmin finds the group through it.
    fx.create_topics(client, list(addrs.values()), ["%RETRY%" + GROUP], 1)
    fx.create_topics(client, list(addrs.values()), ["%RETRY%" + EMPTY_GROUP], 1)
    fx.create_groups(client, list(addrs.values()), [GROUP, EMPTY_GROUP])
    for name, addr in addrs.items():
        for q in range(4):
            fx.send_batches(client, addr, name, TOPIC, q, itertools.cycle(TAGS), 500, 500)
        fx.commit(client, addr, GROUP, TOPIC, {q: 100 * q for q in range(4)})


def prepare_overview(client: RemotingClient, addrs: dict[str, str], n: int) -> list[str]:
    groups = [f"bench-og-{i:04d}" for i in range(n)]
    fx.create_groups(client, list(addrs.values()), groups)
    fx.create_topics(client, list(addrs.values()), [f"%RETRY%{g}" for g in groups], 1)
    first = next(iter(addrs.values()))
    for g in groups:
        fx.commit(client, first, g, TOPIC, {0: 1})
    return groups


def prepare_filtered(client: RemotingClient, addrs: dict[str, str], entries: int) -> tuple[str, str]:
    name, addr = next(iter(sorted(addrs.items())))
    fx.create_topics(client, [addr], [FILTER_TOPIC, "%RETRY%" + FILTER_GROUP], 1)
    fx.create_groups(client, [addr], [FILTER_GROUP])
    from mqctl.remoting.frame import ext_int

    resp = client.call(addr, 30, {"topic": FILTER_TOPIC, "queueId": 0})  # GET_MAX_OFFSET
    have = ext_int(resp, "offset")
    if have < entries:
        t = time.perf_counter()
        tags = itertools.cycle(TAGS)
        fx.send_batches(client, addr, name, FILTER_TOPIC, 0, tags, entries - have, 1000)
        print(f"  wrote {entries - have:,} messages in {time.perf_counter() - t:.1f} s")
    fx.commit(client, addr, FILTER_GROUP, FILTER_TOPIC, {0: 0})
    return name, addr


def prepare_watch(client: RemotingClient, addrs: dict[str, str]) -> None:
    fx.create_topics(client, list(addrs.values()), [WATCH_TOPIC], 500)
    fx.create_topics(client, list(addrs.values()), ["%RETRY%" + WATCH_GROUP], 1)
    fx.create_groups(client, list(addrs.values()), [WATCH_GROUP])
    for name, addr in addrs.items():
        from mqctl.remoting.frame import ext_int

        if ext_int(client.call(addr, 30, {"topic": WATCH_TOPIC, "queueId": 499}), "offset") < 2:
            for q in range(500):
                fx.send_batches(client, addr, name, WATCH_TOPIC, q, itertools.cycle(TAGS), 2, 2)
        fx.commit(client, addr, WATCH_GROUP, WATCH_TOPIC, {q: 1 for q in range(500)})


# --- measurements ----------------------------------------------------------------------------


def bench_progress(ns: str, admin: list[str], runs: int) -> None:
    for group, what in ((GROUP, "8 queues, 2 brokers"), (EMPTY_GROUP, "no committed offsets, 2 brokers")):
        _progress(ns, admin, runs, group, what)
    requests(ns)


def _progress(ns: str, admin: list[str], runs: int, group: str, what: str) -> None:
    """mqadmin and mqctl in turn (the speed-up), then mqctl and its --version in pairs (the
    start-up ratio, the median of the pairs' ratios as farm-bench takes it): this machine's speed
    drifts within a run, and the ratio of two medians taken minutes apart moved 1.5-1.8x for the
    same code."""
    py = [sys.executable, "-m", "mqctl"]
    ours_cmd = [*py, "consumerProgress", "-n", ns, "-g", group, "-o", "plain"]
    theirs, ours, pairs = [], [], []
    for _ in range(runs):
        # mqadmin fails on a group without offsets (and mqctl says why on stderr): timed all the same
        theirs.append(timed([*admin, "consumerProgress", "-n", ns, "-g", group], check=group == GROUP)[0])
        ours.append(timed(ours_cmd, check=group == GROUP)[0])
    timed([*py, "--version"])  # one unpaired run first, as after mqadmin
    for _ in range(2 * runs):
        pairs.append((timed(ours_cmd, check=group == GROUP)[0], timed([*py, "--version"])[0]))
    m_t, m_o = statistics.median(theirs), statistics.median(ours)
    m_p, m_v = (statistics.median(x) for x in zip(*pairs))
    ratio = statistics.median(o / v for o, v in pairs)
    print(
        f"consumerProgress -g {group} ({what}), median of {runs}: mqadmin {m_t * 1000:.0f} ms, "
        f"mqctl -n -o plain {m_o * 1000:.0f} ms: {m_t / m_o:.1f}x faster (goal >= {GOAL_VS_MQADMIN}x)"
    )
    print(
        f"  start-up, {2 * runs} pairs: mqctl -n -o plain {m_p * 1000:.0f} ms, mqctl --version "
        f"{m_v * 1000:.0f} ms: {ratio:.2f}x (median of the pairs' ratios; goal <= {GOAL_VS_VERSION}x)"
    )
    # No call can beat the process's own start-up: what the two goals leave beyond --version here.
    budget = m_t / GOAL_VS_MQADMIN
    print(
        f"  ceiling: mqadmin / mqctl --version {m_t / m_v:.1f}x; >= {GOAL_VS_MQADMIN}x leaves a -g "
        f"{budget * 1000:.0f} ms, {(budget - m_v) * 1000:.0f} ms beyond --version ({budget / m_v:.2f}x it; "
        f"the {GOAL_VS_VERSION}x goal leaves {(GOAL_VS_VERSION - 1) * m_v * 1000:.0f} ms)"
    )


def requests(ns: str) -> None:
    """Requests per consumerProgress, counted by the backend itself (request code -> count)."""
    from mqctl.backends.live import LiveBackend
    from mqctl.model import parse_subexpr
    from mqctl.ops.progress import group_progress

    cases = {
        "mqadmin's columns (-o plain)": dict(detail=False),
        "with lag time (table/json)": dict(detail=True),
        f"with --tags '{EXPR}'": dict(detail=True, tags=parse_subexpr(EXPR)),
        "plain -s true (client IPs)": dict(detail=False, show_client_ip=True),
    }
    for what, kw in cases.items():
        with LiveBackend(ns, timeout=60) as b:
            group_progress(b, GROUP, **kw)  # type: ignore[arg-type]
            counts = dict(sorted(b.requests.items()))
        print(f"  requests, {what}: {sum(counts.values())} {counts}")


def bench_overview(ns: str, admin: list[str], runs: int, n: int) -> None:
    py = [sys.executable, "-m", "mqctl"]
    theirs_runs = [timed_rss([*admin, "consumerProgress", "-n", ns]) for _ in range(max(1, runs // 2))]
    ours_runs = [timed_rss([*py, "consumerProgress", "-n", ns, "-o", "plain"]) for _ in range(runs)]
    theirs, ours = [r[0] for r in theirs_runs], [r[0] for r in ours_runs]
    rows = ours_runs[-1][2].count("\n") - 1
    print(
        f"overview with {n:,} bench groups ({rows:,} rows): mqadmin {median_ms(theirs)} (median of {len(theirs)}), "
        f"mqctl {median_ms(ours)} (median of {runs}): {statistics.median(theirs) / statistics.median(ours):.1f}x "
        "(goal >= 30x)"
    )
    rss_t, rss_o = (statistics.median(r[1] for r in x) for x in (theirs_runs, ours_runs))
    print(f"  peak RSS (median): mqadmin {rss_t:.0f} MiB, mqctl {rss_o:.0f} MiB")
    overview_requests(ns)


def overview_requests(ns: str) -> None:
    """The overview's requests by code, and its time in process: waiting on the brokers (each
    pipelined round) and the rest (encoding, decoding, merging), a median of 5."""
    from mqctl.backends.live import LiveBackend

    rounds: list[list[float]] = []
    with LiveBackend(ns, timeout=60) as b:
        real = b.ask

        def ask(reqs, **kw):  # type: ignore[no-untyped-def]
            t = time.perf_counter()
            out = real(reqs, **kw)
            rounds[-1].append(time.perf_counter() - t)
            return out

        b.ask = ask  # type: ignore[method-assign]
        totals = []
        for _ in range(5):
            rounds.append([])
            b.requests.clear()
            t = time.perf_counter()
            b.groups_overview()
            totals.append(time.perf_counter() - t)
        counts = dict(sorted(b.requests.items()))
    i = totals.index(statistics.median(totals))
    asked = sum(rounds[i])
    print(
        f"  requests: {sum(counts.values())} {counts}; in process {totals[i] * 1000:.0f} ms "
        f"({len(rounds[i])} pipelined rounds {asked * 1000:.0f} ms, the rest {(totals[i] - asked) * 1000:.0f} ms)"
    )


def bench_filtered(ns: str, broker: str, entries: int, store: Path | None) -> None:
    from mqctl.backends.live import LiveBackend
    from mqctl.model import MessageQueue, QueueSpan, parse_subexpr

    expr = parse_subexpr(EXPR)
    span = QueueSpan(MessageQueue(FILTER_TOPIC, broker, 0), 0, entries)
    with LiveBackend(ns, timeout=600, request_timeout=60) as b:
        t = time.perf_counter()
        live = b.count_tag_matches([span], expr)[0]
        live_s = time.perf_counter() - t
        pages = b.requests.get(321, 0)
    print(
        f"filtered lag live over {entries:,} entries: {live.matched:,} match '{EXPR}' in {live_s:.2f} s = "
        f"{entries / live_s:,.0f} entries/s ({pages} QUERY_CONSUME_QUEUE pages)"
    )
    if store is None:
        print("  (no --store for the broker: store-scan ratio not measured)")
        return
    from mqctl.backends.store import StoreBackend

    with StoreBackend({broker: store}) as sb:
        t = time.perf_counter()
        local = sb.count_tag_matches([span], expr)[0]
        store_s = time.perf_counter() - t
    same = "same count" if local.matched == live.matched else f"DIFFERENT count {local.matched:,}"
    print(
        f"  store scan of the same queue: {store_s:.3f} s = {entries / store_s:,.0f} entries/s ({same}); "
        f"live is {live_s / store_s:.1f}x the store scan's time"
    )


def _per_sample(ns: str, kept: bool, samples: int = 5) -> tuple[dict[int, int], dict[int, int], float]:
    """Requests of the first sample, requests per later sample (averaged), wall ms per later
    sample: ``kept`` as --watch samples now (ops/watch/sampler.GroupSampler, ONE backend
    refreshed per sample), else as it did before (a new backend per sample: new sockets, the
    route and the cluster asked again), both keeping lag times by queue position."""
    from mqctl.backends.live import LiveBackend
    from mqctl.model import Rules
    from mqctl.ops.progress import group_progress
    from mqctl.ops.watch.sampler import GroupSampler

    if kept:
        with LiveBackend(ns, timeout=60) as b:
            sampler = GroupSampler(b, WATCH_GROUP, None, Rules())
            sampler.take()
            first = dict(b.requests)
            t0 = time.perf_counter()
            for _ in range(samples):
                sampler.take()
            wall = (time.perf_counter() - t0) / samples
            later = {
                k: (v - first.get(k, 0)) // samples for k, v in b.requests.items() if v - first.get(k, 0)
            }
        return first, later, wall * 1000
    cache: dict = {}
    with LiveBackend(ns, timeout=60) as b:
        group_progress(b, WATCH_GROUP, time_cache=cache)
        first = dict(b.requests)
    total: dict[int, int] = {}
    t0 = time.perf_counter()
    for _ in range(samples):
        with LiveBackend(ns, timeout=60) as b:
            group_progress(b, WATCH_GROUP, time_cache=cache)
            for k, v in b.requests.items():
                total[k] = total.get(k, 0) + v
    wall = (time.perf_counter() - t0) / samples
    return first, {k: v // samples for k, v in total.items()}, wall * 1000


def bench_watch(ns: str, seconds: float) -> None:
    import resource
    import signal
    import threading

    from mqctl.backends.live import LiveBackend
    from mqctl.ops.progress import group_progress

    with LiveBackend(ns, timeout=60) as b:
        rows = len(group_progress(b, WATCH_GROUP).rows)
    for kept in (False, True):
        first, later, ms = _per_sample(ns, kept)
        how = "one kept backend (now)" if kept else "a new backend per sample (before)"
        print(
            f"--watch on {rows:,} lagging queues, {how}: first sample {sum(first.values())} requests "
            f"{dict(sorted(first.items()))}, then {sum(later.values())} per sample {dict(sorted(later.items()))}, "
            f"{ms:.0f} ms per sample"
        )
    cmd = [
        sys.executable,
        "-m",
        "mqctl",
        "consumerProgress",
        "-n",
        ns,
        "-g",
        WATCH_GROUP,
        "--watch",
        "1",
        "-o",
        "json",
    ]
    # Started in the background (nohup, `&` in a script) this process ignores SIGINT and mqctl would
    # inherit that: a handler here is reset to the default in the child, so Ctrl-C reaches it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines: list[str] = []
    assert proc.stdout is not None
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)  # type: ignore[arg-type]
    reader.start()
    time.sleep(seconds)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    reader.join(timeout=10)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(
        f"--watch 1 on {rows:,} queues for {wall:.0f} s: {len(lines)} samples, mqctl CPU {cpu:.2f} s = "
        f"{100 * cpu / wall:.1f}% of one core (goal < 10%; start-up included)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "-n", "--namesrv", default=os.environ.get("NAMESRV_ADDR"), required="NAMESRV_ADDR" not in os.environ
    )
    ap.add_argument(
        "--mqadmin-lib", type=Path, default=Path.home() / ".cache/mqctl-compat/rocketmq-5.3.3/lib"
    )
    ap.add_argument(
        "--store", action="append", default=[], help="BROKER=PATH of a broker's store (filtered ratio)"
    )
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--groups", type=int, default=1000)
    ap.add_argument("--entries", type=int, default=1_000_000)
    ap.add_argument("--watch-seconds", type=float, default=60)
    ap.add_argument("--only", default="startup,progress,overview,filtered,watch")
    args = ap.parse_args()
    only = set(args.only.split(","))
    home = Path(os.environ.get("TMPDIR", "/tmp")) / "mqctl-bench-home"
    home.mkdir(exist_ok=True)
    admin = mqadmin_cmd(args.mqadmin_lib.expanduser(), home)
    stores = dict(s.split("=", 1) for s in args.store)
    os.environ.setdefault("TZ", "UTC")
    with RemotingClient(timeout=60) as client:
        addrs = fx.broker_addrs(client, args.namesrv)
        print(f"cluster {args.namesrv}: brokers {', '.join(sorted(addrs))}; {os.cpu_count()} cores")
        prepare_progress(client, addrs)
        if "overview" in only:
            prepare_overview(client, addrs, args.groups)
        if "filtered" in only:
            broker, _addr = prepare_filtered(client, addrs, args.entries)
        if "watch" in only:
            prepare_watch(client, addrs)
    time.sleep(3)  # the brokers' consume queues are dispatched asynchronously
    if "startup" in only:
        from bench_startup import bench_startup

        bench_startup(args.runs)
    if "progress" in only:
        bench_progress(args.namesrv, admin, args.runs)
    if "overview" in only:
        bench_overview(args.namesrv, admin, args.runs, args.groups)
    if "filtered" in only:
        path = stores.get(broker)
        bench_filtered(args.namesrv, broker, args.entries, Path(path) if path else None)
    if "watch" in only:
        bench_watch(args.namesrv, args.watch_seconds)


if __name__ == "__main__":
    main()
