"""The store backend: answers the Backend questions from broker store directories on disk.

Reads never take the broker's lock and never write. Files are opened lazily and cached for
the life of the backend (a context manager), so one command touches each file once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from mqctl.errors import NotAvailableError, NotFoundError, StoreError
from mqctl.model import (
    FOUND_OFFSETS,
    FOUND_RETRY_TOPIC,
    GroupRef,
    TopicConfig,
    group_of_retry_topic,
)

if TYPE_CHECKING:
    import numpy as np

    from mqctl.store.commitlog import CommitLog
    from mqctl.store.consumequeue import ConsumeQueue
    from mqctl.store.layout import StoreLayout
    from mqctl.store.offsets import LoadedOffsets


class _Broker:
    """Lazily opened files of one broker's store."""

    def __init__(self, name: str, root: Path, stack: ExitStack, warnings: list[str]) -> None:
        from mqctl.store.layout import StoreLayout

        self.name = name
        self.layout: StoreLayout = StoreLayout.open(root, name)
        self._stack = stack
        self._warnings = warnings
        self._offsets: LoadedOffsets | None = None
        self._topics: dict[str, TopicConfig] | None = None
        self._groups: dict[str, dict] | None = None
        self._commitlog: CommitLog | None = None
        self._queues: dict[tuple[str, int], ConsumeQueue] = {}
        self._by_group: dict[str, dict[str, dict[int, int]]] | None = None

    @property
    def offsets(self) -> LoadedOffsets:
        if self._offsets is None:
            from mqctl.store.offsets import load_consumer_offsets

            self._offsets = load_consumer_offsets(self.layout.config_dir)
            if self._offsets.warning:
                self._warnings.append(f"{self.name}: {self._offsets.warning}")
        return self._offsets

    def group_offsets(self, group: str) -> dict[str, dict[int, int]]:
        """topic -> {queueId: offset}; the table is indexed by group once, not scanned per call."""
        if self._by_group is None:
            from mqctl.store.offsets import COMMITTED, split_offset_key

            index: dict[str, dict[str, dict[int, int]]] = {}
            for key, queues in self.offsets.table.offsets.items():
                parts = split_offset_key(key)
                if parts is not None and parts[2] == COMMITTED:
                    index.setdefault(parts[1], {})[parts[0]] = queues
            self._by_group = index
        return self._by_group.get(group, {})

    @property
    def topics(self) -> dict[str, TopicConfig]:
        if self._topics is None:
            from mqctl.store.metadata import load_topics

            loaded = load_topics(self.layout.config_dir)
            if loaded.warning:
                self._warnings.append(f"{self.name}: {loaded.warning}")
            self._topics = dict(loaded.value or {})
        return self._topics

    @property
    def subscription_groups(self) -> dict[str, dict]:
        if self._groups is None:
            from mqctl.store.metadata import load_subscription_groups

            loaded = load_subscription_groups(self.layout.config_dir)
            if loaded.warning:
                self._warnings.append(f"{self.name}: {loaded.warning}")
            self._groups = dict(loaded.value or {})
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


class StoreBackend:
    """Backend over one or more broker store roots: {broker name: store root}."""

    name = "store"

    def __init__(self, stores: Mapping[str, Path]) -> None:
        self._roots = dict(stores)
        self._stack = ExitStack()
        self._brokers: dict[str, _Broker] = {}
        self.warnings: list[str] = []

    def __enter__(self) -> StoreBackend:
        for name, root in self._roots.items():
            self._brokers[name] = _Broker(name, root, self._stack, self.warnings)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _broker(self, name: str) -> _Broker:
        try:
            return self._brokers[name]
        except KeyError:
            known = ", ".join(self._brokers) or "none"
            raise NotFoundError(f"unknown broker {name!r} (known: {known})") from None

    def protected_paths(self) -> list[Path]:
        """The store roots: mqctl writes there only through the safe offset write."""
        return [Path(root) for root in self._roots.values()]

    # --- metadata ---------------------------------------------------------------------
    def broker_names(self) -> Sequence[str]:
        """Route order, as the name server hands it out: it collects a topic's brokers in a Java
        HashSet of broker names (``RouteInfoManager.pickupTopicRouteData``), so mqadmin visits them
        in that set's iteration order; ties within a hash bucket keep the --store order."""
        from mqctl.store.offsets import java_hash_order

        return java_hash_order(self._brokers)

    def topic_configs(self, broker: str) -> Mapping[str, TopicConfig]:
        return self._broker(broker).topics

    def groups(self) -> Sequence[str]:
        names: set[str] = set()
        for b in self._brokers.values():
            b.group_offsets("")
            names.update(g for g in (b._by_group or {}) if g)
        return sorted(names)

    def group_catalog(self) -> Sequence[GroupRef]:
        """mqadmin's overview order first: groups of the retry topics, in the Java HashSet order of
        the name server's topic list (a HashMap of capacity 1024 on the server, re-hashed into the
        client's set); then groups only the offset tables know, by name."""
        from mqctl.store.offsets import java_hash_order

        topics: list[str] = []
        for b in self._brokers.values():
            topics.extend(b.topics)
        by_retry: dict[str, None] = {}
        for t in java_hash_order(java_hash_order(sorted(set(topics)), 1024)):
            g = group_of_retry_topic(t)
            if g is not None:
                by_retry.setdefault(g)
        with_offsets = set(self.groups())
        refs = [
            GroupRef(g, (FOUND_RETRY_TOPIC, FOUND_OFFSETS) if g in with_offsets else (FOUND_RETRY_TOPIC,))
            for g in by_retry
        ]
        refs += [GroupRef(g, (FOUND_OFFSETS,)) for g in sorted(with_offsets - by_retry.keys())]
        return refs

    def subscription_groups(self, broker: str) -> Mapping[str, dict]:
        return self._broker(broker).subscription_groups

    # --- offsets ----------------------------------------------------------------------
    def committed_offsets(self, broker: str, group: str) -> Mapping[str, Mapping[int, int]]:
        return self._broker(broker).group_offsets(group)

    def queue_offsets(self, broker: str, topic: str, queue_id: int) -> tuple[int, int]:
        cq = self._broker(broker).queue(topic, queue_id)
        return cq.min_offset, cq.max_offset

    def store_timestamp(self, broker: str, topic: str, queue_id: int, offset: int) -> int:
        # DefaultMessageStore.getMessageStoreTimeStamp: only entries in [min, max) have one.
        b = self._broker(broker)
        cq = b.queue(topic, queue_id)
        if offset < cq.min_offset or offset >= cq.max_offset:
            return -1
        phys, size, _tags = cq.entry(offset)
        return b.commitlog.store_timestamp(phys, size)

    def offset_for_time(
        self, broker: str, topic: str, queue_id: int, timestamp_ms: int, boundary: str = "lower"
    ) -> int:
        from mqctl.store.timesearch import offset_by_time

        b = self._broker(broker)
        return offset_by_time(b.queue(topic, queue_id), b.commitlog, timestamp_ms, boundary)

    def count_tag_matches(
        self, broker: str, topic: str, queue_id: int, start: int, end: int, tag_hashes: Iterable[int]
    ) -> int:
        from mqctl.pipeline.kernel import scan_range

        if end <= start:
            return 0
        return scan_range(self._broker(broker).queue(topic, queue_id), start, end, list(tag_hashes))

    def matching_offsets(
        self, broker: str, topic: str, queue_id: int, start: int, end: int, tag_hashes: Iterable[int]
    ) -> np.ndarray:
        import numpy as np

        from mqctl.pipeline.kernel import matching_positions

        if end <= start:
            return np.zeros(0, dtype=np.int64)
        cq = self._broker(broker).queue(topic, queue_id)
        hashes = list(tag_hashes)
        parts = [first + matching_positions(view, hashes) for first, view in cq.segment_views(start, end)]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def message_tags(self, broker: str, topic: str, queue_id: int, offset: int) -> str | None:
        b = self._broker(broker)
        phys, _size, _tags = b.queue(topic, queue_id).entry(offset)
        return b.commitlog.tags(phys)

    # --- live-only --------------------------------------------------------------------
    def consumer_connection(self, group: str) -> dict:
        raise NotAvailableError(
            f"a broker store holds no connection data for group {group!r}: connections exist only in a "
            "running broker's memory",
            "query a live cluster with -n/--namesrvAddr (a later version), or mqadmin consumerConnection",
        )

    # --- writes -----------------------------------------------------------------------
    def apply_offsets(self, group, offsets, expected=None, *, force_abort_file=False):  # type: ignore[no-untyped-def]
        from mqctl.store.safewrite import apply_offsets_to_stores

        roots = {name: b.layout for name, b in self._brokers.items()}
        try:
            return apply_offsets_to_stores(roots, group, offsets, expected, force_abort_file=force_abort_file)
        except OSError as exc:  # read-only filesystem, full disk, permissions: rolled back underneath
            where = exc.filename or "the store"
            raise StoreError(
                f"cannot write {where}: {exc.strerror or exc}; the reset was rolled back, nothing written",
                "check the store's filesystem (read-only? full?) and its permissions",
            ) from None
