"""consumerConnection: a group's online clients and subscriptions, in the order mqadmin prints."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from mqctl.model import ConsumerConnection, java_string_hash
from mqctl.model.javaorder import concurrent_hashmap_order

if TYPE_CHECKING:
    from mqctl.backends.base import Backend


def consumer_connection(backend: Backend, group: str) -> ConsumerConnection:
    """The group's connection info; subscriptions in the Java ConcurrentHashMap order mqadmin
    iterates them in (mqadmin.md 8.3), clients as the broker listed them (Java's own order there
    is a HashSet of identity hashes: effectively random)."""
    conn = backend.consumer_connection(group)
    ordered = concurrent_hashmap_order(((s.topic, s) for s in conn.subscriptions), java_string_hash)
    return replace(conn, subscriptions=tuple(s for _topic, s in ordered))
