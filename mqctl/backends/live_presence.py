"""Who of a consumer group is online, read live (GET_CONSUMER_CONNECTION_LIST), and the question a
group without committed offsets asks to tell whether it broadcasts: the connection list, the
route's brokers' offset tables and the cluster's broker list, in one round.

Asked one after the other, those were three rounds after the group's stats (~3.5 ms of a ~170 ms
call each, on two cores). Sent together, the offset tables are asked before the connection list
has answered: for a group whose online clients say CLUSTERING they were not needed, and are left
unread. That is the rare case: a running clustering consumer commits its offsets every 5 s, so a
group without any is mostly an offline or a broadcasting one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.errors import MqctlError, NotFoundError, UnreachableError
from mqctl.model.broadcast import BROADCASTING, GroupPresence, in_queue_order
from mqctl.remoting.codes import RequestCode, ResponseCode

if TYPE_CHECKING:
    from mqctl.backends.live_net import LiveRounds
    from mqctl.backends.live_pulls import Tables
    from mqctl.model import BackendWarning, ConsumerConnection
    from mqctl.remoting.frame import RemotingCommand

CONNECTIONS = RequestCode.GET_CONSUMER_CONNECTION_LIST


def connection(backend: LiveRounds, group: str, brokers: list[str]) -> ConsumerConnection:
    """``LiveBackend.consumer_connection``: the connection list of the first of ``brokers`` (the
    group's route) that answers. Clients register with the brokers they heartbeat to, which make
    the group's retry topic, so any of them knows the same clients; mqadmin asks a random one."""
    if not brokers:
        raise NotFoundError(f"consumer group {group!r}: no broker to ask")
    last: MqctlError | None = None
    for broker in brokers:
        (result,) = backend.ask([(broker, CONNECTIONS, {"consumerGroup": group})])
        if not isinstance(result, MqctlError):
            return _online(backend, result, broker, group)
        last = result  # unreachable: the next broker knows the same clients
    raise last or UnreachableError(f"no broker of group {group!r} answered")


def _online(backend: LiveRounds, result: RemotingCommand, broker: str, group: str) -> ConsumerConnection:
    if result.code == ResponseCode.CONSUMER_NOT_ONLINE:
        raise NotFoundError(
            f"consumer group {group!r} has no consumer online (the broker's answer: {result.remark})",
            "connections exist only while clients run; consumerProgress shows the group's offsets",
        )
    # (the decoder and the client records load only for an answer with clients: a group without
    # offsets asks this to tell whether it is broadcasting, and is usually offline)
    from mqctl.remoting.bodies import decode_consumer_connection

    body = backend.net.ok(result, backend.net.broker_addr(broker), CONNECTIONS).body
    conn = decode_consumer_connection(body, group)
    if not conn.connections:
        raise NotFoundError(f"consumer group {group!r} has no consumer online")
    return conn


def presence(
    backend: LiveRounds, group: str, brokers: list[str], known: Tables
) -> tuple[GroupPresence, list[BackendWarning]]:
    """``LiveBackend.group_presence``: the connection list of the first of ``brokers`` (the group's
    route), the offset tables of the route's brokers that can hold pull offsets (``known``: tables
    already read) and, when the cluster's brokers are not known yet, its broker list, in one round.
    A broker the route lacks is asked for its table in a second round, once the list is known. A
    first broker that fails is followed by the others, as ``connection`` does."""
    from mqctl.backends.live_pulls import broadcast_pulls, may_hold_pulls

    if not brokers:
        pulls, warnings = broadcast_pulls(backend, group, known)
        return GroupPresence(None, in_queue_order(pulls.get(group, {}))), warnings
    tables = [b for b in brokers if b not in known and may_hold_pulls(backend, b)]
    requests = [(brokers[0], CONNECTIONS, {"consumerGroup": group})]
    requests += [(b, RequestCode.GET_ALL_CONSUMER_OFFSET, {}) for b in tables]
    first, *answers = backend.ask(requests, learn_cluster=True)
    conn: ConsumerConnection | None
    try:
        if isinstance(first, MqctlError):
            conn = connection(backend, group, brokers)
        else:
            conn = _online(backend, first, brokers[0], group)
    except NotFoundError:
        conn = None
    if conn is not None and conn.message_model != BROADCASTING:
        return GroupPresence(conn, None), []
    pulls, warnings = broadcast_pulls(backend, group, known, dict(zip(tables, answers)))
    return GroupPresence(conn, in_queue_order(pulls.get(group, {}))), warnings
