"""allocateMQ: allocations per topic, queue moves, and the rebalance diff of allocateMQ -g."""

from __future__ import annotations

from mqctl.model.queues import MessageQueue
from mqctl.records import record


@record(frozen=True)
class TopicAllocation:
    topic: str
    mq_all: tuple[MessageQueue, ...]  # in the order the strategy ran over
    cid_all: tuple[str, ...]  # likewise (duplicates kept)
    result: tuple[tuple[str, tuple[MessageQueue, ...]], ...]  # per distinct client id, first-seen order

    def queues_of(self, cid: str) -> tuple[MessageQueue, ...]:
        return dict(self.result).get(cid, ())

    @property
    def unassigned(self) -> tuple[MessageQueue, ...]:
        taken = {mq for _, qs in self.result for mq in qs}
        return tuple(mq for mq in self.mq_all if mq not in taken)


@record(frozen=True)
class AllocationResult:
    strategy: str
    sorted: bool
    clients: tuple[str, ...]  # distinct client ids, in the order allocation visited them
    topics: tuple[TopicAllocation, ...]

    def queues_of(self, cid: str) -> list[MessageQueue]:
        return [mq for t in self.topics for mq in t.queues_of(cid)]

    @property
    def totals(self) -> dict[str, int]:
        return {cid: len(self.queues_of(cid)) for cid in self.clients}

    @property
    def imbalance(self) -> int:
        counts = list(self.totals.values())
        return max(counts) - min(counts) if counts else 0

    @property
    def queue_count(self) -> int:
        return sum(len(t.mq_all) for t in self.topics)


@record(frozen=True)
class Move:
    queue: MessageQueue
    before: tuple[str, ...]  # owners with the first client list (usually one; none = unassigned)
    after: tuple[str, ...]


@record(frozen=True)
class RebalanceRow:
    queue: MessageQueue
    expected: str | None  # the client the strategy gives the queue to (None: outside the simulation)
    reported: tuple[str, ...]  # the clients whose running info holds the queue

    @property
    def status(self) -> str:
        """ok | moved (another client holds it) | duplicated | unowned | unexpected."""
        if len(self.reported) > 1:
            return "duplicated"
        if not self.reported:
            return "unowned"
        if self.expected is None:
            return "unexpected"
        return "ok" if self.reported[0] == self.expected else "moved"


@record(frozen=True)
class RebalanceReport:
    group: str
    strategy: str
    strategy_source: str  # "clients" (their running info) or "--strategy"
    clients: tuple[str, ...]  # sorted, as each client sorts the id list before allocating
    simulated: AllocationResult
    rows: tuple[RebalanceRow, ...]

    @property
    def problems(self) -> list[RebalanceRow]:
        return [r for r in self.rows if r.status != "ok"]
