"""--watch and --history of a broadcasting group: one window per client instance.

Each sample re-reads the clients' files (a running client rewrites its own every 5 s) and the
brokers' queues once, on the one kept backend (``ops.broadcast.client_progress``); each client's
rows then go to a ``GroupSampler`` of its own (``judge``), so a client gets exactly the statuses,
rates and stuck messages a group gets, and its samples carry its label (``Sample.client``) in the
pipe output and the --history file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mqctl.ops.broadcast import DEFAULT_STALE_AFTER_MS
from mqctl.ops.watch.sampler import GroupSampler, Tick
from mqctl.records import field, record

if TYPE_CHECKING:
    from mqctl.backends.base import Backend
    from mqctl.model import QueueOffset, Rules, Sample
    from mqctl.model.broadcast import BroadcastProgress


@record(frozen=True)
class BroadcastTick:
    """One sample of every client: the read it came from, a Tick per client (its window), and the
    warnings not given before."""

    progress: BroadcastProgress
    ticks: list[Tick]
    warnings: list[str] = field(default_factory=list)

    @property
    def each(self) -> list[Tick]:
        return self.ticks


CLIENTS_NOTE = (
    "a client rewrites its offsets.json every 5 s (persistConsumerOffsetInterval) and only while it runs: "
    "rates are coarse; an interval of 5 s or more reads better"
)


class BroadcastSampler:
    """Samples of a broadcasting ``group`` from its clients' files under ``paths``; ``history``:
    a --history file whose last samples of each client start that client's window."""

    def __init__(
        self,
        backend: Backend,
        group: str,
        topic: str | None,
        rules: Rules,
        paths: Sequence[Path],
        *,
        retry_scan: int = 200,
        history: Path | None = None,
        stale_after_ms: int = DEFAULT_STALE_AFTER_MS,
    ) -> None:
        self.backend, self.group, self.topic, self.rules = backend, group, topic, rules
        self.paths, self.retry_scan, self.history = list(paths), retry_scan, history
        self.stale_after_ms = stale_after_ms
        self.clients: dict[str, GroupSampler] = {}
        self.time_cache: dict[QueueOffset, int] = {}
        self._said: set[str] = set()
        self._first = True

    def _sampler(self, label: str, warnings: list[str]) -> GroupSampler:
        if label not in self.clients:
            seed: list[Sample] = []
            if self.history is not None:
                from mqctl.ops.watch.history import read_history

                seed, said = read_history(
                    self.history, self.group, self.topic, self.rules.window * 3, client=label
                )
                warnings += said
            self.clients[label] = GroupSampler(
                self.backend, self.group, self.topic, self.rules, retry_scan=self.retry_scan, seed=seed
            )
        return self.clients[label]

    def take(self, now_ms: int | None = None) -> BroadcastTick:
        from mqctl.ops.broadcast import from_files

        first, self._first = self._first, False
        if not first:
            self.backend.refresh()
        result = from_files(
            self.backend,
            self.group,
            self.paths,
            self.topic,
            now_ms=now_ms,
            stale_after_ms=self.stale_after_ms,
            time_cache=self.time_cache,
            with_pull_offsets=False,
        )
        warnings = [CLIENTS_NOTE] if first else []
        warnings += result.warnings
        ticks = []
        for cp in sorted(result.clients, key=lambda c: c.client.label):
            tick = self._sampler(cp.client.label, warnings).judge(cp.progress, cp.client.label)
            warnings += tick.warnings
            ticks.append(tick)
        stale = [cp.client.label for cp in result.stale]
        if stale:
            warnings.append(
                f"client file(s) not written for over {self.stale_after_ms // 1000} s: {', '.join(stale)}"
            )
        return BroadcastTick(result, ticks, self._once(warnings))

    def _once(self, lines: Iterable[str]) -> list[str]:
        fresh = [line for line in dict.fromkeys(lines) if line not in self._said]
        self._said.update(fresh)
        return fresh
