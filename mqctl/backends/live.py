"""The live backend: the Backend Protocol answered by a running cluster over RocketMQ's own TCP
remoting protocol (no JVM). Each question is the request mqadmin would send, sent once per
broker (or once per group), pipelined: GET_CONSUME_STATS per broker, not per queue.

Errors: a name server or broker that cannot be reached is UnreachableError (exit 4); one that
answers an error code is BrokerResponseError with its code and remark; a broker that fails while
others answer is listed in ``ConsumeStats.failures`` so the rows of the others still print.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from mqctl.backends.live_net import LiveNet, Request, split_namesrv
from mqctl.errors import MqctlError, NotFoundError
from mqctl.model import RETRY_PREFIX, BackendKind, BackendTarget, BackendWarning, BrokerFailure, ConsumeStats
from mqctl.remoting.codes import RequestCode

# How long a route stays known across the rounds of a long-running sampler: the Java client
# polls the name server for its routes every 30 s (pollNameServerInterval).
ROUTE_TTL_S = 30.0

if TYPE_CHECKING:
    from mqctl.backends.base import OffsetWrite, ProgressCallback
    from mqctl.model import (
        BrokerData,
        ConsumerConnection,
        ConsumerRunningInfo,
        GroupOverview,
        MessageQueue,
        QueueOffset,
        QueueSpan,
        QueueStat,
        QueueTime,
        StoredMessage,
        SubExpr,
        SubscriptionGroup,
        TagCount,
        TopicConfig,
        TopicRoute,
    )
    from mqctl.model.broadcast import GroupPresence
    from mqctl.model.pop import PopWheel
    from mqctl.remoting.client import OnAnswer, RemotingClient
    from mqctl.remoting.frame import RemotingCommand
    from mqctl.remoting.signing import Credentials
    from mqctl.remoting.tls import TlsSettings


class LiveBackend:
    """A cluster through its name servers ``namesrv`` ("host:port;host:port").

    ``timeout`` bounds the whole command (an overall deadline), ``request_timeout`` each request.
    """

    kind = BackendKind.LIVE

    def __init__(
        self,
        namesrv: str,
        *,
        timeout: float = 10.0,
        request_timeout: float = 5.0,
        credentials: Credentials | None = None,
        tls: bool | TlsSettings = False,
        tls_insecure: bool = False,
        version: int | None = None,
    ) -> None:
        self.namesrv = namesrv.strip()
        self._version = version  # --mqadmin-version: the layout to print, whatever the brokers say
        self._timeout = timeout
        self._request_timeout = request_timeout
        self._credentials = credentials
        self._tls, self._tls_insecure = tls, tls_insecure
        self._warnings: list[BackendWarning] = []
        self.requests: Counter[int] = Counter()  # request code -> count (benchmarks print these)
        self._client: RemotingClient | None = None
        self._net: LiveNet | None = None
        self._configs: dict[str, dict[str, TopicConfig]] = {}
        self._groups: dict[str, dict[str, SubscriptionGroup]] = {}
        self._wheel: dict = {}  # (broker, commit-log offset) -> a timer-wheel entry: never changes
        self._group_names: dict[str, frozenset[str]] = {}
        # the offset tables groups_overview read (broker -> table), for the next broadcast_pull_offsets
        self._tables: dict[str, dict[str, dict[int, int]]] = {}
        self._early_work: list[Callable[[], object]] = []

    def __enter__(self) -> LiveBackend:
        from mqctl.remoting.client import RemotingClient

        self._client = RemotingClient(
            timeout=min(self._request_timeout, self._timeout),
            deadline=time.monotonic() + self._timeout,
            credentials=self._credentials,
            tls=self._tls,
            tls_insecure=self._tls_insecure,
            on_request=lambda _addr, code: self.requests.update([code]),
        )
        # the answers' decoders, imported while the first request is out (a name server takes
        # longer to answer than the import takes)
        self._client.when_idle(partial(import_module, "mqctl.remoting.bodies"))
        for work in self._early_work:
            self._client.when_idle(work)
        self._early_work.clear()
        self._net = LiveNet(self.namesrv, self._client)
        return self

    def when_idle(self, work: Callable[[], object]) -> None:
        if self._client is None:
            self._early_work.append(work)  # handed to the client when the backend is entered
        else:
            self._client.when_idle(work)

    def __exit__(self, *exc: object) -> None:
        if self._client is not None:
            self._client.close()

    def refresh(self) -> None:
        """A new round on the kept connections: a fresh overall deadline, the groups' and topics'
        configs asked again, routes and the cluster's brokers again once ``ROUTE_TTL_S`` old."""
        assert self._client is not None, "use the backend as a context manager"
        self._client.deadline = time.monotonic() + self._timeout
        self._configs.clear()
        self._groups.clear()
        self._group_names.clear()
        self.net.forget_routes(older_than=ROUTE_TTL_S)

    @property
    def net(self) -> LiveNet:
        assert self._net is not None, "use the backend as a context manager"
        return self._net

    def ask(
        self, requests: Sequence[Request], *, learn_cluster: bool = False, on_answer: OnAnswer | None = None
    ) -> list[RemotingCommand | MqctlError]:
        """(broker, code, fields) requests, pipelined; results (or errors) in order.
        ``learn_cluster``, ``on_answer``: as ``LiveNet.call_many``'s."""
        from mqctl.remoting.client import Call

        calls = [Call(self.net.broker_addr(b), code, fields) for b, code, fields in requests]
        return self.net.call_many(calls, learn_cluster=learn_cluster, on_answer=on_answer)

    def _ask_ok(self, requests: Sequence[Request]) -> list[RemotingCommand]:
        return [
            self.net.ok(r, self.net.broker_addr(b), code)
            for (b, code, _f), r in zip(requests, self.ask(requests))
        ]

    # --- about the backend ---------------------------------------------------------------
    def target(self) -> BackendTarget:
        return BackendTarget(BackendKind.LIVE, namesrv=self.namesrv)

    def protected_paths(self) -> Sequence[Path]:
        return []

    def take_warnings(self) -> list[BackendWarning]:
        out, self._warnings = self._warnings, []
        before = self._net.before if self._net is not None else None
        if before is not None and before.notes:  # a sampler's: what it says of the name servers
            out += [BackendWarning("", note) for note in before.notes]
            before.notes.clear()
        return out

    def rocketmq_version(self) -> int | None:
        """The lowest version a broker answered with (name servers left out), unless named."""
        if self._version is not None:
            return self._version
        servers = set(split_namesrv(self.namesrv))
        seen = [v for addr, v in self.net.versions.items() if addr not in servers and v > 0]
        return min(seen) if seen else None

    def broker_version(self, broker: str) -> int | None:
        """The MQVersion ordinal the broker answered with (every response header carries it)."""
        return self.net.versions.get(self.net.broker_addr(broker))

    # --- metadata ------------------------------------------------------------------------
    def broker_names(self) -> Sequence[str]:
        return [b.broker_name for b in self.net.brokers()]

    def topic_route(self, topic: str) -> TopicRoute:
        return self.net.route(topic)

    def topic_configs(self, broker: str) -> Mapping[str, TopicConfig]:
        if broker not in self._configs:
            from mqctl.remoting.bodies import decode_topic_configs

            (resp,) = self._ask_ok([(broker, RequestCode.GET_ALL_TOPIC_CONFIG, {})])
            self._configs[broker] = decode_topic_configs(resp.body)
        return self._configs[broker]

    def subscription_groups(self, broker: str) -> Mapping[str, SubscriptionGroup]:
        if broker not in self._groups:
            from mqctl.remoting.bodies import decode_subscription_groups_body

            (resp,) = self._ask_ok([(broker, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, {})])
            self._groups[broker] = decode_subscription_groups_body(resp.body)
        return self._groups[broker]

    def _group_names_of(self, broker: str) -> frozenset[str]:
        """The broker's subscription groups by name: whether a group exists is all that is asked
        (its configs, a thousand objects on a large cluster, are not built)."""
        if broker in self._groups:
            return frozenset(self._groups[broker])
        if broker not in self._group_names:
            from mqctl.remoting.bodies import decode_subscription_group_names

            (resp,) = self._ask_ok([(broker, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, {})])
            self._group_names[broker] = decode_subscription_group_names(resp.body)
        return self._group_names[broker]

    # --- per group ---------------------------------------------------------------------------
    def _group_brokers(self, group: str, topic: str | None) -> list[BrokerData]:
        """mqadmin's route for a group's stats: %RETRY%group, then the topic, then the POP retry
        topics. A group without a retry topic (pull and broadcasting consumers, which mqadmin
        cannot show, and POP consumers behind a proxy, which never create %RETRY%group) is asked on
        every broker of the cluster instead, if a broker has its subscription group or the name
        server a POP retry topic of it."""
        pop: list[str] = []
        if topic:
            from mqctl.model.pop import pop_retry_name

            pop = [pop_retry_name(group, topic, v) for v in (1, 2)]
        for t in [RETRY_PREFIX + group, *([topic] if topic else []), *pop]:
            try:
                return list(self.net.route(t).broker_datas)
            except NotFoundError:
                continue
        brokers = self.net.brokers()
        known = any(group in self._group_names_of(b.broker_name) for b in brokers)
        if not known and not self._pop_retry(group):
            raise NotFoundError(
                f"consumer group {group!r} not found: no retry topic route (classic or POP) and no "
                "subscription group on any broker",
                "list the groups with `mqctl consumerProgress -n ...` (no -g)",
            )
        return brokers

    def _pop_retry(self, group: str) -> list[str]:
        """The name server's POP retry topics of ``group`` (%RETRY%group_TOPIC, %RETRY%group+TOPIC)."""
        from mqctl.model.pop import parse_pop_retry

        return [t for t in self.net.topic_list() if parse_pop_retry(t, group) is not None]

    def consume_stats(self, group: str, topic: str | None = None, *, detail: bool = True) -> ConsumeStats:
        if topic is not None:
            try:
                self.net.route(topic)  # an unknown topic is NotFoundError with the name server's remark
            except NotFoundError:
                from mqctl.model.pop import parse_pop_retry

                # A POP retry topic reaches the name server at its broker's next registration
                # (up to 30 s after the first revive): the group's brokers are asked meanwhile.
                if parse_pop_retry(topic, group) is None:
                    raise
        brokers = self._group_brokers(group, topic)
        fields: dict[str, object] = {"consumerGroup": group, **({"topic": topic} if topic else {})}
        requests = [
            (b.broker_name, RequestCode.GET_CONSUME_STATS, fields) for b in brokers if b.select_addr()
        ]
        self.when_idle(_prepare_stats_decoder)
        stats = self.merge_stats(group, requests, self.ask(requests))
        return self._with_min_offsets(stats) if detail and stats.queues else stats

    def merge_stats(self, group: str, requests: list, results: list) -> ConsumeStats:
        """One ConsumeStats from each broker's answer to ``requests`` (GET_CONSUME_STATS), or
        the broker's part already read (a ConsumeStats), or the error it failed with."""
        queues: list[QueueStat] = []
        tps, failures, errors = 0.0, [], []
        for (broker, code, _f), r in zip(requests, results):
            addr = self.net.broker_addr(broker)
            try:
                if isinstance(r, ConsumeStats):
                    part = r
                else:  # (the overview's parts come read: no import per group)
                    from mqctl.remoting.bodies import decode_consume_stats

                    body = self.net.ok(r, addr, code).body
                    part = decode_consume_stats(body, group, broker) if body else ConsumeStats(group, ())
            except MqctlError as exc:
                failures.append(BrokerFailure(broker, addr, exc.message, int(exc.exit_status)))
                errors.append(exc)
                continue
            queues += part.queues
            tps += part.consume_tps
        if failures and not queues and len(failures) == len(requests):
            # Every broker failed: exit with what their answers mean (8 when denied, 5 when
            # refused), the rule of a partly failed command; 4 when none could be reached. The
            # only broker asked fails with its own error (its words and hint: who denied what,
            # whether TLS is wanted).
            from mqctl.errors import BrokersFailedError

            if len(errors) == 1:
                raise errors[0]
            hint = next((e.hint for e in errors if e.hint), None)
            raise BrokersFailedError(failures, f"no consume stats of group {group}", hint=hint)
        return ConsumeStats(group, tuple(queues), tps, tuple(failures))

    def _with_min_offsets(self, stats: ConsumeStats) -> ConsumeStats:
        from mqctl.records import replace

        mins = self.min_offsets([q.queue for q in stats.queues])
        return replace(stats, queues=tuple(replace(q, min_offset=mins.get(q.queue)) for q in stats.queues))

    def min_offsets(self, queues: Sequence[MessageQueue]) -> dict[MessageQueue, int]:
        """Each queue's min offset from GET_TOPIC_STATS_INFO, one request per broker and topic
        (missing where a broker did not answer: a warning says so)."""
        from mqctl.remoting.bodies import decode_topic_stats

        pairs = list(dict.fromkeys((q.broker_name, q.topic) for q in queues))
        requests = [(b, RequestCode.GET_TOPIC_STATS_INFO, {"topic": t}) for b, t in pairs]
        mins: dict[MessageQueue, int] = {}
        for (b, code, f), r in zip(requests, self.ask(requests)):
            try:
                body = self.net.ok(r, self.net.broker_addr(b), code).body
                mins.update({mq: o.min_offset for mq, o in decode_topic_stats(body).items()})
            except MqctlError as exc:
                self._warnings.append(BackendWarning(b, f"no min offsets for {f['topic']}: {exc.message}"))
        return mins

    def consumer_connection(self, group: str, *, at: str | None = None) -> ConsumerConnection:
        """GET_CONSUMER_CONNECTION_LIST from the first broker of the group's route that answers
        (its retry topic's: clients register with the brokers they heartbeat to, which make that
        topic; mqadmin asks a random one of its route), or at ``at``."""
        if at is not None:
            from mqctl.backends.live_pop import connection_at

            return connection_at(self, at, group)

        from mqctl.backends.live_presence import connection

        return connection(self, group, self._connection_brokers(group))

    def group_presence(self, group: str) -> GroupPresence:
        from mqctl.backends.live_presence import presence

        try:
            brokers = self._connection_brokers(group)
        except NotFoundError:
            brokers = []  # no route and no subscription group: nobody to ask but every broker's table
        known, self._tables = self._tables, {}
        found, warnings = presence(self, group, brokers, known)
        self._warnings += warnings
        return found

    def _connection_brokers(self, group: str) -> list[str]:
        return [b.broker_name for b in self._group_brokers(group, None) if b.select_addr()]

    def recent_subscriptions(self, group: str, topics: Sequence[str]) -> Mapping[str, str]:
        from mqctl.backends.live_pop import recent_subscriptions

        return recent_subscriptions(self, group, topics)

    def broker_settings(self, broker: str) -> Mapping[str, str]:
        from mqctl.backends.live_pop import broker_settings

        return broker_settings(self, broker)

    def pop_checkpoints(self, group: str, brokers: Sequence[str], since_ms: int) -> PopWheel:
        from mqctl.backends.live_pop import pop_checkpoints

        return pop_checkpoints(self, self._wheel, group, brokers, since_ms)

    def running_info(self, group: str, client_id: str) -> ConsumerRunningInfo:
        from mqctl.remoting.bodies import decode_running_info

        brokers = [b for b in self._group_brokers(group, None) if b.select_addr()]
        fields: dict[str, object] = {"consumerGroup": group, "clientId": client_id, "jstackEnable": False}
        (resp,) = self._ask_ok([(brokers[0].broker_name, RequestCode.GET_CONSUMER_RUNNING_INFO, fields)])
        return decode_running_info(resp.body, client_id)

    def broadcast_pull_offsets(self, group: str | None = None) -> Mapping[str, Mapping[MessageQueue, int]]:
        """GET_ALL_CONSUMER_OFFSET of every broker at once, its 3-part keys only (``group``'s).
        Right after ``groups_overview`` the tables it read are used, once (the same snapshot)."""
        from mqctl.backends.live_pulls import broadcast_pulls

        known, self._tables = self._tables, {}
        pulls, warnings = broadcast_pulls(self, group, known)
        self._warnings += warnings
        return pulls

    def groups_overview(self, *, detail: bool = False) -> Sequence[GroupOverview]:
        from mqctl.backends.live_groups import overview

        out, self._tables = overview(self, detail=detail)
        return out

    # --- positions ---------------------------------------------------------------------------
    def offsets_for_times(self, queries: Sequence[QueueTime]) -> list[int]:
        from mqctl.remoting.frame import ext_int

        requests = [
            (
                q.queue.broker_name,
                RequestCode.SEARCH_OFFSET_BY_TIMESTAMP,
                {
                    "topic": q.queue.topic,
                    "queueId": q.queue.queue_id,
                    "timestamp": q.timestamp,
                    "boundaryType": q.boundary.upper(),
                },
            )
            for q in queries
        ]
        return [ext_int(r, "offset") for r in self._ask_ok(requests)]

    def store_times(self, positions: Sequence[QueueOffset]) -> list[int]:
        from mqctl.backends.live_scan import store_times

        return store_times(positions, self.ask) if positions else []

    def count_tag_matches(
        self,
        spans: Sequence[QueueSpan],
        expr: SubExpr,
        *,
        verify: bool = False,
        on_progress: ProgressCallback | None = None,
    ) -> list[TagCount]:
        from mqctl.backends.live_scan import count_tag_matches

        return count_tag_matches(spans, expr, self.ask, verify=verify, on_progress=on_progress)

    def message_at(self, position: QueueOffset) -> StoredMessage | None:
        from mqctl.backends.live_scan import message_at

        return message_at(position, self.ask)

    # --- writes ----------------------------------------------------------------------------
    def begin_offsets_write(
        self, group: str, targets: Mapping[MessageQueue, int], expected: Mapping[MessageQueue, int] | None
    ) -> OffsetWrite:
        from mqctl.backends.live_write import LiveOffsetWrite

        return LiveOffsetWrite(self, group, targets, expected)

    def group_online(self, group: str) -> int:
        """How many clients of the group are connected (0 when none or unknown)."""
        try:
            return len(self.consumer_connection(group).connections)
        except MqctlError:
            return 0


def _prepare_stats_decoder() -> None:
    """The consume stats' decoder made ready while the brokers answer (``when_idle``)."""
    from mqctl.remoting.bodies import prepare_consume_stats

    prepare_consume_stats()
