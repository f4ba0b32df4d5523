"""What the name servers said before, for a long-running sampler (--watch, the exporter), whose
live backend asks its routes and the cluster's brokers again every ``ROUTE_TTL_S``.

A Java client keeps its route table when the name servers are away. A name server that was just
restarted knows nothing until the brokers register again, which they do every 30 s: for a few
seconds it answers TOPIC_NOT_EXIST, then a route or a cluster with only some of the brokers
(both measured on 5.3.3). Taken at its word, it would end a --watch, or take half of a group's
queues out of it with nothing said. So, once something was learnt:

- no name server answering: what they said before is used (asked again once per round);
- a route they have none of: the one learnt before;
- a route or cluster without a broker it had: that broker is kept for one more refresh, and
  dropped only if it is still missing then (a broker taken out of the cluster);

each said once in ``notes``, which the backend hands out as warnings. A command that never
learnt anything gets the name servers' answers as they are.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from mqctl.records import replace

if TYPE_CHECKING:
    from mqctl.errors import UnreachableError
    from mqctl.model import TopicRoute
    from mqctl.remoting.bodies import ClusterInfo

CLUSTER = ""  # the key of the cluster's brokers in ``carried`` (a topic is never named "")


class Before:
    def __init__(self) -> None:
        self.routes: dict[str, TopicRoute] = {}
        self.cluster: ClusterInfo | None = None
        self.notes: list[str] = []
        self.away_since: str | None = None  # when the name servers stopped answering (HH:MM:SS)
        self.away_this_round = False  # none answered in this round: not asked again in it
        self.carried: dict[str, set[str]] = {}  # topic (CLUSTER) -> brokers kept at the last refresh

    def new_round(self) -> None:
        """A sampler's next round: name servers that were away are asked again."""
        self.away_this_round = False

    def keep(self, routes: dict[str, TopicRoute], cluster: ClusterInfo | None) -> None:
        """What was learnt, as the routes are forgotten."""
        self.routes.update(routes)
        self.cluster = cluster or self.cluster

    def away(self, error: UnreachableError) -> None:
        self.away_this_round = True
        if self.away_since is None:
            self.away_since = time.strftime("%H:%M:%S")
            self.notes.append(
                f"{error.message} (since {self.away_since}); the routes and brokers learnt before are "
                "used until a name server answers"
            )

    def answered(self) -> None:
        if self.away_since is not None:
            self.notes.append(f"a name server answers again (none did since {self.away_since})")
            self.away_since = None

    def no_route(self, topic: str, addr: str) -> TopicRoute | None:
        """The route learnt before, when a name server says ``topic`` has none."""
        kept = self.routes.get(topic)
        if kept is not None:
            self.notes.append(
                f"name server {addr} has no route for {topic} (restarted, the brokers not registered "
                "again yet?): the route learnt before is used"
            )
        return kept

    def route(self, topic: str, new: TopicRoute, addr: str) -> TopicRoute:
        """``new`` with the brokers of the route learnt before that it lacks, once."""
        old = self.routes.get(topic)
        if old is None:
            return new
        gone = self._carry(topic, set(old.broker_names) - set(new.broker_names), f"route of {topic}", addr)
        if not gone:
            return new
        return replace(
            new,
            queue_datas=new.queue_datas + tuple(q for q in old.queue_datas if q.broker_name in gone),
            broker_datas=new.broker_datas + tuple(b for b in old.broker_datas if b.broker_name in gone),
        )

    def cluster_info(self, new: ClusterInfo, addr: str) -> ClusterInfo:
        """``new`` with the brokers of the cluster learnt before that it lacks, once."""
        old = self.cluster
        if old is None:
            return new
        gone = self._carry(CLUSTER, set(old.brokers) - set(new.brokers), "cluster", addr)
        if not gone:
            return new
        brokers = {**new.brokers, **{b: old.brokers[b] for b in sorted(gone)}}
        clusters = dict(new.clusters)
        for name, members in old.clusters.items():
            kept = tuple(b for b in members if b in gone and b not in clusters.get(name, ()))
            if kept:
                clusters[name] = clusters.get(name, ()) + kept
        return replace(new, brokers=brokers, clusters=clusters)

    def _carry(self, key: str, missing: set[str], what: str, addr: str) -> set[str]:
        """Of the brokers ``missing`` from a new answer, those not kept at the last refresh already."""
        gone = missing - self.carried.get(key, set())
        self.carried[key] = gone
        if gone:
            self.notes.append(
                f"name server {addr}'s {what} lacks {', '.join(sorted(gone))} (restarted, not "
                f"registered again yet?): still asked until the next refresh of the routes"
            )
        return gone
