"""The one question-per-method Protocol that ops/ asks and every backend answers.

Backends are context managers. A question a backend cannot answer raises
``NotAvailableError`` (e.g. consumer connections from a store directory).
Brokers are identified by broker name; the order of ``broker_names()`` is the
route order the commands print in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from mqctl.model import TopicConfig

if TYPE_CHECKING:
    import numpy as np

Boundary = Literal["lower", "upper"]


class Backend(Protocol):
    name: str  # "store", "remoting", ...

    def __enter__(self) -> Backend: ...
    def __exit__(self, *exc: object) -> None: ...

    def protected_paths(self) -> Sequence[Path]:
        """Local paths no command may write a file of its own into (a store's root)."""
        ...

    # --- metadata -----------------------------------------------------------------
    def broker_names(self) -> Sequence[str]:
        """Brokers of the cluster, in route order."""
        ...

    def topic_configs(self, broker: str) -> Mapping[str, TopicConfig]:
        """Every topic the broker has a config for (topics.json)."""
        ...

    def groups(self) -> Sequence[str]:
        """Every consumer group known to any broker (committed offsets and subscription groups)."""
        ...

    def subscription_groups(self, broker: str) -> Mapping[str, dict]:
        """subscriptionGroup.json entries of one broker: group -> raw config."""
        ...

    # --- offsets ------------------------------------------------------------------
    def committed_offsets(self, broker: str, group: str) -> Mapping[str, Mapping[int, int]]:
        """topic -> {queueId: committed offset} for one group on one broker."""
        ...

    def queue_offsets(self, broker: str, topic: str, queue_id: int) -> tuple[int, int]:
        """(minOffset, maxOffset) of a consume queue; (0, 0) when the queue has no files."""
        ...

    def store_timestamp(self, broker: str, topic: str, queue_id: int, offset: int) -> int:
        """Store time (epoch ms) of the message at a queue offset; -1 when not readable."""
        ...

    def offset_for_time(
        self, broker: str, topic: str, queue_id: int, timestamp_ms: int, boundary: Boundary = "lower"
    ) -> int:
        """The 5.x broker's getOffsetInQueueByTime, clamped to [min, max]."""
        ...

    def count_tag_matches(
        self, broker: str, topic: str, queue_id: int, start: int, end: int, tag_hashes: Iterable[int]
    ) -> int:
        """Messages in [start, end) whose ConsumeQueue tagsCode is one of tag_hashes."""
        ...

    def matching_offsets(
        self, broker: str, topic: str, queue_id: int, start: int, end: int, tag_hashes: Iterable[int]
    ) -> np.ndarray:
        """Queue offsets in [start, end) whose tagsCode is one of tag_hashes (for --verify-tags)."""
        ...

    def message_tags(self, broker: str, topic: str, queue_id: int, offset: int) -> str | None:
        """The TAGS property of the message at a queue offset (from the CommitLog)."""
        ...

    # --- live-only ----------------------------------------------------------------
    def consumer_connection(self, group: str) -> dict:
        """Connections and subscriptions of an online group (live backends only)."""
        ...

    # --- writes -------------------------------------------------------------------
    def apply_offsets(
        self,
        group: str,
        offsets: Mapping[tuple[str, str, int], int],
        expected: Mapping[tuple[str, str, int], int] | None = None,
        *,
        force_abort_file: bool = False,
    ) -> dict:
        """Write committed offsets {(topic, broker, queueId): offset} with the backend's safety rules.

        ``expected`` holds the offsets the plan was computed from; a mismatch refuses the
        whole write. Returns a journal record of what was changed (for undo).
        """
        ...
