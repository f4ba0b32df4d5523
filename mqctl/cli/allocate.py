"""mqctl allocateMQ — mqadmin allocateMQ on a store, with every client strategy and what-if diffs."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

import typer

from mqctl.cli.blocks import Flag, block, opt
from mqctl.cli.cluster import Cluster, cluster_options
from mqctl.cli.command import given
from mqctl.cli.errors import handle_errors, warn, warn_all
from mqctl.cli.output import Output, OutputFormat, emit, output_options
from mqctl.errors import UsageError
from mqctl.records import record

HELP = """Show how a topic's read-permitted queues (on every broker) are allocated to a list of
consumer client ids, as a consumer group's rebalance would do it.

By default the queues are taken in mqadmin's order (Java HashSet order) and the ids as given,
so -o plain prints exactly mqadmin's JSON line. A live consumer sorts both first: add --sorted
to see its real allocation.

-t A,B allocates each topic on its own, as consumers do, and shows per-consumer totals: with
AVG the first consumers get the extra queue of every topic, which is the imbalance the table
reports. -o plain then prints one mqadmin line per topic.

Strategies (--strategy, names as the Java client's getName()): AVG (default), AVG_BY_CIRCLE,
CONSISTENT_HASH (--virtual-nodes), MACHINE_ROOM (--consumer-idcs; brokers named IDC@name),
MACHINE_ROOM_NEARBY (--delegate; broker room = brokerName before '@' or --broker-rooms, consumer
room = client id after its last '@' or --consumer-rooms), CONFIG (--config-queues).

--compare-with IPLIST: which queues move when the consumer list changes (table and json).

-g GROUP (a live cluster, -n): the rebalance diff nobody shows. The group's online clients and
the strategy their running info names (or --strategy) give the allocation each client should
hold; every queue is compared with what each client reports holding: moved (another client
holds it), duplicated (several do), unowned (none does). -t limits it to some topics (default:
the group's subscriptions). -i is not needed with -g. A POP group (RocketMQ 5's gRPC consumers
through a proxy) has no client-side allocation, the broker picks the queue on each pop: exit 7 saying so.

mqadmin equivalent: mqadmin allocateMQ -t TOPIC -i IPLIST"""


class StrategyName(str, Enum):
    AVG = "AVG"
    AVG_BY_CIRCLE = "AVG_BY_CIRCLE"
    CONSISTENT_HASH = "CONSISTENT_HASH"
    MACHINE_ROOM = "MACHINE_ROOM"
    MACHINE_ROOM_NEARBY = "MACHINE_ROOM_NEARBY"
    CONFIG = "CONFIG"


# The options, one alias each (the command's signature stays one line per option).
_TopicOpt = Annotated[
    str | None, opt("--topic", "-t", metavar="TOPIC", help="Topic name; A,B for several topics.")
]
_GroupOpt = Annotated[
    str | None,
    opt(
        "--group",
        "-g",
        metavar="GROUP",
        help="Live: compare the group's real assignment with its strategy's.",
    ),
]

_IpListOpt = Annotated[
    str | None,
    opt(
        "--ipList",
        "-i",
        metavar="IPLIST",
        help="Consumer client ids, comma separated (mqadmin: split on ',').",
    ),
]

_StrategyOpt = Annotated[
    StrategyName | None,
    opt(
        "--strategy",
        help="Allocation strategy (default AVG; with -g the one the clients use).",
        case_sensitive=False,
    ),
]

_SortOpt = Annotated[
    bool, typer.Option("--sorted", help="Sort queues and ids first, as a live consumer's rebalance does.")
]

_VirtualNodesOpt = Annotated[
    int, typer.Option("--virtual-nodes", metavar="N", help="CONSISTENT_HASH: virtual nodes per client.")
]

_ConsumerIdcsOpt = Annotated[
    str | None, opt("--consumer-idcs", metavar="IDC,..", help="MACHINE_ROOM: the consumers' IDCs.")
]

_DelegateOpt = Annotated[
    StrategyName,
    typer.Option("--delegate", help="MACHINE_ROOM_NEARBY: strategy inside a room.", case_sensitive=False),
]

_BrokerRoomsOpt = Annotated[
    str | None,
    opt("--broker-rooms", metavar="BROKER=ROOM,..", help="MACHINE_ROOM_NEARBY: broker rooms."),
]

_ConsumerRoomsOpt = Annotated[
    str | None, opt("--consumer-rooms", metavar="ID=ROOM,..", help="MACHINE_ROOM_NEARBY: client rooms.")
]

_ConfigQueuesOpt = Annotated[
    list[str] | None,
    opt("--config-queues", metavar="[TOPIC/]BROKER:QID,..", help="CONFIG: the fixed queues (repeatable)."),
]

_CompareWithOpt = Annotated[
    str | None,
    opt("--compare-with", metavar="IPLIST", help="Show the queues that move to this id list."),
]


@record(frozen=True)
class StrategyFlags:
    """--strategy and the flags of the strategies that take some."""

    strategy: StrategyName | None = None
    virtual_nodes: int = 10
    consumer_idcs: str | None = None
    delegate: StrategyName = StrategyName.AVG
    broker_rooms: str | None = None
    consumer_rooms: str | None = None
    config_queues: list[str] | None = None

    def build(self, *, default: bool) -> Any:
        """The strategy object; None when none is named and ``default`` is False (-g: the clients')."""
        from mqctl.ops import strategies as ops

        self._check_settings()
        if self.strategy is None and not default:
            return None
        return ops.build_strategy(
            (self.strategy or StrategyName.AVG).value,
            virtual_nodes=self.virtual_nodes,
            consumer_idcs=[x.strip() for x in (self.consumer_idcs or "").split(",") if x.strip()],
            delegate=self.delegate.value,
            broker_rooms=ops.parse_mapping(self.broker_rooms, "--broker-rooms"),
            consumer_rooms=ops.parse_mapping(self.consumer_rooms, "--consumer-rooms"),
            config_queues=self.config_queues or [],
        )

    def _check_settings(self) -> None:
        """A strategy's own flag given while another strategy allocates would change nothing: refused,
        naming the --strategy that takes it (MACHINE_ROOM_NEARBY's --delegate counts as in use)."""
        in_use = {self.strategy}
        if self.strategy is StrategyName.MACHINE_ROOM_NEARBY:
            in_use.add(self.delegate)
        for name, flag, owner in _SETTINGS:
            if given(name) and owner not in in_use:
                hint = None
                if owner is not StrategyName.MACHINE_ROOM_NEARBY:
                    hint = f"or --strategy machine_room_nearby --delegate {owner.value.lower()}"
                raise UsageError(
                    f"{flag} is a {owner.value} setting: add --strategy {owner.value.lower()}", hint
                )


# Each strategy's own flags: parameter, flag, the strategy that reads it.
_SETTINGS = (
    ("virtual_nodes", "--virtual-nodes", StrategyName.CONSISTENT_HASH),
    ("consumer_idcs", "--consumer-idcs", StrategyName.MACHINE_ROOM),
    ("delegate", "--delegate", StrategyName.MACHINE_ROOM_NEARBY),
    ("broker_rooms", "--broker-rooms", StrategyName.MACHINE_ROOM_NEARBY),
    ("consumer_rooms", "--consumer-rooms", StrategyName.MACHINE_ROOM_NEARBY),
    ("config_queues", "--config-queues", StrategyName.CONFIG),
)


strategy_options = block(
    "strategy",
    [
        Flag("strategy", _StrategyOpt),
        Flag("virtual_nodes", _VirtualNodesOpt, 10),
        Flag("consumer_idcs", _ConsumerIdcsOpt),
        Flag("delegate", _DelegateOpt, StrategyName.AVG),
        Flag("broker_rooms", _BrokerRoomsOpt),
        Flag("consumer_rooms", _ConsumerRoomsOpt),
        Flag("config_queues", _ConfigQueuesOpt),
    ],
    StrategyFlags,
)


@handle_errors
@output_options()
@cluster_options(versioned=False)
@strategy_options
def allocate_mq(
    topic: _TopicOpt = None,
    ip_list: _IpListOpt = None,
    group: _GroupOpt = None,
    sort: _SortOpt = False,
    compare_with: _CompareWithOpt = None,
    *,
    strategy: StrategyFlags,
    cluster: Cluster,
    out: Output,
) -> None:
    from mqctl.ops import allocate as ops

    topics = [t.strip() for t in (topic or "").split(",") if t.strip()]
    if not topics and not group:
        raise UsageError("-t/--topic names no topic (or give -g GROUP for its rebalance diff)")
    if group is None and ip_list is None:
        raise UsageError("-i/--ipList is required (or -g GROUP: the group's own clients)")
    strat = strategy.build(default=group is None)
    with cluster.open() as backend:
        if group is not None:
            _rebalance(backend, group.strip(), topics or None, strat, out.fmt)
            return
        assert ip_list is not None and strat is not None
        _allocate(backend, topics, ops.split_ip_list(ip_list.strip()), strat, sort, compare_with, out.fmt)


def _allocate(backend, topics, ips, strat, sort, compare_with, fmt) -> None:  # type: ignore[no-untyped-def]
    from mqctl.ops import allocate as ops
    from mqctl.render import allocate as render

    other_ips = ops.split_ip_list(compare_with.strip()) if compare_with is not None else None
    result, moves = ops.allocate_compared(backend, topics, ips, strat, sort=sort, compare_with=other_ips)
    warn_all(backend.take_warnings())
    if fmt is OutputFormat.plain and moves is not None:
        warn("--compare-with is shown with -o table or -o json; plain prints mqadmin's line only")
    emit(fmt, render.views(result, moves, other_ips, backend.kind))


def _rebalance(backend, group: str, topics, strat, fmt: OutputFormat) -> None:  # type: ignore[no-untyped-def]
    from mqctl.ops.rebalance import rebalance_check
    from mqctl.render import allocate as render

    report, notes = rebalance_check(backend, group, topics, strat)
    warn_all([*notes, *backend.take_warnings()])
    emit(fmt, render.rebalance_views(report))


allocate_mq.__doc__ = HELP
