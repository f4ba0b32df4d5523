"""Two small real-format stores for reset tests, with hand-computed facts (see each queue)."""

from __future__ import annotations

from pathlib import Path

from mqctl.store.writer import StoreWriter

# broker-a, topic T (4 queues), 5 consume-queue entries per file, 4 KiB commit-log segments:
#   q0: store times 1000,1000,1000,3000,3000 | 3000,5000,5000,7000,9000   (two CQ files) min 0 max 10
#   q1: empty                                                              min 0 max 0
#   q2: 100..500 (expired with commit-log segment 0) | 700,800,800         min 5 max 8
#   q3: empty                                                              min 0 max 0
# broker-b, topic T (2 queues): q0: 2000,4000,6000 (min 0 max 3); q1 empty.
# Group G committed: a/q0=5, a/q2=2 (below min), a/q3=0, b/q0=3. Group Other: a/q0=7, U@Other a/q0=1.
Q0_TIMES = [1000, 1000, 1000, 3000, 3000, 3000, 5000, 5000, 7000, 9000]


def build_stores(base: Path) -> dict[str, Path]:
    a, b = base / "a", base / "b"
    w = StoreWriter(a, broker_name="broker-a", commitlog_file_size=4096, cq_file_size=100)
    w.create_topic("T", queues=4)
    w.create_topic("F", queues=1)
    w.create_topic("U", queues=1)
    w.create_group("G")
    w.create_group("Other")
    for ts in (100, 200, 300, 400, 500):
        w.put("T", 2, b"x" * 20, store_timestamp=ts)
    while w.commitlog_max_offset < 4096:
        w.put("F", 0, b"f" * 400, store_timestamp=600)
    for ts in (700, 800, 800):
        w.put("T", 2, b"y" * 20, store_timestamp=ts)
    for ts in Q0_TIMES:
        w.put("T", 0, b"z" * 20, tags="TagA", store_timestamp=ts)
    w.put("U", 0, b"u", store_timestamp=9500)
    w.expire_commitlog_before(1)
    assert w.truth_min_offset("T", 2) == 5 and w.truth_max_offset("T", 2) == 8
    w.commit_offset("G", "T", 0, 5)
    w.commit_offset("G", "T", 2, 2)
    w.commit_offset("G", "T", 3, 0)
    w.commit_offset("Other", "T", 0, 7)
    w.commit_offset("Other", "U", 0, 1)
    w.close()

    w = StoreWriter(b, broker_name="broker-b", commitlog_file_size=4096, cq_file_size=100)
    w.create_topic("T", queues=2)
    w.create_group("G")
    for ts in (2000, 4000, 6000):
        w.put("T", 0, b"b", store_timestamp=ts)
    w.commit_offset("G", "T", 0, 3)
    w.close()
    return {"broker-a": a, "broker-b": b}
