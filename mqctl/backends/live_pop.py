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
from mqctl.remoting.bodies_pop import decode_broker_config, decode_subscription_query
from mqctl.remoting.codes import RequestCode, ResponseCode

if TYPE_CHECKING:
    from mqctl.backends.live_net import LiveRounds, Request
    from mqctl.model import ConsumerConnection


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
    from dataclasses import replace

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
