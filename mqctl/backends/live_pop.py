"""What a live cluster answers about POP consumers (RocketMQ 5: gRPC clients through a proxy).

- The brokers' compensation table (``ConsumerManager.compensateSubscribeData``): a POP request (and
  a pull without heartbeat) leaves the group's subscription there for ``subscriptionExpiredTimeout``
  (10 minutes by default); QUERY_SUBSCRIPTION_BY_CONSUMER (345) reads it per broker and topic. It is
  the only trace of a gRPC consumer on a broker: the proxy never registers its clients there.
- A broker's settings (GET_BROKER_CONFIG, 26): ``useServerSideResetOffset`` decides whether a reset
  reaches POP consumers at all.
- A proxy's remoting port answers GET_CONSUMER_CONNECTION_LIST from the proxy's own client table
  (``ConsumerManagerActivity.getConsumerConnectionList``): the gRPC clients the brokers never see.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from mqctl.errors import MqctlError, NotFoundError, ProtocolError
from mqctl.remoting.bodies_pop import decode_broker_config, decode_subscription_query, decode_wheel_entry
from mqctl.remoting.codes import RequestCode, ResponseCode

if TYPE_CHECKING:
    from mqctl.backends.live_net import LiveRounds, Request
    from mqctl.model import ConsumerConnection
    from mqctl.model.pop import PopAck, PopCheckpoint, PopWheel  # noqa: F401


def recent_subscriptions(backend: LiveRounds, group: str, topics: Sequence[str]) -> dict[str, str]:
    """topic -> expression, for the topics some broker of the topic's route remembers ``group``
    subscribing to without a registered client. Brokers that do not answer are skipped (the
    answer is a hint, never a number)."""
    requests: list[Request] = []
    for topic in dict.fromkeys(topics):
        try:
            route = backend.net.route(topic)
        except NotFoundError:
            continue
        requests += [
            (b.broker_name, RequestCode.QUERY_SUBSCRIPTION_BY_CONSUMER, {"group": group, "topic": topic})
            for b in route.broker_datas
            if b.select_addr()
        ]
    out: dict[str, str] = {}
    for (_b, _code, fields), r in zip(requests, backend.ask(requests)):
        if isinstance(r, MqctlError) or r.code != ResponseCode.SUCCESS or not r.body:
            continue
        try:
            expr = decode_subscription_query(r.body)
        except ProtocolError:
            continue
        if expr is not None:
            out.setdefault(str(fields["topic"]), expr)
    return out


def broker_settings(backend: LiveRounds, broker: str) -> dict[str, str]:
    """GET_BROKER_CONFIG: the broker's settings, ``key=value`` lines (MixAll.properties2String)."""
    (r,) = backend.ask([(broker, RequestCode.GET_BROKER_CONFIG, {})])
    return decode_broker_config(
        backend.net.ok(r, backend.net.broker_addr(broker), RequestCode.GET_BROKER_CONFIG).body or b""
    )


def connection_at(backend: LiveRounds, addr: str, group: str) -> ConsumerConnection:
    """GET_CONSUMER_CONNECTION_LIST asked at ``addr`` (mqadmin's -b): a broker, or a proxy's
    remoting port, which lists the gRPC clients connected to that proxy."""
    from mqctl.records import replace
    from mqctl.remoting.bodies import decode_consumer_connection

    code = RequestCode.GET_CONSUMER_CONNECTION_LIST
    r = backend.net.call(addr, code, {"consumerGroup": group})
    if r.code == ResponseCode.CONSUMER_NOT_ONLINE:
        raise NotFoundError(
            f"consumer group {group!r} has no consumer online at {addr} (its answer: {r.remark})",
            "a proxy lists only the clients connected to it; ask each proxy of the cluster",
        )
    conn = decode_consumer_connection(backend.net.ok(r, addr, code).body, group)
    if not conn.connections:
        raise NotFoundError(f"consumer group {group!r} has no consumer online at {addr}")
    brokers = {a for b in backend.net.brokers() for _i, a in b.addrs}
    return replace(conn, via=addr, via_proxy=addr not in brokers, via_version=r.version)


# Entries of a broker's timer wheel read at most per question (user timer messages included):
# beyond, the count is a lower bound and says so.
WHEEL_LIMIT = 50_000
_PAGE = 8_000
_ROUND = 256


def pop_checkpoints(
    backend: LiveRounds,
    cache: dict[tuple[str, int], PopCheckpoint | PopAck | None],
    group: str,
    brokers: Sequence[str],
    since_ms: int,
    limit: int = WHEEL_LIMIT,
) -> PopWheel:
    """The group's POP checkpoints and acknowledgements in each broker's timer wheel stored since
    ``since_ms``: the wheel's range (SEARCH_OFFSET_BY_TIMESTAMP, GET_MAX_OFFSET), its units in pages
    (QUERY_CONSUME_QUEUE; only units whose tag hash is ck, ack or bAck are kept), then each message
    (VIEW_MESSAGE_BY_ID, once per command: ``cache`` keeps them, a message never changes)."""
    from mqctl.model.pop import PopAck, PopCheckpoint, PopWheel

    wanted, capped = _wheel_units(backend, brokers, since_ms, limit)
    _view_entries(backend, cache, [w for w in dict.fromkeys(wanted) if w not in cache])
    found = [e for w in wanted if (e := cache.get(w)) is not None and e.group == group]
    return PopWheel(
        tuple(e for e in found if isinstance(e, PopCheckpoint)),
        tuple(e for e in found if isinstance(e, PopAck)),
        tuple((b, since_ms) for b in brokers if b not in capped),
        tuple(capped),
    )


def _wheel_units(
    backend: LiveRounds, brokers: Sequence[str], since_ms: int, limit: int
) -> tuple[list[tuple[str, int]], list[str]]:
    """(broker, commit-log offset) of each ck/ack/bAck unit in the brokers' wheels since
    ``since_ms``, and the brokers whose range was cut to the last ``limit`` units."""
    from mqctl.model import java_string_hash
    from mqctl.model.pop import ACK_TAG, BATCH_ACK_TAG, CK_TAG, TIMER_TOPIC
    from mqctl.remoting.frame import ext_int

    wheel = {"topic": TIMER_TOPIC, "queueId": 0}
    bounds = [
        (b, RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, {**wheel, "timestamp": since_ms, "boundaryType": "LOWER"})
        for b in brokers
    ]
    bounds += [(b, RequestCode.GET_MAX_OFFSET, wheel) for b in brokers]
    answers = backend.ask(bounds)
    hashes = {java_string_hash(t) for t in (CK_TAG, ACK_TAG, BATCH_ACK_TAG)}
    wanted: list[tuple[str, int]] = []
    capped: list[str] = []
    for i, b in enumerate(brokers):
        addr = backend.net.broker_addr(b)
        start = ext_int(backend.net.ok(answers[i], addr, RequestCode.SEARCH_OFFSET_BY_TIMESTAMP), "offset")
        end = ext_int(backend.net.ok(answers[len(brokers) + i], addr, RequestCode.GET_MAX_OFFSET), "offset")
        if end - start > limit:
            start, capped = end - limit, [*capped, b]
        wanted += [(b, phys) for phys in _units(backend, b, start, end, hashes)]
    return wanted, capped


def _view_entries(
    backend: LiveRounds,
    cache: dict[tuple[str, int], PopCheckpoint | PopAck | None],
    todo: list[tuple[str, int]],
) -> None:
    """Each unit's message viewed (VIEW_MESSAGE_BY_ID, ``_ROUND`` at a time) into ``cache``."""
    from mqctl.model.pop import REVIVE_TOPIC_PREFIX, TIMER_TOPIC

    # The topic a view names is the message's real one: a 5.5 broker refuses a timer-wheel entry
    # asked as rmq_sys_wheel_timer ("The topic does not match the message": it compares REAL_TOPIC,
    # QueryMessageProcessor.matchesRequestTopic); a POP checkpoint's or ack's is the revive topic of
    # its broker's cluster. Older brokers do not compare.
    revive = {bd.broker_name: REVIVE_TOPIC_PREFIX + bd.cluster for bd in backend.net.brokers()}
    for part in (todo[i : i + _ROUND] for i in range(0, len(todo), _ROUND)):
        reqs: list[Request] = [
            (b, RequestCode.VIEW_MESSAGE_BY_ID, {"topic": revive.get(b, TIMER_TOPIC), "offset": phys})
            for b, phys in part
        ]
        for (b, phys), r in zip(part, backend.ask(reqs)):
            body = backend.net.ok(r, backend.net.broker_addr(b), RequestCode.VIEW_MESSAGE_BY_ID).body
            cache[(b, phys)] = decode_wheel_entry(body, b) if body else None


def _units(backend: LiveRounds, broker: str, start: int, end: int, hashes: set[int]) -> list[int]:
    """Commit-log offsets of the wheel's units in [start, end) whose tag hash is in ``hashes``; a
    page stops at a consume-queue file's end and is continued from there."""
    from mqctl.model.pop import TIMER_TOPIC
    from mqctl.remoting.bodies_queue import decode_query_consume_queue

    out: list[int] = []
    index = start
    while index < end:
        count = min(_PAGE, end - index)
        fields = {"topic": TIMER_TOPIC, "queueId": 0, "index": index, "count": count}
        (r,) = backend.ask([(broker, RequestCode.QUERY_CONSUME_QUEUE, fields)])
        ok = backend.net.ok(r, backend.net.broker_addr(broker), RequestCode.QUERY_CONSUME_QUEUE)
        if not ok.body:
            break  # the range expired since it was asked
        page = decode_query_consume_queue(ok.body, index)
        if not page.entries:
            break
        out += [e.phys_offset for e in page.entries if e.tags_code in hashes]
        index += len(page.entries)
    return out
