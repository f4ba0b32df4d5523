"""One broker's store root, its files opened lazily and kept for the life of the backend.

Reads never take the broker's lock and never write. A command touches each file once: the
config files are parsed on first use, consume queues and the commit log are mapped on first use.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from mqctl.model import BackendWarning, SubscriptionGroup, TopicConfig

if TYPE_CHECKING:
    from mqctl.store.commitlog import CommitLog
    from mqctl.store.consumequeue import ConsumeQueue
    from mqctl.store.layout import StoreLayout
    from mqctl.store.offsets import LoadedOffsets


class BrokerFiles:
    """Lazily opened files of one broker's store; warnings go to the backend's shared list."""

    def __init__(self, name: str, root: Path, stack: ExitStack, warnings: list[BackendWarning]) -> None:
        from mqctl.store.layout import StoreLayout

        self.name = name
        self.layout: StoreLayout = StoreLayout.open(root, name)
        self._stack = stack
        self._warnings = warnings
        self._offsets: LoadedOffsets | None = None
        self._topics: dict[str, TopicConfig] | None = None
        self._groups: dict[str, SubscriptionGroup] | None = None
        self._commitlog: CommitLog | None = None
        self._queues: dict[tuple[str, int], ConsumeQueue] = {}
        self._by_group: dict[str, dict[str, dict[int, int]]] | None = None
        self._version: int | None = None
        self._version_read = False
        self._damage_reported: set[str] = set()

    @property
    def version(self) -> int | None:
        """The RocketMQ line that wrote this store (4.9.7 / 5.3.3 / 5.5.0), None when no file says."""
        if not self._version_read:
            from mqctl.store.version import store_version

            self._version = store_version(self.layout.root, self.layout.config_dir)
            self._version_read = True
        return self._version

    def _warn(self, message: str | None) -> None:
        if message:
            self._warnings.append(BackendWarning(self.name, message))

    @property
    def offsets(self) -> LoadedOffsets:
        if self._offsets is None:
            from mqctl.store.offsets import load_consumer_offsets

            self._offsets = load_consumer_offsets(self.layout.config_dir)
            self._warn(self._offsets.warning)
        return self._offsets

    def committed_by_group(self) -> dict[str, dict[str, dict[int, int]]]:
        """group -> topic -> {queueId: committed offset}, indexed once (scanning the table per group
        made a 1,000-group overview quadratic). Broadcast pull offsets are not committed offsets."""
        if self._by_group is None:
            from mqctl.store.offsets import COMMITTED, split_offset_key

            index: dict[str, dict[str, dict[int, int]]] = {}
            for key, queues in self.offsets.table.offsets.items():
                parts = split_offset_key(key)
                if parts is not None and parts[2] == COMMITTED:
                    index.setdefault(parts[1], {})[parts[0]] = queues
            self._by_group = index
        return self._by_group

    @property
    def topics(self) -> dict[str, TopicConfig]:
        if self._topics is None:
            from mqctl.store.metadata import load_topics

            loaded = load_topics(self.layout.config_dir)
            self._warn(loaded.warning)
            self._topics = dict(loaded.value or {})
        return self._topics

    @property
    def subscription_groups(self) -> dict[str, SubscriptionGroup]:
        if self._groups is None:
            from mqctl.store.metadata import load_subscription_groups, subscription_group

            loaded = load_subscription_groups(self.layout.config_dir)
            self._warn(loaded.warning)
            self._groups = {
                name: subscription_group(name, props) for name, props in (loaded.value or {}).items()
            }
        return self._groups

    @property
    def commitlog(self) -> CommitLog:
        if self._commitlog is None:
            from mqctl.store.commitlog import CommitLog

            self._commitlog = self._stack.enter_context(CommitLog(self.layout.commitlog_dirs))
        return self._commitlog

    def queue(self, topic: str, queue_id: int) -> ConsumeQueue:
        key = (topic, queue_id)
        cq = self._queues.get(key)
        if cq is None:
            from mqctl.store.consumequeue import ConsumeQueue

            cq = self._stack.enter_context(
                ConsumeQueue(self.layout.queue_dir(topic, queue_id), self.commitlog.min_offset)
            )
            self._queues[key] = cq
        return cq

    def store_time(self, topic: str, queue_id: int, offset: int) -> int:
        """DefaultMessageStore.getMessageStoreTimeStamp: only entries in [min, max) have one; -1 else.

        An entry in [min, max) points at or above the commit-log min, so its message must be
        there: when it cannot be read the answer is ``TIME_UNREADABLE``, not -1 (the broker's
        -1 would read as "no message", and a lag time of 0 would pass every gate)."""
        from mqctl.model import TIME_UNREADABLE
        from mqctl.store.commitlog import UNREADABLE

        cq = self.queue(topic, queue_id)
        if offset < cq.min_offset or offset >= cq.max_offset:
            return -1
        phys, size, _tags = cq.entry(offset)
        t = self.commitlog.store_time(phys, size)
        return TIME_UNREADABLE if t == UNREADABLE else max(t, -1)

    def report_damage(self) -> None:
        """One warning per damaged commit-log file found so far (each file once)."""
        if self._commitlog is None:
            return
        for where, reason in self._commitlog.damage.items():
            if where not in self._damage_reported:
                self._damage_reported.add(where)
                self._warn(f"commit log damaged: {where}: {reason}; store times there are unknown")
