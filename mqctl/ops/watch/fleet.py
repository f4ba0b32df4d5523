"""Rounds over every group of a cluster, on ONE kept backend: what the exporter serves and alerts
on (``mqctl exporter``).

A round is one ``groups_overview(detail=True)`` (the fleet question: every group's consume stats
in a few pipelined rounds: the brokers' offset tables, every group's stats at once, each topic's
min offsets; backends/live_groups.py), the store times of the lagging queues' oldest messages in one
batch (cached by queue position across rounds, as --watch caches them), exact filtered lag where
a group's subscriptions are known (counted incrementally: only the entries that arrived or were
consumed since the previous round are read), each group's window judged by ops/watch/rules (the
``GroupWindow`` --watch uses) with the stuck message of its STUCK and STALL queues, and the
members online. Each complete round goes to the sinks as one immutable ``FleetRound``.

A group that disappears from a complete round is gone (its window too); one that disappears
while a broker did not answer is kept (``absent``): it may live on that broker, and forgetting
it would resolve its alerts only to fire them again when the broker is back.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from mqctl.errors import MqctlError
from mqctl.ops.watch.sampler import GroupWindow, Tick
from mqctl.records import field, record

if TYPE_CHECKING:
    from mqctl.backends.base import Backend
    from mqctl.model import GroupOverview, MessageQueue, QueueOffset, Rules
    from mqctl.model.pop import PopView
    from mqctl.ops.watch import filtered

UNSUPPORTED_BROADCAST = "broadcast"  # offsets live in each client (offsets.json), not on the brokers


@record(frozen=True)
class FleetFilter:
    """--group-allow/--group-deny/--topic-allow/--topic-deny: which groups and topics a round
    covers (regexes, searched anywhere in the name; deny wins)."""

    group_allow: re.Pattern[str] | None = None
    group_deny: re.Pattern[str] | None = None
    topic_allow: re.Pattern[str] | None = None
    topic_deny: re.Pattern[str] | None = None

    @staticmethod
    def _ok(name: str, allow: re.Pattern[str] | None, deny: re.Pattern[str] | None) -> bool:
        return (allow is None or allow.search(name) is not None) and (
            deny is None or deny.search(name) is None
        )

    def group(self, name: str) -> bool:
        return self._ok(name, self.group_allow, self.group_deny)

    def topic(self, name: str) -> bool:
        return self._ok(name, self.topic_allow, self.topic_deny)


@record(frozen=True)
class GroupTick:
    """One group in one round. ``tick`` is None when the group is unsupported or could not be
    read (``failure``); ``filtered``: per queue, the subscription expression and the exact count
    of unconsumed messages it matches; ``members``: clients online (None: the backend cannot know)."""

    group: str
    tick: Tick | None
    members: int | None = None
    unsupported: str | None = None
    failure: str | None = None
    filtered: Mapping[MessageQueue, tuple[str, int]] = field(default_factory=dict)


@record(frozen=True)
class FleetRound:
    """A complete round: every group read, the brokers that did not answer (broker -> why), the
    groups kept from earlier rounds because a broker was missing, and what it cost."""

    number: int
    at_ms: int
    duration_s: float
    brokers: tuple[str, ...]
    down: Mapping[str, tuple[str, int]]  # broker -> (message, exit status)
    groups: tuple[GroupTick, ...]
    absent: tuple[str, ...] = ()
    requests: int | None = None  # requests sent in the round (None: not counted, a store)
    warnings: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.down


FleetSink = Callable[[FleetRound], None]


def unsupported_reason(ov: GroupOverview) -> str | None:
    conn = ov.connection
    if conn is None:
        return None
    if (conn.message_model or "").upper() == "BROADCASTING":
        return UNSUPPORTED_BROADCAST
    return None


class FleetSampler:
    """Rounds of every group of ``backend`` (refreshed before each round but the first).
    ``subscriptions``: group -> topic -> tag expression, from a profile, for groups whose live
    subscriptions are not known (offline, or a store)."""

    def __init__(
        self,
        backend: Backend,
        rules: Rules,
        *,
        only: FleetFilter = FleetFilter(),
        subscriptions: Mapping[str, Mapping[str, str]] | None = None,
        retry_scan: int = 200,
    ) -> None:
        self.backend, self.rules, self.only, self.retry_scan = backend, rules, only, retry_scan
        self.subscriptions = {g: dict(t) for g, t in (subscriptions or {}).items()}
        self.windows: dict[str, GroupWindow] = {}
        self.time_cache: dict[QueueOffset, int] = {}
        self.match_cache: dict = {}  # see ops/watch/filtered.py
        self.number = 0

    def _requests(self) -> int | None:
        counter = getattr(self.backend, "requests", None)
        return sum(counter.values()) if counter is not None else None

    def take(self, now_ms: int | None = None) -> FleetRound:
        """One round. Raises what the backend raises when nothing could be read at all (the name
        server down): there is no round then, and the caller keeps serving the last one."""
        t0, sent0 = time.monotonic(), self._requests()
        if self.number:
            self.backend.refresh()
        now = int(time.time() * 1000) if now_ms is None else now_ms
        brokers = tuple(self.backend.broker_names())
        overviews = [ov for ov in self.backend.groups_overview(detail=True) if self.only.group(ov.ref.name)]
        down = broker_failures(overviews, brokers)
        ticks = self._ticks(overviews, now)
        absent = tuple(sorted(set(self.windows) - {t.group for t in ticks})) if down else ()
        for gone in set(self.windows) - {t.group for t in ticks} - set(absent):
            del self.windows[gone]
        self.number += 1
        sent1 = self._requests()
        warnings = tuple(str(w) for w in self.backend.take_warnings())
        return FleetRound(
            self.number,
            now,
            time.monotonic() - t0,
            brokers,
            down,
            tuple(ticks),
            absent,
            None if sent0 is None or sent1 is None else sent1 - sent0,
            warnings,
        )

    def _ticks(self, overviews: Sequence[GroupOverview], now: int) -> list[GroupTick]:
        from mqctl.model import GroupProgress
        from mqctl.ops import progress
        from mqctl.ops.watch import filtered, rules
        from mqctl.records import replace

        pops, not_groups = self._pop_groups(overviews)
        overviews = [ov for ov in overviews if ov.ref.name not in not_groups]
        readable = []
        for ov in overviews:
            if ov.stats is not None and unsupported_reason(ov) is None:
                queues = tuple(q for q in ov.stats.queues if self.only.topic(q.queue.topic))
                readable.append(replace(ov, stats=replace(ov.stats, queues=queues)))
        stats = [ov.stats for ov in readable if ov.stats is not None]
        times = progress.oldest_times(self.backend, stats, self.time_cache)
        matches = filtered.matched_lags(self.backend, self._wanted(readable), self.match_cache)
        by_name = {ov.ref.name: ov for ov in readable}
        live = self.backend.kind.knows_runtime
        out: list[GroupTick] = []
        for ov in overviews:
            name, conn = ov.ref.name, ov.connection
            members = (len(conn.connections) if conn is not None else 0) if live else None
            reason = unsupported_reason(ov)
            if reason is not None or ov.stats is None:
                if reason is not None:  # an unread group keeps its window for when it reads again
                    self.windows.pop(name, None)
                out.append(GroupTick(name, None, members, reason, ov.failure))
                continue
            ov = by_name[name]
            assert ov.stats is not None
            rows, _ = progress.rows_from_stats(self.backend, ov.stats, now, known_times=times)
            pop_view = pops.get(name)  # in flight not read for it (unknown: no inflight series)
            result = GroupProgress(
                name,
                rows,
                now,
                consume_tps=ov.stats.consume_tps if live else None,
                failures=ov.stats.failures,
                pop=pop_view,
            )
            window = self.windows.get(name)
            if window is None:
                window = self.windows[name] = GroupWindow(
                    self.backend, name, self.rules, retry_scan=self.retry_scan
                )
            notes: list[str] = []
            view, stuck = window.add(rules.sample_from_progress(result, self.backend.kind), notes)
            if pop_view is not None:  # STUCK shows in its POP retry topic, as in --watch
                from mqctl.ops.watch.pop import mark_stuck

                view = mark_stuck(self.backend, result, view, stuck, window.pop_reader, notes)
            mine = {q: m for (g, q), m in matches.items() if g == name}
            out.append(
                GroupTick(name, Tick(view, stuck, result, window.once(notes)), members, None, None, mine)
            )
        return out

    def _pop_groups(self, overviews: Sequence[GroupOverview]) -> tuple[dict[str, PopView], set[str]]:
        """The POP groups of the round (by a client the brokers list as CONSUME_POP, else as the
        overview tells them) with their retry queues, and the rows that are no group but a POP
        retry topic mqadmin lists as one (left out, as the overview leaves them out)."""
        from mqctl.model.pop import PopGroup
        from mqctl.ops import pop

        found, bogus = pop.overview_marks(self.backend, overviews)
        infos: dict[str, PopGroup] = dict(found)
        for ov in overviews:
            conn, name = ov.connection, ov.ref.name
            if conn is None or (conn.consume_type or "").upper() != "CONSUME_POP" or ov.stats is None:
                continue
            try:
                info = pop.detect(self.backend, name, ov.stats)
            except MqctlError:
                info = None
            # its clients say POP: no revived message yet, or the brokers' memory not readable
            infos[name] = info or PopGroup(name)
        by_name = {ov.ref.name: ov for ov in overviews}
        views: dict[str, PopView] = {}
        for name, info in infos.items():
            stats = by_name[name].stats
            if stats is not None and self.only.group(name):
                views[name] = pop.view_of(self.backend, info, stats)
        return views, set(bogus)

    def _wanted(self, overviews: Iterable[GroupOverview]) -> list[filtered.Want]:
        from mqctl.ops.watch import filtered as f

        wanted: list[filtered.Want] = []
        for ov in overviews:
            subs = dict(self.subscriptions.get(ov.ref.name, {}))
            if ov.connection is not None:
                for s in ov.connection.subscriptions:
                    if (s.expression_type or "TAG").upper() == "TAG" and s.sub_string is not None:
                        subs.setdefault(s.topic, s.sub_string)
            if not subs or ov.stats is None:
                continue
            for q in ov.stats.queues:
                expr = subs.get(q.queue.topic)
                if expr is not None:
                    wanted.append(f.Want(ov.ref.name, expr, q))
        return wanted


def broker_failures(overviews: Sequence[GroupOverview], brokers: Sequence[str]) -> dict[str, tuple[str, int]]:
    """The brokers that did not answer this round: named in a group's failures; every broker
    when no group's stats could be read at all (each group's read failed as a whole)."""
    down: dict[str, tuple[str, int]] = {}
    for ov in overviews:
        for f in ov.stats.failures if ov.stats is not None else ():
            down.setdefault(f.broker_name, (f.message, int(f.exit_status)))
    if overviews and all(ov.stats is None for ov in overviews):
        why = next((ov.failure for ov in overviews if ov.failure), "no answer")
        for b in brokers:
            down.setdefault(b, (why, 4))
    return down


def run_rounds(
    sampler: FleetSampler,
    times: Iterable[int | None],
    sink: FleetSink,
    on_error: Callable[[MqctlError], None],
    stop: Callable[[], bool] = lambda: False,
) -> None:
    """A round at each of ``times`` handed to ``sink``; a round that could not be taken at all
    goes to ``on_error`` (and the next round is tried at the next time)."""
    for t in times:
        if stop():
            return
        try:
            result = sampler.take(t)
        except MqctlError as e:
            on_error(e)
            continue
        sink(result)
