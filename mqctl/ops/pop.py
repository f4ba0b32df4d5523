"""POP consumer groups (RocketMQ 5: gRPC clients through a rocketmq-proxy): recognising them and
saying what each command's numbers mean for them.

The brokers never register a gRPC client (the proxy keeps its clients to itself,
``proxy/service/ClusterServiceManager``) and never create ``%RETRY%group`` for it
(``ClientManageProcessor.heartBeat`` does, on a remoting heartbeat). What a POP group leaves on
the brokers: its committed offsets (moved at pop time, ``PopBufferMergeService.commitOffset``), its
POP retry topics once a message was revived (``PopReviveService.reviveRetry``), and for 10 minutes
after its last pop a subscription in the brokers' compensation table
(``ConsumerManager.compensateSubscribeData``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from mqctl.errors import MqctlError, NotAvailableError, NotFoundError
from mqctl.model import RETRY_PREFIX
from mqctl.records import replace

# mqctl.model.pop loads when a group may be a POP group: a remoting client's group (most of them)
# is told apart by its topic names, without defining POP's data classes at start-up.
if TYPE_CHECKING:
    from mqctl.backends.base import Backend
    from mqctl.model import ConsumeStats, GroupOverview, MessageQueue
    from mqctl.model.pop import PopGroup, PopRetryTopic, PopView


def _has_route(backend: Backend, topic: str) -> bool:
    try:
        backend.topic_route(topic)
    except NotFoundError:
        return False
    return True


def _retry_topics(backend: Backend, group: str, brokers: list[str], topics: set[str]) -> list[PopRetryTopic]:
    """The group's POP retry topics in the brokers' topic configs (those of ``topics`` when known)."""
    from mqctl.model.pop import parse_pop_retry

    found: dict[str, PopRetryTopic] = {}
    for b in brokers:
        try:
            names = list(backend.topic_configs(b))
        except MqctlError:
            continue  # a broker that does not answer: the other brokers' topics still count
        for name in names:
            rt = parse_pop_retry(name, group, topics or None)
            if rt is not None:
                found.setdefault(name, rt)
    return sorted(found.values(), key=lambda r: r.name)


def detect(
    backend: Backend, group: str, stats: ConsumeStats | None = None, topics: tuple[str, ...] = ()
) -> PopGroup | None:
    """The group as a POP group, or None. A group whose ``%RETRY%group`` exists and that has no POP
    retry topic among its offsets is a remoting client's group: nothing more is asked for it.
    ``topics``: topics it consumes besides those of ``stats``."""
    rows = {q.queue.topic for q in stats.queues} if stats is not None else set()
    rows |= set(topics)
    plain = {t for t in rows if not t.startswith(RETRY_PREFIX)}
    if _pop_rows(group, rows, plain or None):
        classic = _has_route(backend, RETRY_PREFIX + group)
    else:
        # A remoting client's group (its offsets on %RETRY%group, else that topic's route: asked
        # already to find the group's brokers) costs no further question.
        classic = RETRY_PREFIX + group in rows or _has_route(backend, RETRY_PREFIX + group)
        if classic:
            return None
    brokers = sorted({q.queue.broker_name for q in stats.queues}) if stats and stats.queues else []
    retry = _retry_topics(backend, group, brokers or list(backend.broker_names()), plain)
    consumed = sorted(plain | {r.topic for r in retry})
    try:
        recent: dict[str, str] | None = (
            dict(backend.recent_subscriptions(group, consumed)) if consumed else {}
        )
    except NotAvailableError:
        recent = None
    if not retry and not recent:
        return None
    from mqctl.model.pop import PopGroup

    return PopGroup(
        group,
        tuple(retry),
        tuple(sorted(recent)) if recent is not None else None,
        classic,
        tuple(sorted((recent or {}).items())),
    )


# How far back the timer wheels are read for checkpoints: a message popped earlier with a longer
# invisible time is not counted in flight (the note says so).
INFLIGHT_WINDOW_MS = 30 * 60_000


def inflight(
    backend: Backend, group: str, brokers: list[str], topics: set[str], now_ms: int
) -> tuple[int | None, str, dict[MessageQueue, int]]:
    """Messages popped and not acknowledged whose invisible time is not over, per queue of
    ``topics``: each checkpoint's offsets (PopMessageProcessor.appendCheckPoint) minus the ones
    acknowledged for it (AckMessageProcessor; a checkpoint and its acks share topic, queue, start
    offset and pop time, the key PopReviveService merges them by). None with why when unknown."""
    from collections import Counter

    from mqctl.model import MessageQueue
    from mqctl.model.pop import INFLIGHT_UNKNOWN

    try:
        wheel = backend.pop_checkpoints(group, brokers, now_ms - INFLIGHT_WINDOW_MS)
    except NotAvailableError:
        return None, INFLIGHT_UNKNOWN + "; a store holds no running broker's timer wheel", {}
    except MqctlError as exc:
        return None, f"unknown: the brokers' timer wheels could not be read ({exc.message})", {}
    acked: dict[tuple[str, int, int, int], set[int]] = {}
    for a in wheel.acks:
        acked.setdefault(a.key, set()).update(a.offsets)
    per: Counter[MessageQueue] = Counter()
    for ck in wheel.checkpoints:
        if ck.revive_time > now_ms and ck.topic in topics:
            done = acked.get(ck.key, set())
            per[MessageQueue(ck.topic, ck.broker, ck.queue_id)] += sum(1 for o in ck.offsets if o not in done)
    note = (
        "popped and not acknowledged, their invisible time not over: counted from the POP checkpoints "
        "and acks in the brokers' timer wheels (rmq_sys_wheel_timer) of the last 30 minutes"
    )
    if wheel.capped:
        note += f"; {', '.join(wheel.capped)} held more timer entries than read: at least this many"
    return sum(per.values()), note, {q: n for q, n in per.items() if n}


def view(
    backend: Backend, group: str, stats: ConsumeStats, topic: str | None = None, now_ms: int | None = None
) -> PopView | None:
    """consumerProgress's POP facts for the group (None for any other group): the messages never
    popped, each POP retry topic's backlog (asked for when the stats lack its rows: a retry topic
    the group never popped from yet has no committed offset), and in flight (unknown)."""
    info = detect(backend, group, stats)
    if info is None:
        return None
    return view_of(backend, info, stats, topic, now_ms)


def view_of(
    backend: Backend, info: PopGroup, stats: ConsumeStats, topic: str | None = None, now_ms: int | None = None
) -> PopView:
    """``view`` for a group already recognised as POP (``info``); in flight only with ``now_ms``."""
    group = info.group
    retry = {r.name for r in info.retry_topics if topic is None or r.topic == topic}
    waiting = sum(
        max(q.broker_offset - q.consumer_offset, 0)
        for q in stats.queues
        if q.queue.topic not in info.retry_names
    )
    queues = [q for q in stats.queues if q.queue.topic in retry]
    for name in sorted(retry - {q.queue.topic for q in queues}):
        try:
            queues += backend.consume_stats(group, name, detail=False).queues
        except MqctlError:
            continue
    backlog: dict[str, int] = {}
    for q in queues:
        backlog[q.queue.topic] = backlog.get(q.queue.topic, 0) + max(q.broker_offset - q.consumer_offset, 0)
    from mqctl.model.pop import PopView

    out = PopView(info, waiting, tuple(sorted(backlog.items())), retry_queues=tuple(queues))
    if now_ms is None:
        return out
    brokers = sorted({q.queue.broker_name for q in (*stats.queues, *queues)})
    topics = {q.queue.topic for q in (*stats.queues, *queues)}
    count, note, per = inflight(backend, group, brokers, topics, now_ms)
    return replace(out, inflight=count, inflight_note=note, inflight_by_queue=tuple(per.items()))


PROXY_HINT = (
    "ask the proxy the clients connect to: consumerConnection -g {group} -b PROXY_HOST:PORT "
    "(the proxy's remotingListenPort, 8080 by default)"
)


def behind_proxy(backend: Backend, group: str) -> PopGroup | None:
    """For a group no broker lists a client of: the group as a POP group, if it is one."""
    try:
        stats = backend.consume_stats(group, detail=False)
    except MqctlError:
        stats = None
    try:
        return detect(backend, group, stats)
    except MqctlError:
        return None


def not_online(backend: Backend, group: str, exc: NotFoundError) -> NotFoundError:
    """The error for "no consumer online", saying where a POP group's clients are."""
    info = behind_proxy(backend, group)
    if info is None:
        return exc
    return NotFoundError(
        f"consumer group {group!r} has no consumer registered with the brokers, and it consumes in POP "
        f"mode ({info.evidence()}): gRPC clients connect to a rocketmq-proxy, which keeps them to itself",
        PROXY_HINT.format(group=group),
    )


def no_allocation(backend: Backend, group: str, exc: NotFoundError) -> MqctlError:
    """allocateMQ -g of a group with no client on the brokers: a POP group has no client-side
    allocation at all (the broker picks a queue per pop request, PopMessageProcessor.processRequest
    from a random start), so there is no assignment to compare."""
    info = behind_proxy(backend, group)
    if info is None:
        return exc
    return NotAvailableError(
        f"consumer group {group!r} consumes in POP mode ({info.evidence()}): POP has no client-side "
        "allocation, the broker hands out messages of any of its queues on each pop request, so there is "
        "no assignment to compare",
        "consumerProgress -g shows what it popped; allocateMQ -t TOPIC -i IDS still simulates a push group",
    )


def reset_note(backend: Backend, group: str, topics: tuple[str, ...]) -> tuple[bool, str] | None:
    """For a reset of a POP group (None for others): whether it counts as online, and what the
    plan says before anything is written. The brokers list none of its clients (they are behind a
    proxy); a pop in the last 10 minutes (their compensation table) means it consumes now. A 5.x
    broker resets a POP group only server-side (``useServerSideResetOffset``, on by default since
    5.2, AdminBrokerProcessor.resetOffset -> resetOffsetInner, which the next pop of each queue
    takes: PopMessageProcessor.getPopOffset -> resetPopOffset). With it off the broker resets
    through registered clients only, which a POP group has none of (apache/rocketmq #9038)."""
    info = detect(backend, group, None, topics)
    if info is None:
        return None
    brokers: list[str] = []
    for t in topics:
        try:
            brokers += [b for b in backend.topic_route(t).broker_names if b not in brokers]
        except MqctlError:
            continue
    off = []
    for b in brokers:
        try:
            if str(backend.broker_settings(b).get("useServerSideResetOffset", "true")).lower() == "false":
                off.append(b)
        except MqctlError:
            continue
    head = f"POP group ({info.evidence()}): its consumers are behind a proxy, no broker lists them"
    if off and info.active:
        return True, (
            f"{head}; {', '.join(off)} run(s) with useServerSideResetOffset=false, where a reset reaches "
            "only clients registered with the broker (apache/rocketmq #9038): --execute is refused there; "
            "turn it on (mqadmin updateBrokerConfig -k useServerSideResetOffset -v true) first"
        )
    if info.active:
        return True, (
            f"{head}; it popped within the last 10 minutes: online; the brokers reset server-side and its "
            "next pops start at the targets (messages already popped and not acknowledged still come back "
            "through the retry topic)"
        )
    tail = "; the brokers reset server-side, its next pop starts at the targets"
    if off:
        tail = (
            f"; {', '.join(off)} run(s) with useServerSideResetOffset=false: offsets written queue by queue"
        )
    return False, f"{head}; no pop in the last 10 minutes: offline{tail}"


def overview_marks(
    backend: Backend, overviews: Sequence[GroupOverview]
) -> tuple[dict[str, PopGroup], dict[str, PopRetryTopic]]:
    """In the groups overview: the POP groups, and the rows that are no group at all but a POP
    retry topic v1 mqadmin lists as one (``%RETRY%G_T`` read as group ``G_T``: only that retry topic
    knows it, while ``G`` has offsets on ``T``). Groups with a client on the brokers, or a classic
    retry topic, are asked nothing more."""
    from mqctl.model import FOUND_RETRY_TOPIC
    from mqctl.model.pop import pop_owner

    by_name = {ov.ref.name: ov for ov in overviews}
    topics = {n: {q.queue.topic for q in ov.stats.queues} if ov.stats else set() for n, ov in by_name.items()}
    bogus: dict[str, PopRetryTopic] = {}
    for name, ov in by_name.items():
        if ov.ref.found_in != (FOUND_RETRY_TOPIC,) or topics[name]:
            continue
        owners = {g for g in by_name if g != name and name.startswith((g + "_", g + "+"))}
        rt = pop_owner(
            RETRY_PREFIX + name, owners, set().union(*(topics[g] for g in owners)) if owners else set()
        )
        if rt is not None:
            bogus[name] = rt
    pops: dict[str, PopGroup] = {}
    for name, ov in by_name.items():
        if name in bogus or ov.connection is not None or ov.stats is None:
            continue
        own = {rt.name for rt in bogus.values() if rt.group == name}
        plain = {t for t in topics[name] if not t.startswith(RETRY_PREFIX)}
        if FOUND_RETRY_TOPIC in ov.ref.found_in and not own and not _pop_rows(name, topics[name], plain):
            continue  # a remoting client's group (its %RETRY%name exists), offline
        try:
            info = detect(backend, name, ov.stats)
        except MqctlError:
            continue
        if info is not None:
            pops[name] = info
    return pops, bogus


def _pop_rows(group: str, topics: set[str], plain: set[str] | None) -> bool:
    """Whether a POP retry topic of ``group`` (on one of ``plain``, when given) is among ``topics``."""
    heads = (f"{RETRY_PREFIX}{group}+", f"{RETRY_PREFIX}{group}_")
    if not any(t.startswith(heads) for t in topics):
        return False  # no name can be one: POP's model is not loaded
    from mqctl.model.pop import parse_pop_retry

    return any(parse_pop_retry(t, group, plain) is not None for t in topics)


def overview_notes(
    backend: Backend, overviews: Sequence[GroupOverview]
) -> tuple[dict[str, str], dict[str, tuple[str, ...]], set[str]]:
    """For the overview: consume type CONSUME_POP per POP group, its notes, and the rows to leave
    out (POP retry topics mqadmin lists as groups)."""
    from mqctl.model.pop import CONSUME_POP

    pops, bogus = overview_marks(backend, overviews)
    notes: dict[str, list[str]] = {}
    for name, info in pops.items():
        where = "popped in the last 10 minutes" if info.active else "no pop in the last 10 minutes"
        notes.setdefault(name, []).append(
            f"consumes in POP mode ({info.evidence()}): its gRPC clients are behind a proxy, no broker "
            f"lists them ({where}); Diff = messages not popped yet"
        )
    for name, rt in bogus.items():
        notes.setdefault(rt.group, []).append(
            f"left out {name}: mqadmin lists it as a group, it is {rt.group}'s POP retry topic {rt.name}"
        )
    return {n: CONSUME_POP for n in pops}, {n: tuple(v) for n, v in notes.items()}, set(bogus)
