"""What a lagReport run did: its dataset's summary, and --status's."""

from __future__ import annotations

from typing import Any

from mqctl.records import field, record


@record(frozen=True)
class LagReportSummary:
    """What a lagReport run did: how many queue rows, from where (``source`` "store" or "live"),
    where it wrote them (``out``, ``history``), and the ``top`` groups by diff total (one dict per
    group: group, diffTotal, matchedDiffTotal, maxLagMs, queues, queuesBelowMin, queuesAboveMax)."""

    rows: int
    source: str
    now_ms: int
    out: str | None
    dataset_format: str
    history: str | None
    top: list[dict[str, Any]]
    time_unknown: int = 0  # store rows whose oldest unconsumed message cannot be read (damage)
    # groups the consumerProgress overview lists that have no queue row (no committed offset)
    groups_without_rows: list[str] = field(default_factory=list)


@record(frozen=True)
class LagStatusSummary:
    """What lagReport --status judged: ``queues`` queues of ``history`` over its last ``window_ms``,
    the per-queue statuses written to ``out``, and the worst groups (one dict per group)."""

    history: str
    now_ms: int
    window_ms: int
    queues: int
    out: str | None
    dataset_format: str
    groups: list[dict[str, Any]]
