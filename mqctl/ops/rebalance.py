"""allocateMQ -g: the assignment a group's clients report, queue by queue, against the one their
strategy computes for the clients online now: the rebalance diff (duplicated, unowned, moved).

Each client sorts the queue list and the client-id list before allocating (RebalanceImpl), so
the simulation sorts both; the strategy is the one the clients name in their running info
(``allocateMessageQueueStrategy``, a Java class name), unless the user names one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.errors import NotFoundError
from mqctl.model import MessageQueue, RebalanceReport, RebalanceRow, java_compare_key
from mqctl.ops.allocate import allocate_mq
from mqctl.ops.strategies import Strategy, build_strategy

if TYPE_CHECKING:
    from mqctl.backends.base import Backend

# The Java client's strategy classes -> mqctl's names (ops/strategies.py).
_CLASSES = {
    "AllocateMessageQueueAveragely": "AVG",
    "AllocateMessageQueueAveragelyByCircle": "AVG_BY_CIRCLE",
    "AllocateMessageQueueConsistentHash": "CONSISTENT_HASH",
    "AllocateMessageQueueByMachineRoom": "MACHINE_ROOM",
    "AllocateMachineRoomNearby": "MACHINE_ROOM_NEARBY",
    "AllocateMessageQueueByConfig": "CONFIG",
}


def strategy_of(value: str | None) -> str | None:
    """``org.apache...AllocateMessageQueueAveragely@43c3e410`` -> ``AVG`` (None if unknown)."""
    if not value:
        return None
    cls = value.split("@", 1)[0].rsplit(".", 1)[-1]
    return _CLASSES.get(cls)


def rebalance_check(
    backend: Backend, group: str, topics: list[str] | None = None, strategy: Strategy | None = None
) -> tuple[RebalanceReport, list[str]]:
    """The report and warnings (clients that disagree on their strategy, unknown strategies). A
    POP group has no allocation to compare: NotAvailableError says so."""
    try:
        conn = backend.consumer_connection(group)
    except NotFoundError as exc:
        from mqctl.ops.pop import no_allocation

        raise no_allocation(backend, group, exc) from None
    cids = sorted({c.client_id for c in conn.connections}, key=java_compare_key)
    infos = {cid: backend.running_info(group, cid) for cid in cids}
    warnings: list[str] = []
    source = "--strategy"
    if strategy is None:
        names = {strategy_of(i.property("allocateMessageQueueStrategy")) for i in infos.values()}
        if len(names) > 1:
            warnings.append(f"the clients of {group} use different strategies ({names}); simulating AVG")
        name = names.pop() if len(names) == 1 else None
        if name is None:
            warnings.append("the clients do not name a known allocation strategy; simulating AVG")
        strategy, source = build_strategy(name or "AVG"), "clients"
    wanted = topics or [s.topic for s in conn.subscriptions]
    if not wanted:
        raise NotFoundError(f"group {group!r} has no subscription to allocate")
    simulated = allocate_mq(backend, wanted, cids, strategy, sort=True)
    expected = {mq: cid for t in simulated.topics for cid, qs in t.result for mq in qs}
    reported: dict[MessageQueue, list[str]] = {}
    for cid, info in infos.items():
        for mq, pq in info.queues:
            if not pq.dropped and mq.topic in wanted:
                reported.setdefault(mq, []).append(cid)
    queues = sorted(set(expected) | set(reported), key=MessageQueue.sort_key)
    rows = tuple(RebalanceRow(mq, expected.get(mq), tuple(reported.get(mq, ()))) for mq in queues)
    return RebalanceReport(group, strategy.name, source, tuple(cids), simulated, rows), warnings
