"""The groups overview of a live cluster: mqadmin's list and what it misses, in few round trips.

mqadmin lists the groups of the name server's ``%RETRY%`` topics (GET_ALL_TOPIC_LIST_FROM_NAMESERVER,
iterated in the Java HashSet order it decodes the list into) and then, group by group, asks
for consume stats and connections (about eight requests each, one after the other). Here the
same answers come in two pipelined rounds:

1. every broker's offset table (GET_ALL_CONSUMER_OFFSET, 43), group list
   (GET_ALL_SUBSCRIPTIONGROUP_CONFIG, 201) and topic list (GET_ALL_TOPIC_CONFIG, 21), with one
   GET_CONSUMER_CONNECTION_LIST per group mqadmin lists, of the first broker;
2. GET_CONSUME_STATS (208) for every (group, topic) pair of each broker's offset table, with the
   ``topic`` field, and the connections of the groups only the tables know and of those whose
   retry topic the first broker does not have (asked where it is, as mqadmin asks a broker of its
   route: ``_connection_plan``).

208 without a topic walks the topics ``whichTopicByConsumer`` finds in the broker's offset table
-- a scan of the whole table, for every group: at 1,000 groups the broker spends a quarter of a
second on it, as it does on GET_BROKER_CONSUME_STATS (317), which does the same for every group
at once. With the topic named, the broker skips the scan and applies the same rules to that topic
(a topic without a config is left out; an online group's unsubscribed topics too:
AdminBrokerProcessor.getConsumeStats, 4.9.7 to 5.5), so the group's stats are the union of its
topics' answers, its TPS their sum in the order 208 adds them (the HashSet's). A group with no
topic in a broker's table has empty stats there (what 208 answers) and costs no request; a
broker whose table could not be read is asked 208 without a topic for each group, as mqadmin
asks. A group's queues come topic by topic, each in its answer's order.

Groups mqadmin cannot see are listed too (committed offsets but no retry topic; a subscription
group only), marked by where they were found. A broker's predefined system groups are left out.
"""

from __future__ import annotations

from functools import partial
from importlib import import_module
from typing import TYPE_CHECKING, Any

from mqctl.backends.live_early import Early
from mqctl.backends.live_pulls import Tables
from mqctl.errors import MqctlError
from mqctl.model import (
    FOUND_OFFSETS,
    FOUND_RETRY_TOPIC,
    FOUND_SUBSCRIPTION,
    ConsumerConnection,
    ConsumeStats,
    GroupOverview,
    GroupRef,
    MessageQueue,
    group_of_retry_topic,
    is_system_group,
)
from mqctl.remoting.bodies import decode_consume_stats
from mqctl.remoting.bodies_client import decode_consumer_connection  # (run per group: imported once)
from mqctl.remoting.codes import RequestCode, ResponseCode

if TYPE_CHECKING:
    from mqctl.backends.live_net import LiveRounds, Request
    from mqctl.model import BrokerFailure
    from mqctl.remoting.frame import RemotingCommand


class _RetryGroups:
    """The groups of the name server's ``%RETRY%`` topics: at once in the list's own order (what
    to ask about), and in mqadmin's order (the topics' HashSet order) when ``ordered`` is first
    read. The brokers' first round has the client work that order out while they answer (3-4 ms
    at 1,000 groups, otherwise spent before the round)."""

    def __init__(self, backend: LiveRounds) -> None:
        self.topics = backend.net.topic_list()
        self.names = self._groups(self.topics)
        self._ordered: list[str] | None = None

    @staticmethod
    def _groups(topics: list[str]) -> list[str]:
        return list(dict.fromkeys(g for g in map(group_of_retry_topic, topics) if g))

    @property
    def ordered(self) -> list[str]:
        if self._ordered is None:
            from mqctl.model.javaorder import string_order

            self._ordered = self._groups(string_order(self.topics))
        return self._ordered


class _Round:
    """What the brokers' tables said: groups with committed offsets, groups with a subscription
    config (on any broker), the brokers that did not answer (their groups may be missing: the
    caller says so), each answering broker's offset table, and the answers to the ``early``
    requests that rode along."""

    def __init__(self) -> None:
        self.with_offsets: set[str] = set()
        self.with_config: set[str] = set()
        self.dead: dict[str, str] = {}
        self.tables: Tables = {}
        self.early: list[RemotingCommand | MqctlError] = []
        self.topics: dict[str, frozenset[str]] = {}  # broker -> its topic names (when it answered)


def _tables_round(backend: LiveRounds, brokers: list[str], early: list[Request]) -> _Round:
    """43, 201 and 21 from every broker, decoded while the ``early`` requests riding along are
    answered."""
    asked: list[Request] = [(b, RequestCode.GET_ALL_CONSUMER_OFFSET, {}) for b in brokers]
    asked += [(b, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, {}) for b in brokers]
    asked += [(b, RequestCode.GET_ALL_TOPIC_CONFIG, {}) for b in brokers]
    pre = Early(
        backend.net.client, lambda i, answer: _decode_table(asked[i][1], answer.body), range(len(asked))
    )
    results = backend.ask(asked + early, on_answer=pre.on_answer)
    rnd = _Round()
    rnd.early = results[len(asked) :]
    _read_tables(rnd, asked, results, pre)
    rnd.with_config = {g for g in rnd.with_config if not is_system_group(g)}
    return rnd


def _decode_table(code: int, body: bytes) -> Any:
    from mqctl.remoting.bodies import (
        decode_consumer_offsets_body,
        decode_subscription_group_names,
        decode_topic_config_names,
    )

    if code == RequestCode.GET_ALL_CONSUMER_OFFSET:
        return decode_consumer_offsets_body(body)
    if code == RequestCode.GET_ALL_TOPIC_CONFIG:
        return decode_topic_config_names(body)
    return decode_subscription_group_names(body)


def _read_tables(rnd: _Round, asked: list[Request], results: list, pre: Early[Any]) -> None:
    from mqctl.store.offsets import COMMITTED, split_offset_key

    for i, ((b, code, _fields), r) in enumerate(zip(asked, results)):
        if isinstance(r, MqctlError):
            rnd.dead.setdefault(b, r.message)
            continue
        if code == RequestCode.GET_ALL_CONSUMER_OFFSET and r.code == ResponseCode.SUCCESS:
            rnd.tables[b] = {}
        if r.code != ResponseCode.SUCCESS or not r.body:
            continue  # "No consumer offset in this broker" and kin: nothing to add
        if code == RequestCode.GET_ALL_CONSUMER_OFFSET:
            rnd.tables[b] = pre.take(i, r)
            for key in rnd.tables[b]:
                parts = split_offset_key(key)
                if parts is not None and parts[2] == COMMITTED:
                    rnd.with_offsets.add(parts[1])
        elif code == RequestCode.GET_ALL_TOPIC_CONFIG:
            rnd.topics[b] = pre.take(i, r)
        else:
            rnd.with_config.update(pre.take(i, r))


def _topics_by_group(table: dict[str, dict[int, int]]) -> dict[str, list[str]]:
    """group -> the topics 208 walks for it on this broker (ConsumerOffsetManager.whichTopicByConsumer:
    keys that Java's ``split("@")`` cuts into exactly two parts, the group second), in the
    iteration order of the HashSet it returns."""
    from mqctl.model.javaorder import string_order
    from mqctl.store.offsets import java_topic_and_group

    found: dict[str, list[str]] = {}
    for key in table:
        pair = java_topic_and_group(key)
        if pair is not None:
            found.setdefault(pair[1], []).append(pair[0])
    return {g: (string_order(t) if len(t) > 1 else t) for g, t in found.items()}


def _stats_requests(
    group: str, brokers: list[str], known: dict[str, dict[str, list[str]]]
) -> list[list[Request]]:
    """Per broker, the 208s that make up the group's stats there (none: empty stats)."""
    out: list[list[Request]] = []
    for b in brokers:
        topics = known[b].get(group, []) if b in known else None
        if topics is None:  # the broker's table is not known: let it walk its own
            out.append([(b, RequestCode.GET_CONSUME_STATS, {"consumerGroup": group})])
        else:
            out.append(
                [(b, RequestCode.GET_CONSUME_STATS, {"consumerGroup": group, "topic": t}) for t in topics]
            )
    return out


def _part(
    backend: LiveRounds, group: str, broker: str, results: list[tuple[int, Any]], pre: Early[ConsumeStats]
) -> ConsumeStats | MqctlError:
    """One broker's share of a group's stats from its 208 answers (topic by topic; index and
    answer, decoded by ``pre``): their queues in turn, their TPS summed as 208 sums them; the
    first error if one failed."""
    addr = backend.net.broker_addr(broker)
    queues: list = []
    tps = 0.0
    try:
        for i, r in results:
            if backend.net.ok(r, addr, RequestCode.GET_CONSUME_STATS).body:
                part = pre.take(i, r)
                queues += part.queues
                tps = part.consume_tps + tps
    except MqctlError as exc:
        return exc
    return ConsumeStats(group, tuple(queues), tps)


def _refs(retry: list[str], rnd: _Round) -> list[GroupRef]:
    with_offsets, with_config = rnd.with_offsets, rnd.with_config
    refs = [
        GroupRef(g, (FOUND_RETRY_TOPIC, FOUND_OFFSETS) if g in with_offsets else (FOUND_RETRY_TOPIC,))
        for g in retry
    ]
    refs += [GroupRef(g, (FOUND_OFFSETS,)) for g in sorted(with_offsets - set(retry))]
    refs += [GroupRef(g, (FOUND_SUBSCRIPTION,)) for g in sorted(with_config - set(retry) - with_offsets)]
    return refs


def overview(backend: LiveRounds, *, detail: bool = False) -> tuple[list[GroupOverview], Tables]:
    """Every group with its stats merged over every broker, and the offset tables read (broker
    -> decoded table). A broker that does not answer is a failure of every group's stats (so
    the command cannot end as if the numbers were whole). ``detail``: each queue's min offset
    too (one GET_TOPIC_STATS_INFO per broker and topic) and whether the group has a committed
    offset there (the offset tables already read)."""
    brokers = [b.broker_name for b in backend.net.brokers() if b.select_addr()]
    groups = _RetryGroups(backend)
    # mqadmin's groups are known already: their connections are asked with the tables, of the
    # first broker (see _connection_plan for when that answer does not stand).
    early: list[Request] = [
        (b, RequestCode.GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": g})
        for b in brokers[:1]
        for g in groups.names
    ]
    idle = backend.net.client.when_idle
    idle(lambda: groups.ordered)
    for module in ("mqctl.store.offsets", "mqctl.store.metadata"):  # the tables' decoders
        idle(partial(import_module, module))
    rnd = _tables_round(backend, brokers, early)
    retry = groups.ordered
    refs = _refs(retry, rnd)
    conns, late, conn_requests = _connection_plan(rnd, brokers, groups.names, refs)
    known = {b: _topics_by_group(t) for b, t in rnd.tables.items()}
    plans = [_stats_requests(r.name, brokers, known) for r in refs]
    # each 208 answer's (group, broker), to decode it while the others come in
    whose = [(r.name, b) for r, plan in zip(refs, plans) for per_broker in plan for b, _c, _f in per_broker]
    pre: Early[ConsumeStats] = Early(
        backend.net.client, lambda i, answer: decode_consume_stats(answer.body, *whose[i]), range(len(whose))
    )
    asked = [q for plan in plans for per_broker in plan for q in per_broker]
    results = iter(enumerate(backend.ask(asked + conn_requests, on_answer=pre.on_answer)))
    parts = [
        [_part(backend, r.name, b, [next(results) for _ in qs], pre) for b, qs in zip(brokers, plan)]
        for r, plan in zip(refs, plans)
    ]
    conns.update(zip(late, (answer for _i, answer in results)))
    out = [
        _group(
            backend,
            ref,
            [(b, RequestCode.GET_CONSUME_STATS, {}) for b in brokers],
            per_broker,
            conns[ref.name],
        )
        for ref, per_broker in zip(refs, parts)
    ]
    return (_detailed(backend, out, rnd.tables) if detail else out), rnd.tables


def _connection_plan(
    rnd: _Round, brokers: list[str], asked: list[str], refs: list[GroupRef]
) -> tuple[dict[str, RemotingCommand | MqctlError], list[str], list[Request]]:
    """The connection answers of the first round that stand (group -> answer), the groups still
    to ask, and the requests for them.

    A client registers with the brokers it sends heartbeats to, those of every route it knows:
    all of them where the cluster routes TBW102 (autoCreateTopicEnable), else only those of its
    topics; each makes the group's retry topic (ClientManageProcessor.heartBeat). mqadmin asks a
    broker of the retry topic's route. The first round asked the first broker for every group of
    ``asked``; a group whose retry topic that broker does not have (by the brokers' topic
    configs) is asked again at the first broker that has it. The other groups are asked at the
    first broker that answered the tables (every group, when the first one did not)."""
    alive = [b for b in brokers if b not in rnd.dead] or brokers
    conns = dict(zip(asked, rnd.early)) if brokers and alive[0] == brokers[0] else {}
    hosts: dict[str, str] = {}  # group -> where its retry topic is, when not on alive[0]
    if alive and alive[0] in rnd.topics:
        own = rnd.topics[alive[0]]
        for b in alive[1:]:
            for topic in rnd.topics.get(b, frozenset()) - own:
                group = group_of_retry_topic(topic)
                if group:
                    hosts.setdefault(group, b)
    for group in hosts:
        conns.pop(group, None)
    late = [r.name for r in refs if r.name not in conns]
    code = RequestCode.GET_CONSUMER_CONNECTION_LIST
    return conns, late, [(hosts.get(g, alive[0]), code, {"consumerGroup": g}) for g in late]


def _group(
    backend: LiveRounds,
    ref: GroupRef,
    requests: list[Request],
    per_broker: list,
    conn: RemotingCommand | MqctlError,
) -> GroupOverview:
    """One group's overview: its stats merged over the brokers, its connections if online."""
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
