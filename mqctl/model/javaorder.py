"""Iteration orders of Java's unordered collections (spec/mqadmin.md section 8).

mqadmin prints HashSets and HashMaps as they iterate, and ``allocateMQ`` even allocates over a
HashSet's order, so byte-exact output needs the JDK's bucket layout: iteration visits buckets in
index order and, inside a bucket, entries in insertion order (resizes split buckets without
reordering them). Treeified buckets (8+ colliding keys) are ignored: realistic names never get there.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

from mqctl.model import MessageQueue, java_string_hash

__all__ = [
    "bucket",
    "concurrent_hashmap_order",
    "hashmap_order",
    "hashmap_putall_order",
    "hashset_order",
    "java_string_hash",
    "message_queue_hash",
    "spread",
    "string_order",
]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_MASK32 = 0xFFFFFFFF
DEFAULT_CAPACITY = 16
LOAD_FACTOR = 0.75


def _int32(x: int) -> int:
    x &= _MASK32
    return x - 0x1_0000_0000 if x >= 0x8000_0000 else x


def message_queue_hash(mq: MessageQueue) -> int:
    """``MessageQueue.hashCode()``: 31-based over brokerName, queueId, topic (signed 32 bit)."""
    r = 1
    r = 31 * r + java_string_hash(mq.broker_name)
    r = 31 * r + mq.queue_id
    r = 31 * r + java_string_hash(mq.topic)
    return _int32(r)


def spread(h: int) -> int:
    """``HashMap.hash``: the high half folded into the low half (on the unsigned 32-bit value)."""
    u = h & _MASK32
    return u ^ (u >> 16)


def bucket(h: int, capacity: int) -> int:
    return spread(h) & (capacity - 1)


def _capacity_for(size: int, start: int, resize_at_equal: bool) -> int:
    # Resizes only ever grow the table, so the final capacity depends on the final size alone.
    cap = start
    while (size >= LOAD_FACTOR * cap) if resize_at_equal else (size > LOAD_FACTOR * cap):
        cap *= 2
    return cap


def _table_size_for(n: int) -> int:
    """``HashMap.tableSizeFor``: the smallest power of two >= n (at least 1)."""
    cap = 1
    while cap < n:
        cap *= 2
    return cap


def _dedup_pairs(pairs: Iterable[tuple[K, V]]) -> dict[K, V]:
    # A Python dict has exactly Java's put semantics for order bookkeeping: a re-put key keeps its
    # first position and takes the new value.
    out: dict[K, V] = {}
    for k, v in pairs:
        out[k] = v
    return out


def _by_bucket(keys: Sequence[K], hash_fn: Callable[[K], int], capacity: int) -> list[int]:
    # sorted() is stable: ties (same bucket) keep insertion order.
    return sorted(range(len(keys)), key=lambda i: bucket(hash_fn(keys[i]), capacity))


def hashset_order(
    items: Iterable[K], hash_fn: Callable[[K], int], initial_capacity: int = DEFAULT_CAPACITY
) -> list[K]:
    """Iteration order of a ``HashSet`` filled by ``add`` one item at a time (duplicates ignored)."""
    keys = list(dict.fromkeys(items))
    cap = _capacity_for(len(keys), _table_size_for(initial_capacity), resize_at_equal=False)
    return [keys[i] for i in _by_bucket(keys, hash_fn, cap)]


def string_order(keys: Iterable[str], initial_capacity: int = DEFAULT_CAPACITY) -> list[str]:
    """Iteration order of a ``HashSet<String>``/``HashMap<String, ?>`` filled one key at a time:
    the broker derives its tables into fresh maps at every persist, and mqadmin decodes name lists
    into HashSets, so their orders are a pure function of the strings."""
    return hashset_order(keys, java_string_hash, initial_capacity)


def hashmap_order(
    pairs: Iterable[tuple[K, V]], hash_fn: Callable[[K], int], initial_capacity: int = DEFAULT_CAPACITY
) -> list[tuple[K, V]]:
    """Iteration order of a ``HashMap`` filled by ``put`` one pair at a time.

    A repeated key keeps the position of its first put and the value of its last.
    """
    table = _dedup_pairs(pairs)
    keys = list(table)
    cap = _capacity_for(len(keys), _table_size_for(initial_capacity), resize_at_equal=False)
    return [(keys[i], table[keys[i]]) for i in _by_bucket(keys, hash_fn, cap)]


def concurrent_hashmap_order(pairs: Iterable[tuple[K, V]], hash_fn: Callable[[K], int]) -> list[tuple[K, V]]:
    """Iteration order of a ``ConcurrentHashMap`` filled one pair at a time (spec 8.3).

    It resizes once the size reaches 0.75 * capacity (not exceeds it). After a resize the real
    order inside a bucket can differ from insertion order; insertion order is the tie-break here.
    """
    table = _dedup_pairs(pairs)
    keys = list(table)
    cap = _capacity_for(len(keys), DEFAULT_CAPACITY, resize_at_equal=True)
    return [(keys[i], table[keys[i]]) for i in _by_bucket(keys, hash_fn, cap)]


def hashmap_putall_order(
    maps: Iterable[Sequence[tuple[K, V]]], hash_fn: Callable[[K], int]
) -> list[tuple[K, V]]:
    """Order of ``new HashMap<>()`` after ``putAll(m)`` for each m in turn (spec 8.4, JDK 8-17).

    Each ``m`` is given as its own iteration order (e.g. from :func:`hashmap_order`). Unlike
    one-at-a-time filling, putAll pre-sizes the table, so the final capacity can be larger than
    the final size alone would need (12 entries in one putAll -> 32 buckets).
    """
    cap = 0  # no table yet
    table: dict[K, V] = {}
    for m in maps:
        s = len(m)
        if s == 0:
            continue  # putMapEntries does nothing, even the pre-sizing
        if cap == 0:
            cap = _table_size_for(int(s / LOAD_FACTOR + 1.0))
        elif s > LOAD_FACTOR * cap:
            cap *= 2
        for k, v in m:
            table[k] = v
            if len(table) > LOAD_FACTOR * cap:
                cap *= 2
    keys = list(table)
    return [(keys[i], table[keys[i]]) for i in _by_bucket(keys, hash_fn, max(cap, 1))]
