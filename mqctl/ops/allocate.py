"""allocateMQ: which consumer gets which queue, under the Java client's strategies (spec/mqadmin.md 7).

mqadmin allocates over the topic's read-permitted queues in Java ``HashSet`` order and over the
``-i`` list as given; a real consumer's rebalance sorts both first (queues by topic, brokerName,
queueId; client ids as strings). Both orders are offered: mqadmin's is the default so that
``-o plain`` reproduces its output byte for byte, ``sort=True`` shows what live consumers do.

The strategies themselves, each the Java class of the same ``getName()``, are in
``mqctl.ops.strategies``.
"""

from __future__ import annotations

from collections.abc import Sequence

from mqctl.backends.base import Backend
from mqctl.errors import NotFoundError, UsageError
from mqctl.model import AllocationResult, MessageQueue, Move, TopicAllocation, java_compare_key, java_split
from mqctl.model.javaorder import hashset_order, message_queue_hash
from mqctl.ops.strategies import MQ_ALL_EMPTY, Averagely, Strategy


def split_ip_list(value: str) -> list[str]:
    """mqadmin's ``-i`` handling: ``String.split(",")``, no trimming of items, duplicates kept."""
    return java_split(value, ",")


# --- the command --------------------------------------------------------------------------


def readable_queues(backend: Backend, topic: str) -> list[MessageQueue]:
    """The topic's read-permitted queues in route order (NotFoundError when no broker knows it).

    Route order matters: mqadmin adds the queues to a HashSet broker by broker, so queues that
    share a hash bucket iterate in that order. The name server lists a topic's queueDatas in its
    HashMap order of broker names, which a store backend reproduces.
    """
    route = backend.topic_route(topic)
    return [
        MessageQueue(topic, qd.broker_name, q)
        for qd in route.queue_datas
        if qd.readable
        for q in range(qd.read_queue_nums)
    ]


def allocate_mq(
    backend: Backend,
    topics: Sequence[str],
    ip_list: Sequence[str],
    strategy: Strategy | None = None,
    sort: bool = False,
) -> AllocationResult:
    """Allocate every topic's queues over ``ip_list`` as mqadmin does (or as consumers do, ``sort``)."""
    strategy = strategy or Averagely()
    cid_all = sorted(ip_list, key=java_compare_key) if sort else list(ip_list)
    clients = tuple(dict.fromkeys(cid_all))
    done = []
    for topic in dict.fromkeys(topics):
        queues = readable_queues(backend, topic)
        mq_all = (
            sorted(queues, key=MessageQueue.sort_key) if sort else hashset_order(queues, message_queue_hash)
        )
        result: dict[str, tuple[MessageQueue, ...]] = {}
        try:
            for cid in cid_all:
                result[cid] = tuple(strategy.allocate(cid, mq_all, cid_all, topic))
        except UsageError as e:
            if e.message == MQ_ALL_EMPTY:
                raise NotFoundError(
                    MQ_ALL_EMPTY, f"topic {topic} has no read-permitted queue on any broker"
                ) from None
            raise
        done.append(TopicAllocation(topic, tuple(mq_all), tuple(cid_all), tuple(result.items())))
    return AllocationResult(strategy.name, sort, clients, tuple(done))


def allocate_compared(
    backend: Backend,
    topics: Sequence[str],
    ip_list: Sequence[str],
    strategy: Strategy,
    *,
    sort: bool = False,
    compare_with: Sequence[str] | None = None,
) -> tuple[AllocationResult, list[Move] | None]:
    """allocateMQ -i: the allocation and, with ``compare_with`` (--compare-with's ids), the queues
    that move to that other id list under the same strategy."""
    result = allocate_mq(backend, topics, ip_list, strategy, sort=sort)
    if compare_with is None:
        return result, None
    return result, compare(result, allocate_mq(backend, topics, compare_with, strategy, sort=sort))


def compare(a: AllocationResult, b: AllocationResult) -> list[Move]:
    """Queues whose owners differ between two allocations of the same topics (natural queue order)."""
    moves = []
    for ta, tb in zip(a.topics, b.topics):
        owners_a = _owners(ta)
        owners_b = _owners(tb)
        for mq in sorted(set(ta.mq_all) | set(tb.mq_all), key=MessageQueue.sort_key):
            before, after = owners_a.get(mq, ()), owners_b.get(mq, ())
            if before != after:
                moves.append(Move(mq, before, after))
    return moves


def _owners(t: TopicAllocation) -> dict[MessageQueue, tuple[str, ...]]:
    owners: dict[MessageQueue, list[str]] = {}
    for cid, qs in t.result:
        for mq in qs:
            owners.setdefault(mq, []).append(cid)
    return {mq: tuple(sorted(cids, key=java_compare_key)) for mq, cids in owners.items()}
