"""consumerConnection: a group's online clients and subscriptions, in the order mqadmin prints."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.model import ConsumerConnection, java_string_hash
from mqctl.model.javaorder import concurrent_hashmap_order
from mqctl.records import replace

if TYPE_CHECKING:
    from mqctl.backends.base import Backend


def consumer_connection(backend: Backend, group: str, at: str | None = None) -> ConsumerConnection:
    """The group's connection info; subscriptions in the Java ConcurrentHashMap order mqadmin
    iterates them in (mqadmin.md 8.3), clients as the broker listed them (Java's own order there
    is a HashSet of identity hashes: effectively random). ``at``: asked at that address (a
    rocketmq-proxy's remoting port lists the gRPC clients the brokers never see). A group with no
    client on the brokers that consumes in POP mode is said to be one (its clients are behind a
    proxy)."""
    from mqctl.errors import NotFoundError

    try:
        conn = backend.consumer_connection(group, at=at)
    except NotFoundError as exc:
        if at is not None:
            raise
        from mqctl.ops.pop import not_online

        raise not_online(backend, group, exc) from None
    ordered = concurrent_hashmap_order(((s.topic, s) for s in conn.subscriptions), java_string_hash)
    return replace(conn, subscriptions=tuple(s for _topic, s in ordered))
