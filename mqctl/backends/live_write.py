"""Offset writes on a live cluster, the way the broker expects them, then read back.

Phase one (entering): the committed offset of every target queue (QUERY_CONSUMER_OFFSET, none =
-1) and whether the group is online (GET_CONSUMER_CONNECTION_LIST). An offline group whose
offsets differ from the plan's is refused (nothing applied): nobody else moves them, so a
difference means the plan is stale. An online group's offsets move all the time: the plan's
targets are applied as absolute offsets and each queue's drift since the plan is reported.

Phase two (commit): per queue, INVOKE_BROKER_TO_RESET_OFFSET with the explicit offset (the 5.x
server-side reset: the broker writes its table and tells the clients at their next pull); a
broker answering CONSUMER_NOT_ONLINE (4.x, or 5.x with server-side reset off, for an offline
group) gets UPDATE_CONSUMER_OFFSET queue by queue instead, as mqadmin falls back — and the result
says so. Then every queue is read back: the report shows, per queue, whether it took.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from mqctl.errors import ExitStatus, MqctlError, PartialWriteError, RefusedError
from mqctl.model import AppliedQueue, MessageQueue, OffsetChange, WriteResult
from mqctl.remoting.codes import RequestCode, ResponseCode

if TYPE_CHECKING:
    from mqctl.backends.live_net import LiveRounds
    from mqctl.remoting.frame import RemotingCommand

PREVIOUSLY_RESET = "Offset has been previously reset"


class LiveOffsetWrite:
    def __init__(
        self,
        backend: LiveRounds,
        group: str,
        targets: Mapping[MessageQueue, int],
        expected: Mapping[MessageQueue, int] | None,
    ) -> None:
        self.backend, self.group = backend, group
        # -1 (an undo back to "no committed offset"): no request removes one from a live broker.
        self.kept = [mq for mq, off in targets.items() if off < 0]
        self.targets = {mq: off for mq, off in targets.items() if off >= 0}
        self.expected = dict(expected or {})
        self.changes: list[OffsetChange] = []
        self.online = False
        self._drift: dict[MessageQueue, int] = {}
        self._legacy: list[str] = []
        self._client_side: list[str] = []  # 5.x brokers with useServerSideResetOffset=false
        self._notes: list[str] = []

    def __enter__(self) -> LiveOffsetWrite:
        current = committed_offsets(self.backend, self.group, list(self.targets))
        self._raise_to_min()
        self.online = _online(self.backend, self.group, list(dict.fromkeys(mq.topic for mq in self.targets)))
        moved = []
        for mq, target in self.targets.items():
            now = current[mq]
            want = self.expected.get(mq)
            # The stats the plan came from show "no committed offset" as 0.
            if want is not None and now != want and not (now == -1 and want == 0):
                moved.append(
                    f"{mq.broker_name} {mq.topic} queue {mq.queue_id} is {now}, plan expected {want}"
                )
                self._drift[mq] = now - want
            self.changes.append(OffsetChange(mq, now, target))
        self._legacy = self._legacy_brokers()
        if self._legacy and self.online:
            off = [b for b in self._legacy if b in self._client_side]
            if off:
                raise RefusedError(
                    f"{', '.join(off)} run(s) with useServerSideResetOffset=false: a reset there goes through "
                    "the clients registered with the broker, by time for a whole topic, and POP consumers "
                    "behind a proxy are never registered (apache/rocketmq #9038); explicit offsets cannot be "
                    "applied while consumers run; nothing applied",
                    "turn the broker's server-side reset on (mqadmin updateBrokerConfig -b BROKER_ADDR -k "
                    "useServerSideResetOffset -v true) and run again, or stop the group's consumers first",
                )
            raise RefusedError(
                f"{', '.join(self._legacy)} run(s) a RocketMQ older than 5.2, which resets an online group "
                "only through its clients and only by time for a whole topic: explicit offsets cannot be "
                "applied there while consumers run; nothing applied",
                "stop the group's consumers and run again (the offsets are then written directly), or use "
                "mqadmin resetOffsetByTime -s TIME for that broker",
            )
        if moved and not self.online:
            more = f" (and {len(moved) - 3} more)" if len(moved) > 3 else ""
            raise RefusedError(
                "offsets moved since the plan was made (the group is offline, so nobody else should "
                "have moved them): " + "; ".join(moved[:3]) + more + "; nothing applied"
            )
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def _raise_to_min(self) -> None:
        """A broker takes no reset below a queue's min offset (resetOffsetInner: "not in consume
        queue range"); an undo can ask for one when messages expired since. Those queues go to min,
        where the broker would move their consumer at its next pull anyway, and the result says so."""
        mins = self.backend.min_offsets(list(self.targets))
        low = {mq: mins[mq] for mq, off in self.targets.items() if mq in mins and off < mins[mq]}
        if low:
            self.targets.update(low)
            self._notes.append(
                f"{len(low)} queue(s) targeted below their min offset (those messages expired): set to "
                "the min offset, the lowest a broker accepts"
            )

    def _legacy_brokers(self) -> list[str]:
        """Brokers before 5.2 (their version is in every answer), and 5.x brokers whose server-side
        reset is off (``useServerSideResetOffset=false``, the default before 5.2): there,
        INVOKE_BROKER_TO_RESET_OFFSET ignores the queue and offset and resets the whole topic by time,
        through the clients registered with the broker (AdminBrokerProcessor.resetOffset)."""
        from mqctl.model import V5_2_0

        names = dict.fromkeys(mq.broker_name for mq in self.targets)
        old = [b for b in names if (v := self.backend.broker_version(b)) is not None and v < V5_2_0]
        self._client_side = [b for b in names if b not in old and _server_side_off(self.backend, b)]
        return old + self._client_side

    def commit(self) -> WriteResult:
        brokers = list(dict.fromkeys(mq.broker_name for mq in self.targets))
        modern = {mq: off for mq, off in self.targets.items() if mq.broker_name not in self._legacy}
        resets = [_reset_request(self.group, mq, off) for mq, off in modern.items()]
        answers = self.backend.ask(resets) if resets else []
        fallback: dict[MessageQueue, int] = {}
        failed: dict[str, tuple[str, ExitStatus]] = {}  # broker -> (why, what it means)
        notes: dict[MessageQueue, str] = {}
        # An offline group on an old broker: its offsets are written directly.
        fallback.update({mq: off for mq, off in self.targets.items() if mq.broker_name in self._legacy})
        for (mq, off), r in zip(modern.items(), answers):
            if not isinstance(r, MqctlError) and r.code == ResponseCode.CONSUMER_NOT_ONLINE:
                fallback[mq] = off  # a broker resetting through its clients, and none is online
            else:
                _note_failure(failed, mq.broker_name, r)
        method = "broker-reset"
        if fallback:
            method = "offset-update" if len(fallback) == len(self.targets) else "broker-reset+offset-update"
            self._update(fallback, failed, notes)
        done = [b for b in brokers if b not in failed]
        checks = self._read_back(notes)
        if failed:
            why = "; ".join(f"{b}: {m}" for b, (m, _s) in failed.items())
            landed = bool(done) or not self._none_took(checks)
            took = f"{', '.join(done)} did (kept in the journal)" if done else "none took it"
            took += "" if landed else " (read back: no queue moved)"
            raise PartialWriteError(
                f"{len(failed)} of {len(brokers)} broker(s) did not take the reset ({why}); {took}",
                done,
                _status(failed),
                landed=landed,
            )
        extra: tuple[str, ...] = tuple(self._notes)
        if fallback:
            extra = (
                f"the group has no client online: offsets written queue by queue (UPDATE_CONSUMER_OFFSET) "
                f"for {len(fallback)} queue(s), as mqadmin falls back",
            )
        if self.kept:
            extra += (
                f"{len(self.kept)} queue(s) had no committed offset before; a live broker has no request "
                "that removes one, so they keep their current offset",
            )
        return WriteResult(tuple(done), method, checks, extra)

    def _none_took(self, checks: Sequence[AppliedQueue]) -> bool:
        """Every queue read back, and none of those the write would move is at its target."""
        before = {c.queue: c.before for c in self.changes}
        return all(
            c.now is not None and (c.now != c.target or before.get(c.queue) == c.target) for c in checks
        )

    def _update(
        self,
        queues: Mapping[MessageQueue, int],
        failed: dict[str, tuple[str, ExitStatus]],
        notes: dict[MessageQueue, str],
    ) -> None:
        requests = [
            (
                mq.broker_name,
                RequestCode.UPDATE_CONSUMER_OFFSET,
                {"consumerGroup": self.group, "topic": mq.topic, "queueId": mq.queue_id, "commitOffset": off},
            )
            for mq, off in queues.items()
        ]
        for mq, r in zip(queues, self.backend.ask(requests)):
            if _note_failure(failed, mq.broker_name, r):
                continue
            if not isinstance(r, MqctlError) and r.remark and PREVIOUSLY_RESET in r.remark:
                notes[mq] = r.remark  # a server-side reset is pending: the broker ignored this write

    def _read_back(self, notes: dict[MessageQueue, str]) -> tuple[AppliedQueue, ...]:
        try:
            now = committed_offsets(self.backend, self.group, list(self.targets))
        except MqctlError as exc:
            return tuple(
                AppliedQueue(mq, t, None, self._drift.get(mq, 0), f"not read back: {exc.message}")
                for mq, t in self.targets.items()
            )
        before = {c.queue: c.before for c in self.changes}
        out = []
        for mq, target in self.targets.items():
            note = notes.get(mq)
            resumed = note is None and self.online and _resumed(before[mq], target, now[mq])
            if note is None and now[mq] != target and not resumed:
                note = "not applied"
            out.append(AppliedQueue(mq, target, now[mq], self._drift.get(mq, 0), note, resumed))
        return tuple(out)


def _resumed(before: int, target: int, now: int) -> bool:
    """An online consumer that took the reset resumes from the target and commits onwards; one that
    missed a backward reset still sits at (or past) where it was."""
    return now > target and (target >= before or now < before)


def _reset_request(group: str, mq: MessageQueue, offset: int) -> tuple[str, int, Mapping[str, object]]:
    # timestamp 0 and isForce: with an explicit queue and offset, the broker uses the offset
    # (checked against [min, max + 1]); the field is literally named isForce.
    fields = {
        "topic": mq.topic,
        "group": group,
        "timestamp": 0,
        "isForce": True,
        "queueId": mq.queue_id,
        "offset": offset,
    }
    return (mq.broker_name, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, fields)


def _note_failure(
    failed: dict[str, tuple[str, ExitStatus]], broker: str, r: RemotingCommand | MqctlError
) -> bool:
    """Record the first failure of ``broker`` (an error, or an answer other than SUCCESS);
    whether ``r`` was one."""
    if isinstance(r, MqctlError):
        failed.setdefault(broker, (r.message, ExitStatus(int(r.exit_status))))
    elif r.code != ResponseCode.SUCCESS:
        failed.setdefault(
            broker, (f"code {r.code}: {' '.join((r.remark or '').split())}", ExitStatus.REFUSED)
        )
    else:
        return False
    return True


def _status(failed: Mapping[str, tuple[str, ExitStatus]]) -> ExitStatus:
    """A denial says most (who may not do this), then a broker that could not be reached."""
    statuses = {s for _m, s in failed.values()}
    for status in (ExitStatus.DENIED, ExitStatus.UNREACHABLE):
        if status in statuses:
            return status
    text = " ".join(m for m, _s in failed.values()).lower()
    if "timed out" in text or "unreachable" in text or "connect" in text or "closed" in text:
        return ExitStatus.UNREACHABLE
    return ExitStatus.REFUSED


def committed_offsets(
    backend: LiveRounds, group: str, queues: Sequence[MessageQueue]
) -> dict[MessageQueue, int]:
    """QUERY_CONSUMER_OFFSET per queue, pipelined; -1 where the group has none (QUERY_NOT_FOUND)."""
    from mqctl.remoting.frame import ext_int

    requests = [
        (
            mq.broker_name,
            RequestCode.QUERY_CONSUMER_OFFSET,
            {"consumerGroup": group, "topic": mq.topic, "queueId": mq.queue_id, "setZeroIfNotFound": False},
        )
        for mq in queues
    ]
    out: dict[MessageQueue, int] = {}
    for mq, req, r in zip(queues, requests, backend.ask(requests)):
        if not isinstance(r, MqctlError) and r.code == ResponseCode.QUERY_NOT_FOUND:
            out[mq] = -1
        else:
            out[mq] = ext_int(backend.net.ok(r, backend.net.broker_addr(mq.broker_name), req[1]), "offset")
    return out


def _online(backend: LiveRounds, group: str, topics: Sequence[str]) -> bool:
    """A client registered with the brokers, or (POP consumers through a proxy, never registered)
    the group's subscription in a broker's compensation table: a pop in the last 10 minutes."""
    try:
        if backend.consumer_connection(group).connections:
            return True
    except MqctlError:
        pass
    from mqctl.backends.live_pop import recent_subscriptions

    try:
        return bool(recent_subscriptions(backend, group, topics))
    except MqctlError:
        return False


def _server_side_off(backend: LiveRounds, broker: str) -> bool:
    """``useServerSideResetOffset=false`` in the broker's settings (unreadable settings: the 5.2+
    default, on)."""
    from mqctl.backends.live_pop import broker_settings

    try:
        return broker_settings(backend, broker).get("useServerSideResetOffset", "true").lower() == "false"
    except MqctlError:
        return False
