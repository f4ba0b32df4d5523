"""The groups overview of a live cluster: mqadmin's list and what it misses, in few round trips.

mqadmin lists the groups of the name server's ``%RETRY%`` topics (GET_ALL_TOPIC_LIST_FROM_NAMESERVER,
iterated in the Java HashSet order it decodes the list into) and then, group by group, asks
for consume stats and connections (about eight requests each, one after the other). Here the
same answers come from every broker at once: GET_CONSUME_STATS per (group, broker) and one
GET_CONSUMER_CONNECTION_LIST per group, all pipelined; plus the groups mqadmin cannot see
(committed offsets but no retry topic: GET_ALL_CONSUMER_OFFSET; a subscription group only:
GET_ALL_SUBSCRIPTIONGROUP_CONFIG), marked by where they were found. A broker's predefined
system groups are left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.errors import MqctlError
from mqctl.model import (
    FOUND_OFFSETS,
    FOUND_RETRY_TOPIC,
    FOUND_SUBSCRIPTION,
    ConsumerConnection,
    GroupOverview,
    GroupRef,
    MessageQueue,
    group_of_retry_topic,
    is_system_group,
)
from mqctl.remoting.codes import RequestCode, ResponseCode

if TYPE_CHECKING:
    from mqctl.backends.live_net import LiveRounds, Request
    from mqctl.model import BrokerFailure


def _retry_groups(backend: LiveRounds) -> list[str]:
    from mqctl.model.javaorder import string_order
    from mqctl.remoting.bodies import decode_name_list

    addr, resp = backend.net.ns_call(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)
    topics = decode_name_list(
        backend.net.ok(resp, addr, RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER).body, "topicList"
    )
    groups = (group_of_retry_topic(t) for t in string_order(topics))
    return list(dict.fromkeys(g for g in groups if g))


Tables = dict[str, dict[str, dict[int, int]]]  # broker -> "topic@group" -> queue id -> offset


def _table_groups(
    backend: LiveRounds, brokers: list[str]
) -> tuple[set[str], set[str], dict[str, str], Tables]:
    """Groups with committed offsets, groups with a subscription config (on any broker), the
    brokers that did not answer (their groups may be missing: the caller says so), and each
    answering broker's offset table."""
    from mqctl.remoting.bodies import decode_consumer_offsets_body, decode_subscription_groups_body
    from mqctl.store.offsets import COMMITTED, split_offset_key

    requests: list[Request] = [(b, RequestCode.GET_ALL_CONSUMER_OFFSET, {}) for b in brokers]
    requests += [(b, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, {}) for b in brokers]
    with_offsets: set[str] = set()
    with_config: set[str] = set()
    dead: dict[str, str] = {}
    tables: Tables = {}
    for (b, code, _f), r in zip(requests, backend.ask(requests)):
        if isinstance(r, MqctlError):
            dead.setdefault(b, r.message)
            continue
        if code == RequestCode.GET_ALL_CONSUMER_OFFSET and r.code == ResponseCode.SUCCESS:
            tables[b] = {}
        if r.code != ResponseCode.SUCCESS or not r.body:
            continue  # "No consumer offset in this broker" and kin: nothing to add
        if code == RequestCode.GET_ALL_CONSUMER_OFFSET:
            tables[b] = decode_consumer_offsets_body(r.body)
            for key in tables[b]:
                parts = split_offset_key(key)
                if parts is not None and parts[2] == COMMITTED:
                    with_offsets.add(parts[1])
        else:
            with_config.update(decode_subscription_groups_body(r.body))
    return with_offsets, {g for g in with_config if not is_system_group(g)}, dead, tables


def _refs(backend: LiveRounds, brokers: list[str]) -> tuple[list[GroupRef], dict[str, str], Tables]:
    retry = _retry_groups(backend)
    with_offsets, with_config, dead, tables = _table_groups(backend, brokers)
    refs = [
        GroupRef(g, (FOUND_RETRY_TOPIC, FOUND_OFFSETS) if g in with_offsets else (FOUND_RETRY_TOPIC,))
        for g in retry
    ]
    refs += [GroupRef(g, (FOUND_OFFSETS,)) for g in sorted(with_offsets - set(retry))]
    refs += [GroupRef(g, (FOUND_SUBSCRIPTION,)) for g in sorted(with_config - set(retry) - with_offsets)]
    return refs, dead, tables


def overview(backend: LiveRounds, *, detail: bool = False) -> list[GroupOverview]:
    """Every group with its stats merged over every broker. A broker that does not answer is a
    failure of every group's stats (so the command cannot end as if the numbers were whole).
    ``detail``: each queue's min offset too (one GET_TOPIC_STATS_INFO per broker and topic) and
    whether the group has a committed offset there (the offset tables already read)."""
    from mqctl.remoting.bodies import decode_consumer_connection

    brokers = [b.broker_name for b in backend.net.brokers() if b.select_addr()]
    refs, dead, tables = _refs(backend, brokers)
    alive = [b for b in brokers if b not in dead] or brokers
    stats_requests: list[list[Request]] = [
        [(b, RequestCode.GET_CONSUME_STATS, {"consumerGroup": r.name}) for b in brokers] for r in refs
    ]
    # Connections are registered with every broker: ask one that answers.
    conn_requests: list[Request] = [
        (alive[0], RequestCode.GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": r.name}) for r in refs
    ]
    flat = [q for per_group in stats_requests for q in per_group]
    results = backend.ask(flat + conn_requests)
    out = []
    for i, ref in enumerate(refs):
        mine = results[i * len(brokers) : (i + 1) * len(brokers)]
        failure: str | None = None
        lost: tuple[BrokerFailure, ...] = ()
        try:
            stats = backend.merge_stats(ref.name, stats_requests[i], mine)
        except MqctlError as exc:
            # No broker answered for this group: keep why each failed (their exit statuses say
            # what the overview exits with).
            stats, failure, lost = None, exc.message, _failures(backend, brokers, exc)
        conn: ConsumerConnection | None = None
        c = results[len(flat) + i]
        if not isinstance(c, MqctlError) and c.code == ResponseCode.SUCCESS and c.body:
            conn = decode_consumer_connection(c.body, ref.name)
        out.append(GroupOverview(ref, stats, conn, failure, lost if stats is None else ()))
    return _detailed(backend, out, tables) if detail else out


def _failures(backend: LiveRounds, brokers: list[str], exc: MqctlError) -> tuple[BrokerFailure, ...]:
    """The brokers behind a group's failed stats (merge_stats raises when none answered)."""
    from mqctl.model import BrokerFailure

    lost = tuple(getattr(exc, "failures", ()))
    if not lost:  # one broker's own error (a denial names it), not a list of them
        where = getattr(exc, "addr", None)
        broker = where if where in brokers else brokers[0]
        lost = (BrokerFailure(broker, backend.net.broker_addr(broker), exc.message, int(exc.exit_status)),)
    return lost


def _detailed(backend: LiveRounds, overviews: list[GroupOverview], tables: Tables) -> list[GroupOverview]:
    """Min offsets (None where a broker did not answer: a warning says so) and committed flags
    (None where a broker's offset table could not be read) filled into every queue."""
    from dataclasses import replace

    mins = backend.min_offsets([q.queue for ov in overviews if ov.stats for q in ov.stats.queues])
    out = []
    for ov in overviews:
        if ov.stats is not None:
            queues = tuple(
                replace(q, min_offset=mins.get(q.queue), committed=_committed(tables, ov.ref.name, q.queue))
                for q in ov.stats.queues
            )
            ov = replace(ov, stats=replace(ov.stats, queues=queues))
        out.append(ov)
    return out


def _committed(tables: Tables, group: str, mq: MessageQueue) -> bool | None:
    table = tables.get(mq.broker_name)
    return None if table is None else mq.queue_id in table.get(f"{mq.topic}@{group}", {})
