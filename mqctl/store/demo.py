"""The realistic, deterministic broker store behind ``mqctl demo PATH``.

One broker (``broker-a``) with a few business topics, tags and keys, store times spread over
the four hours before ``now_ms`` (with runs of equal store times, as a busy broker produces),
small segments so several commit-log and consume-queue files exist, the oldest commit-log
segment expired (so ``OrderEvents`` queues start above 0 and lost their first CQ files), and
consumer groups in the states operators ask about:

| group | state |
| --- | --- |
| ``order-service`` | ``OrderEvents``: caught up on every queue |
| ``order-analytics`` | ``OrderEvents``: lagging, by a different amount per queue |
| ``inventory-sync`` | ``OrderEvents``: queues 0-2 committed, queue 3 never committed |
| ``legacy-reporting`` | ``OrderEvents``: queues 0-1 committed below the queue's min (expired) |
| ``payment-service`` | ``PaymentEvents`` + its retry topic ``%RETRY%payment-service`` (holding messages) |
| ``audit-reader`` | ``AuditLog`` (read-only topic, perm 4): lagging |
| ``refund-service`` | subscription only, no committed offsets; ``RefundEvents`` has no messages |

Every group has its ``%RETRY%<group>`` topic, as push consumers get from the broker (empty but
for payment-service's), so mqadmin's overview would list all seven.
"""

from __future__ import annotations

import os
import random
import secrets
import shutil
import time
from pathlib import Path

from mqctl.errors import StoreError, UsageError
from mqctl.records import record, replace
from mqctl.store.writer import StoreWriter

__all__ = [
    "DEMO_BROKER_NAME",
    "DEMO_CLUSTER_NAME",
    "DEMO_COMMITLOG_FILE_SIZE",
    "DEMO_CQ_FILE_SIZE",
    "DemoSummary",
    "broker_conf_lines",
    "build_demo_store",
]

DEMO_BROKER_NAME = "broker-a"
DEMO_CLUSTER_NAME = "DefaultCluster"
DEMO_COMMITLOG_FILE_SIZE = 256 * 1024
DEMO_CQ_FILE_SIZE = 50 * 20  # 50 entries per consume-queue file

_HOUR = 3_600_000
_MINUTE = 60_000

ORDER_TOPIC = "OrderEvents"
PAYMENT_TOPIC = "PaymentEvents"
AUDIT_TOPIC = "AuditLog"
REFUND_TOPIC = "RefundEvents"
PAYMENT_RETRY_TOPIC = "%RETRY%payment-service"


@record(frozen=True)
class DemoSummary:
    """What ``build_demo_store`` wrote; the mappings are ground truth for tests."""

    root: Path
    broker_name: str
    cluster_name: str
    now_ms: int
    seed: int
    commitlog_file_size: int
    cq_file_size: int
    commitlog_min_offset: int
    commitlog_max_offset: int
    commitlog_segments: int  # segments left after expiry
    message_count: int  # messages ever written (including expired ones)
    earliest_store_timestamp: int
    latest_store_timestamp: int
    topics: tuple[str, ...]
    groups: tuple[str, ...]
    queue_offsets: dict[tuple[str, int], tuple[int, int]]  # (topic, qid) -> (min, max)
    committed: dict[tuple[str, str, int], int]  # (group, topic, qid) -> committed offset


def broker_conf_lines(summary: DemoSummary) -> list[str]:
    """The ``broker.conf`` lines a real broker needs to load the demo store (sizes, names, paths)."""
    return [
        f"brokerClusterName={summary.cluster_name}",
        f"brokerName={summary.broker_name}",
        f"storePathRootDir={summary.root}",
        f"storePathCommitLog={summary.root / 'commitlog'}",
        f"mappedFileSizeCommitLog={summary.commitlog_file_size}",
        f"mappedFileSizeConsumeQueue={summary.cq_file_size}",
    ]


def _store_times(rng: random.Random, start: int, end: int, count: int) -> list[int]:
    times = sorted(rng.randint(start, end) for _ in range(count))
    # Several messages of one producer batch share a millisecond; time search must handle runs.
    for i in range(1, count):
        if rng.random() < 0.2:
            times[i] = times[i - 1]
    return times


def _body(rng: random.Random, kind: str, n: int, status: str | None) -> bytes:
    # The note spreads record sizes over ~150-550 bytes.
    amount = rng.randint(100, 50_000) / 100
    note = "x" * rng.randint(40, 360)
    text = f'{{"id":"{kind}-{n:06d}","status":"{status or "unknown"}","amount":{amount},"note":"{note}"}}'
    return text.encode()


def build_demo_store(root: Path, *, now_ms: int | None = None, seed: int = 7) -> DemoSummary:
    """Write the demo store into ``root`` (new or empty directory) and describe it.

    Raises ``UsageError`` when ``root`` is a file or a non-empty directory, ``StoreError`` when
    the files cannot be written.
    """
    root = Path(root)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise UsageError(
            f"{root} is not a new or empty directory", hint="choose a path that does not exist yet"
        )
    created: list[Path] = []
    try:
        created = _make_parents(root.parent)
        # Built in a sibling and renamed into place: a full disk or ^C never leaves half a store.
        work = root.parent / f".{root.name}.partial-{os.getpid()}-{secrets.token_hex(4)}"
        work.mkdir()
    except OSError as exc:
        _remove(None, created)
        raise StoreError(f"cannot write the demo store in {root}: {exc.strerror or exc}") from None
    try:
        summary = _build(work, now_ms, seed)
        os.rename(work, root)  # onto an empty directory too (rename(2))
    except BaseException as exc:
        _remove(work, created)
        if isinstance(exc, OSError):
            raise StoreError(
                f"cannot write the demo store in {root}: {exc.strerror or exc}",
                hint="nothing was left behind; free some space or choose another path",
            ) from None
        raise
    return replace(summary, root=root)


def _make_parents(directory: Path) -> list[Path]:
    """Create ``directory`` and its missing parents; the ones created, deepest first."""
    missing = []
    while not directory.exists():
        missing.append(directory)
        directory = directory.parent
    for d in reversed(missing):
        d.mkdir()
    return missing


def _remove(work: Path | None, created: list[Path]) -> None:
    """After a failed build: the partial store, then the parent directories made for it."""
    if work is not None:
        shutil.rmtree(work, ignore_errors=True)
    for d in created:
        try:
            d.rmdir()
        except OSError:
            break


GROUPS = (
    "order-service",
    "order-analytics",
    "inventory-sync",
    "legacy-reporting",
    "payment-service",
    "audit-reader",
    "refund-service",
)


def _topology(w: StoreWriter) -> None:
    w.create_topic(ORDER_TOPIC, queues=4)
    w.create_topic(PAYMENT_TOPIC, queues=2)
    # Read-only now; its messages were written before an operator flipped it to perm 4.
    w.create_topic(AUDIT_TOPIC, queues=1, perm=4)
    w.create_topic(REFUND_TOPIC, queues=2)
    w.create_topic(PAYMENT_RETRY_TOPIC, queues=1)
    for group in GROUPS:
        w.create_group(group)
        # A push consumer in clustering mode gets its group's retry topic from the broker; that
        # topic is also how mqadmin's overview finds the group.
        if f"%RETRY%{group}" != PAYMENT_RETRY_TOPIC:
            w.create_topic(f"%RETRY%{group}", queues=1)


class _Producer:
    """The demo's messages, one topic's shape each; every random draw in a fixed order."""

    def __init__(self, w: StoreWriter, rng: random.Random) -> None:
        self.w, self.rng = w, rng
        self.counters = {ORDER_TOPIC: 0, PAYMENT_TOPIC: 0, AUDIT_TOPIC: 0, PAYMENT_RETRY_TOPIC: 0}

    def put(self, topic: str, ts: int) -> None:
        w, rng = self.w, self.rng
        n = self.counters[topic]
        self.counters[topic] = n + 1
        born = ts - rng.randint(0, 40)
        if topic == ORDER_TOPIC:
            tag = rng.choice(["created", "created", "paid", None])
            w.put(
                topic,
                rng.randrange(4),
                _body(rng, "order", n, tag),
                tags=tag,
                keys=f"order-{n:06d}",
                store_timestamp=ts,
                born_timestamp=born,
            )
        elif topic == PAYMENT_TOPIC:
            tag = rng.choice(["TagA", "TagA", "TagB"])
            w.put(
                topic,
                rng.randrange(2),
                _body(rng, "payment", n, tag),
                tags=tag,
                keys=[f"pay-{n:06d}", f"order-{rng.randrange(2000):06d}"],
                store_timestamp=ts,
                born_timestamp=born,
            )
        elif topic == AUDIT_TOPIC:
            w.put(topic, 0, _body(rng, "audit", n, None), store_timestamp=ts, born_timestamp=born)
        else:
            tag = rng.choice(["TagA", "TagB"])
            w.put(
                topic,
                0,
                _body(rng, "payment", rng.randrange(1000), tag),
                tags=tag,
                store_timestamp=ts,
                born_timestamp=born,
                properties={"RETRY_TOPIC": PAYMENT_TOPIC, "MAX_RECONSUME_TIMES": "16"},
                reconsume_times=rng.randint(1, 3),
            )


def _commit(w: StoreWriter) -> dict[tuple[str, str, int], int]:
    """Each group's committed offsets, in the state the module docstring describes."""
    committed: dict[tuple[str, str, int], int] = {}

    def bounds(topic: str, qid: int) -> tuple[int, int]:
        return w.truth_min_offset(topic, qid), w.truth_max_offset(topic, qid)

    def commit(group: str, topic: str, qid: int, offset: int) -> None:
        w.commit_offset(group, topic, qid, offset)
        committed[(group, topic, qid)] = offset

    order_lag = (0, 7, 42, 130)
    for qid in range(4):
        lo, hi = bounds(ORDER_TOPIC, qid)
        commit("order-service", ORDER_TOPIC, qid, hi)
        commit("order-analytics", ORDER_TOPIC, qid, max(lo, hi - order_lag[qid]))
        if qid < 3:
            commit("inventory-sync", ORDER_TOPIC, qid, max(lo, hi - 3 * qid))
        # Stopped before the expiry: two queues point below the oldest message still stored.
        commit("legacy-reporting", ORDER_TOPIC, qid, lo // 2 if qid < 2 else lo)
    for qid, lag in ((0, 0), (1, 9)):
        commit("payment-service", PAYMENT_TOPIC, qid, bounds(PAYMENT_TOPIC, qid)[1] - lag)
    commit("payment-service", PAYMENT_RETRY_TOPIC, 0, bounds(PAYMENT_RETRY_TOPIC, 0)[1] - 4)
    commit("audit-reader", AUDIT_TOPIC, 0, bounds(AUDIT_TOPIC, 0)[1] - 25)
    return committed


def _build(root: Path, now_ms: int | None, seed: int) -> DemoSummary:
    now = int(time.time() * 1000) if now_ms is None else now_ms
    rng = random.Random(seed)
    w = StoreWriter(
        Path(root),
        broker_name=DEMO_BROKER_NAME,
        cluster_name=DEMO_CLUSTER_NAME,
        commitlog_file_size=DEMO_COMMITLOG_FILE_SIZE,
        cq_file_size=DEMO_CQ_FILE_SIZE,
    )
    _topology(w)
    producer = _Producer(w, rng)
    # Phase 1: only OrderEvents existed; this history fills the first segment, which expires.
    for ts in _store_times(rng, now - 4 * _HOUR, now - 3 * _HOUR, 700):
        producer.put(ORDER_TOPIC, ts)
    # Phase 2: all topics interleaved, up to a few minutes ago.
    mix = [ORDER_TOPIC] * 10 + [PAYMENT_TOPIC] * 6 + [AUDIT_TOPIC] * 3 + [PAYMENT_RETRY_TOPIC]
    for ts in _store_times(rng, now - 3 * _HOUR, now - 5 * _MINUTE, 1600):
        producer.put(rng.choice(mix), ts)
    w.expire_commitlog_before(1)
    committed = _commit(w)
    queue_offsets = {
        (topic, qid): (w.truth_min_offset(topic, qid), w.truth_max_offset(topic, qid))
        for topic, cfg in w.topics.items()
        for qid in range(cfg["readQueueNums"])
    }
    w.close(data_version_timestamp=now)
    return DemoSummary(
        root=Path(root),
        broker_name=w.broker_name,
        cluster_name=w.cluster_name,
        now_ms=now,
        seed=seed,
        commitlog_file_size=w.commitlog_file_size,
        cq_file_size=w.cq_file_size,
        commitlog_min_offset=w.commitlog_min_offset,
        commitlog_max_offset=w.commitlog_max_offset,
        commitlog_segments=sum(1 for _ in (Path(root) / "commitlog").iterdir()),
        message_count=len(w.messages),
        earliest_store_timestamp=w.messages[0].store_timestamp,
        latest_store_timestamp=w.messages[-1].store_timestamp,
        topics=tuple(w.topics),
        groups=GROUPS,
        queue_offsets=queue_offsets,
        committed=committed,
    )
