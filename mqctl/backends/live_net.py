"""The live backend's conversation with a cluster: name servers with failover, routes and the
cluster's brokers (cached for the command), broker addresses, batches of requests, and the
translation of answers into typed errors.

A name server that cannot be reached is skipped for the next one in the ``-n`` list (as the
Java client does); a name server that answers, answers for all (an error code is not retried).
A long-running sampler (whose routes are asked again every ``ROUTE_TTL_S``) goes on with what it
learnt before while none can be reached, or while a restarted one knows less than it did
(``live_before``); a command that never learnt anything gets the name servers' answers as they are.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from functools import partial
from importlib import import_module
from typing import TYPE_CHECKING, Protocol

from mqctl.errors import BrokerResponseError, MqctlError, NotFoundError, ProtocolError, UnreachableError
from mqctl.model import BrokerData, TopicRoute
from mqctl.remoting.codes import RequestCode, ResponseCode, request_name, response_name

if TYPE_CHECKING:
    from mqctl.backends.live_before import Before
    from mqctl.model import ConsumerConnection, ConsumeStats, MessageQueue
    from mqctl.remoting.bodies import ClusterInfo
    from mqctl.remoting.client import Call, OnAnswer, RemotingClient
    from mqctl.remoting.frame import RemotingCommand


Request = tuple[str, int, Mapping[str, object]]  # (broker name, request code, header fields)


class LiveRounds(Protocol):
    """What the live backend's helper modules (the overview, the offset write) ask of it: its
    conversation with the cluster and a few of its answers. (They take the backend as this, so
    that backends/live.py alone imports them and no module imports it back.)"""

    @property
    def net(self) -> LiveNet: ...
    def ask(
        self, requests: Sequence[Request], *, learn_cluster: bool = False, on_answer: OnAnswer | None = None
    ) -> list[RemotingCommand | MqctlError]: ...
    def merge_stats(self, group: str, requests: list, results: list) -> ConsumeStats: ...
    def min_offsets(self, queues: Sequence[MessageQueue]) -> dict[MessageQueue, int]: ...
    def consumer_connection(self, group: str) -> ConsumerConnection: ...
    def broker_version(self, broker: str) -> int | None: ...


def split_namesrv(value: str) -> list[str]:
    """``host:port;host:port`` (mqadmin's -n and NAMESRV_ADDR) -> the addresses, in order. A comma
    separates them too (a Kafka bootstrap list's habit; no host name or port holds one)."""
    return [a.strip() for a in value.replace(",", ";").split(";") if a.strip()]


class LiveNet:
    def __init__(self, namesrv: str, client: RemotingClient) -> None:
        self.namesrvs = split_namesrv(namesrv)
        if not self.namesrvs:
            from mqctl.errors import UsageError

            raise UsageError(f"-n/--namesrvAddr {namesrv!r}: expected host:port[;host:port...]")
        self.client = client
        self.versions: dict[str, int] = {}  # address -> the responder's MQVersion ordinal
        self._routes: dict[str, TopicRoute | NotFoundError] = {}
        self._cluster: ClusterInfo | None = None
        self._addrs: dict[str, str] = {}  # broker_addr's answers, until a route or the cluster is learnt
        self._known_since = time.monotonic()
        # what the name servers said before: a sampler's, made by its first forget_routes
        self.before: Before | None = None
        self._topics: list[str] | None = None  # the last topic list (a sampler's, while none answers)

    def forget_routes(self, *, older_than: float = 0.0) -> None:
        """Routes and the cluster's brokers are asked again (when learnt ``older_than`` s ago); a
        new round, in which name servers that were away are asked again (once)."""
        if self.before is None:
            from mqctl.backends.live_before import Before

            self.before = Before()
        self.before.new_round()
        if time.monotonic() - self._known_since >= older_than:
            self.before.keep(
                {t: r for t, r in self._routes.items() if isinstance(r, TopicRoute)}, self._cluster
            )
            self._routes.clear()
            self._cluster = None
            self._addrs.clear()
            self._known_since = time.monotonic()

    # --- requests ------------------------------------------------------------------------
    def call_many(
        self, calls: Sequence[Call], *, learn_cluster: bool = False, on_answer: OnAnswer | None = None
    ) -> list[RemotingCommand | MqctlError]:
        """Every call pipelined; an ACL refusal comes back as an AccessDeniedError in its slot
        (whoever asked gets it like any other failure of that broker). ``learn_cluster``: the
        cluster's brokers (GET_BROKER_CLUSTER_INFO to the first name server) asked in the same
        round when not known yet; should that fail, ``cluster_info`` asks again as usual.
        ``on_answer``: ``RemotingClient.call_many``'s (told of each answer as it comes in, before
        an ACL refusal is turned into its error)."""
        if learn_cluster and self._cluster is None:
            from mqctl.remoting.client import Call

            self.client.when_idle(partial(import_module, "mqctl.fastjson"))
            ns = self.namesrvs[0]
            asked = [*calls, Call(ns, RequestCode.GET_BROKER_CLUSTER_INFO, None)]
            *results, info = self.call_many(asked, on_answer=on_answer)
            if not isinstance(info, MqctlError) and info.code == ResponseCode.SUCCESS:
                try:
                    self._learn_cluster(info, ns)
                except MqctlError:
                    pass  # a body that cannot be read: cluster_info asks again, and says so, if needed
            return results
        results = self.client.call_many(calls, on_answer)
        for i, (call, r) in enumerate(zip(calls, results)):
            if isinstance(r, MqctlError):
                continue
            self.versions[call.addr] = r.version
            # 16 NO_PERMISSION (5.x) or an AclException as SYSTEM_ERROR (4.x): checked cheaply
            # here, worded by remoting/acl.py only when it is one.
            if r.code == ResponseCode.NO_PERMISSION or (
                r.code == ResponseCode.SYSTEM_ERROR and "Exception" in (r.remark or "")
            ):
                results[i] = self._denied(call, r) or r
        return results

    def _denied(self, call: Call, resp: RemotingCommand) -> MqctlError | None:
        from mqctl.remoting.acl import denied, is_denial

        if not is_denial(resp.code, resp.remark):
            return None
        creds = self.client.credentials
        return denied(
            resp.code,
            resp.remark,
            who=self.name_of(call.addr),
            request=request_name(call.code),
            fields=call.ext_fields,
            access_key=creds.access_key if creds is not None else None,
        )

    def name_of(self, addr: str) -> str:
        """What to call the server at ``addr`` in a message: its broker name when a route or the
        cluster info already named it (nothing is asked for that), else the address."""
        if addr in self.namesrvs:
            return f"name server {addr}"
        known = [r.broker_datas for r in self._routes.values() if isinstance(r, TopicRoute)]
        if self._cluster is not None:
            known.append(tuple(self._cluster.brokers.values()))
        for datas in known:
            for bd in datas:
                if any(a == addr for _id, a in bd.addrs):
                    return bd.broker_name
        return addr

    def call(self, addr: str, code: int, fields: Mapping[str, object] | None = None) -> RemotingCommand:
        from mqctl.remoting.client import Call

        result = self.call_many([Call(addr, code, fields)])[0]
        if isinstance(result, MqctlError):
            raise result
        return result

    @staticmethod
    def ok(result: RemotingCommand | MqctlError, addr: str, code: int) -> RemotingCommand:
        """The response if it is a success; its error (typed by the broker's code) otherwise."""
        if isinstance(result, MqctlError):
            raise result
        if result.code != ResponseCode.SUCCESS:
            raise BrokerResponseError(
                result.code, result.remark, addr, request_name(code), code_name=response_name(result.code)
            )
        return result

    def ns_call(self, code: int, fields: Mapping[str, object] | None = None) -> tuple[str, RemotingCommand]:
        """Ask the name servers in order until one answers (an answer with an error code counts)."""
        failures: list[UnreachableError] = []
        for addr in self.namesrvs:
            try:
                return addr, self.call(addr, code, fields)
            except (UnreachableError, ProtocolError) as exc:
                failures.append(exc)
        only = failures[0] if len(failures) == 1 else None
        raise UnreachableError(
            "; ".join(f.message for f in failures) if only is None else f"name server {only.message}",
            # a hint of the failure itself (TLS: what to pass) says more than the generic one
            (only.hint if only is not None else None)
            or "check -n/--namesrvAddr (host:port;host:port) and that the name server runs",
        )

    # --- routes and brokers ----------------------------------------------------------------
    def route(self, topic: str) -> TopicRoute:
        """GET_ROUTEINFO_BY_TOPIC, once per topic per command; NotFoundError with the server's remark."""
        cached = self._routes.get(topic)
        if cached is None:
            cached = self._routes[topic] = self._ask_route(topic)
            self._addrs.clear()
        if isinstance(cached, NotFoundError):
            raise cached
        return cached

    def _ask_route(self, topic: str) -> TopicRoute | NotFoundError:
        """The name servers' route of ``topic``, or what a sampler learnt before (``Before``)."""
        code, before = RequestCode.GET_ROUTEINFO_BY_TOPIC, self.before
        asked = self._ns_or_before(code, {"topic": topic}, before is not None and topic in before.routes)
        if asked is None:
            assert before is not None
            return before.routes[topic]
        addr, resp = asked
        if resp.code != ResponseCode.TOPIC_NOT_EXIST:
            from mqctl.remoting.bodies import decode_topic_route

            route = decode_topic_route(self.ok(resp, addr, code).body, topic)
            return route if before is None else before.route(topic, route, addr)
        kept = None if before is None else before.no_route(topic, addr)
        if kept is not None:
            return kept
        remark = (resp.remark or "").split("\n")[0].strip()
        return NotFoundError(remark or f"No topic route info in name server for the topic: {topic}")

    def cluster_info(self) -> ClusterInfo:
        if self._cluster is None:
            # its broker ids are bare integer keys ({0:"host:port"}): fastjson's reader, loaded
            # while the name server answers
            self.client.when_idle(partial(import_module, "mqctl.fastjson"))
            code, before = RequestCode.GET_BROKER_CLUSTER_INFO, self.before
            asked = self._ns_or_before(code, None, before is not None and before.cluster is not None)
            if asked is None:
                assert before is not None
                self._cluster = before.cluster
            else:
                addr, resp = asked
                self._learn_cluster(self.ok(resp, addr, code), addr)
        assert self._cluster is not None
        return self._cluster

    def topic_list(self) -> list[str]:
        """The name server's topic list (GET_ALL_TOPIC_LIST_FROM_NAMESERVER), asked each time; for a
        sampler, the last one while no name server answers."""
        code, before = RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, self.before
        asked = self._ns_or_before(code, None, before is not None and self._topics is not None)
        if asked is None:
            assert self._topics is not None
            return list(self._topics)
        from mqctl.remoting.bodies import decode_name_list

        addr, resp = asked
        self._topics = decode_name_list(self.ok(resp, addr, code).body, "topicList")
        return list(self._topics)

    def _ns_or_before(
        self, code: int, fields: Mapping[str, object] | None, known_before: bool
    ) -> tuple[str, RemotingCommand] | None:
        """``ns_call``; None when no name server answers but their earlier answer is known (the
        caller uses that). Name servers away are asked once per round (``forget_routes``), not
        once per question: each may time out."""
        before = self.before
        if before is None:
            return self.ns_call(code, fields)
        if before.away_this_round and known_before:
            return None
        try:
            answer = self.ns_call(code, fields)
        except UnreachableError as e:
            if not known_before:
                raise
            before.away(e)
            return None
        before.answered()
        return answer

    def _learn_cluster(self, answer: RemotingCommand, addr: str) -> None:
        from mqctl.remoting.bodies import decode_cluster_info

        cluster = decode_cluster_info(answer.body)
        self._cluster = cluster if self.before is None else self.before.cluster_info(cluster, addr)
        self._addrs.clear()

    def brokers(self) -> list[BrokerData]:
        """Every broker group of the cluster, in the name server's order."""
        return list(self.cluster_info().brokers.values())

    def broker_addr(self, broker: str) -> str:
        """The address to ask a broker at: its master (id 0), else any other (selectBrokerAddr)."""
        addr = self._addrs.get(broker)
        if addr is None:
            addr = self._addrs[broker] = self._broker_addr(broker)
        return addr

    def _broker_addr(self, broker: str) -> str:
        for route in self._routes.values():
            if isinstance(route, TopicRoute):
                for bd in route.broker_datas:
                    if bd.broker_name == broker and bd.select_addr():
                        return str(bd.select_addr())
        found = self.cluster_info().brokers.get(broker)
        addr = found.select_addr() if found is not None else None
        if addr is None:
            known = ", ".join(self.cluster_info().brokers) or "none"
            raise NotFoundError(f"unknown broker {broker!r} (the cluster has: {known})")
        return addr
