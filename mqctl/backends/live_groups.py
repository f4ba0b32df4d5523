"""The groups overview of a live cluster: mqadmin's list and what it misses, in few round trips.

mqadmin lists the groups of the name server's ``%RETRY%`` topics (GET_ALL_TOPIC_LIST_FROM_NAMESERVER,
iterated in the Java HashSet order it decodes the list into) and then, group by group, asks
for consume stats and connections (about eight requests each, one after the other). Here the
same answers come from every broker at once: one GET_BROKER_CONSUME_STATS per broker, which
holds every group's stats (``live_brokerstats``: where it cannot answer what GET_CONSUME_STATS
would, that request per group and broker, as ``detail`` always does), and one
GET_CONSUMER_CONNECTION_LIST per group, all pipelined; plus the groups mqadmin cannot see
(committed offsets but no retry topic: GET_ALL_CONSUMER_OFFSET; a subscription group only: its
subscription-group table, which GET_BROKER_CONSUME_STATS lists, else
GET_ALL_SUBSCRIPTIONGROUP_CONFIG), marked by where they were found. A broker's predefined system
groups are left out. The queues of a group's stats come in the answering broker's order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.backends import live_brokerstats
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
    from mqctl.remoting.frame import RemotingCommand


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


class _Round:
    """What the brokers' config tables said: groups with committed offsets, groups with a
    subscription config (on any broker), the brokers that did not answer (their groups may be
    missing: the caller says so), each answering broker's offset table, and (without detail)
    each broker's GET_BROKER_CONSUME_STATS answer (``live_brokerstats``)."""

    def __init__(self) -> None:
        self.with_offsets: set[str] = set()
        self.with_config: set[str] = set()
        self.dead: dict[str, str] = {}
        self.tables: Tables = {}
        self.answers: dict[str, live_brokerstats.Answer] = {}
        self.early: list[RemotingCommand | MqctlError] = []  # the answers to ``early`` requests


def _tables_round(backend: LiveRounds, brokers: list[str], detail: bool, early: list[Request]) -> _Round:
    """43 from every broker, with 317 and 21 (the overview's stats at once), or with detail
    201 (the group lists; each group's stats come from 208 later); ``early`` requests ride
    along. A broker whose 317 did not answer is asked 201 in a round of its own."""
    offsets: list[Request] = [(b, RequestCode.GET_ALL_CONSUMER_OFFSET, {}) for b in brokers]
    rnd = _Round()
    n = len(brokers)
    if detail:
        configs = list(brokers)
        results = backend.ask(offsets + _config_requests(configs) + early)
        results, rnd.early = results[: 2 * n], results[2 * n :]
    else:
        results = backend.ask(offsets + live_brokerstats.requests(brokers) + early)
        results, rnd.early = results[: 3 * n], results[3 * n :]
        rnd.answers = live_brokerstats.answers(brokers, results[n:])
        for answer in rnd.answers.values():
            if isinstance(answer, tuple):
                rnd.with_config.update(answer[0].groups)
        configs = [b for b, answer in rnd.answers.items() if answer is None]
        results = results[: len(brokers)] + (backend.ask(_config_requests(configs)) if configs else [])
    _read_tables(rnd, brokers, configs, results)
    rnd.with_config = {g for g in rnd.with_config if not is_system_group(g)}
    return rnd


def _config_requests(brokers: list[str]) -> list[Request]:
    return [(b, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, {}) for b in brokers]


def _read_tables(rnd: _Round, brokers: list[str], configs: list[str], results: list) -> None:
    from mqctl.remoting.bodies import decode_consumer_offsets_body, decode_subscription_groups_body
    from mqctl.store.offsets import COMMITTED, split_offset_key

    asked = [(b, RequestCode.GET_ALL_CONSUMER_OFFSET) for b in brokers]
    asked += [(b, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG) for b in configs]
    for (b, code), r in zip(asked, results):
        if isinstance(r, MqctlError):
            rnd.dead.setdefault(b, r.message)
            continue
        if code == RequestCode.GET_ALL_CONSUMER_OFFSET and r.code == ResponseCode.SUCCESS:
            rnd.tables[b] = {}
        if r.code != ResponseCode.SUCCESS or not r.body:
            continue  # "No consumer offset in this broker" and kin: nothing to add
        if code == RequestCode.GET_ALL_CONSUMER_OFFSET:
            rnd.tables[b] = decode_consumer_offsets_body(r.body)
            for key in rnd.tables[b]:
                parts = split_offset_key(key)
                if parts is not None and parts[2] == COMMITTED:
                    rnd.with_offsets.add(parts[1])
        else:
            rnd.with_config.update(decode_subscription_groups_body(r.body))


def _refs(retry: list[str], rnd: _Round) -> list[GroupRef]:
    with_offsets, with_config = rnd.with_offsets, rnd.with_config
    refs = [
        GroupRef(g, (FOUND_RETRY_TOPIC, FOUND_OFFSETS) if g in with_offsets else (FOUND_RETRY_TOPIC,))
        for g in retry
    ]
    refs += [GroupRef(g, (FOUND_OFFSETS,)) for g in sorted(with_offsets - set(retry))]
    refs += [GroupRef(g, (FOUND_SUBSCRIPTION,)) for g in sorted(with_config - set(retry) - with_offsets)]
    return refs


def overview(backend: LiveRounds, *, detail: bool = False) -> list[GroupOverview]:
    """Every group with its stats merged over every broker. A broker that does not answer is a
    failure of every group's stats (so the command cannot end as if the numbers were whole).
    ``detail``: each queue's min offset too (one GET_TOPIC_STATS_INFO per broker and topic),
    whether the group has a committed offset there (the offset tables already read) and its pull
    offsets (GET_CONSUME_STATS per group and broker: GET_BROKER_CONSUME_STATS has none)."""
    brokers = [b.broker_name for b in backend.net.brokers() if b.select_addr()]
    retry = _retry_groups(backend)
    # Connections are registered with every broker: ask one that answers (the first, unless
    # it did not answer the tables; mqadmin's groups are known already: asked with the tables).
    early: list[Request] = [
        (b, RequestCode.GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": g})
        for b in brokers[:1]
        for g in retry
    ]
    rnd = _tables_round(backend, brokers, detail, early)
    refs = _refs(retry, rnd)
    alive = [b for b in brokers if b not in rnd.dead] or brokers
    conns = dict(zip(retry, rnd.early)) if brokers and alive[0] == brokers[0] else {}
    known = {b: live_brokerstats.groups_with_topics(t) for b, t in rnd.tables.items()}
    # Per group and broker: stats already known (from 317), else a 208 to ask.
    stats_requests: list[list[Request]] = []
    answered: list[list[object]] = []
    for r in refs:
        stats_requests.append(
            [(b, RequestCode.GET_CONSUME_STATS, {"consumerGroup": r.name}) for b in brokers]
        )
        answered.append(
            [live_brokerstats.stats_of(r.name, rnd.answers.get(b), known.get(b)) for b in brokers]
        )
    flat = [q for reqs, got in zip(stats_requests, answered) for q, a in zip(reqs, got) if a is None]
    late = [r.name for r in refs if r.name not in conns]
    conn_requests: list[Request] = [
        (alive[0], RequestCode.GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": g}) for g in late
    ]
    results = iter(backend.ask(flat + conn_requests))
    mine = [[next(results) if a is None else a for a in got] for got in answered]
    conns.update(zip(late, results))
    out = [
        _group(backend, ref, reqs, per_broker, conns[ref.name])
        for ref, reqs, per_broker in zip(refs, stats_requests, mine)
    ]
    return _detailed(backend, out, rnd.tables) if detail else out


def _group(
    backend: LiveRounds,
    ref: GroupRef,
    requests: list[Request],
    per_broker: list,
    conn: RemotingCommand | MqctlError,
) -> GroupOverview:
    """One group's overview: its stats merged over the brokers, its connections if online."""
    from mqctl.remoting.bodies import decode_consumer_connection

    failure: str | None = None
    lost: tuple[BrokerFailure, ...] = ()
    try:
        stats = backend.merge_stats(ref.name, requests, per_broker)
    except MqctlError as exc:
        # No broker answered for this group: keep why each failed (their exit statuses say what
        # the overview exits with).
        brokers = [b for b, _code, _fields in requests]
        stats, failure, lost = None, exc.message, _failures(backend, brokers, exc)
    online: ConsumerConnection | None = None
    if not isinstance(conn, MqctlError) and conn.code == ResponseCode.SUCCESS and conn.body:
        online = decode_consumer_connection(conn.body, ref.name)
    return GroupOverview(ref, stats, online, failure, lost)


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
    from mqctl.records import replace

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
