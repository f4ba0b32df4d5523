"""Plain data passed between layers, importable from here (``from mqctl.model import X``).

queues (routes, consume stats), positions (offsets, spans, times in queues), writes (offset
writes), clients (connections, groups), broadcast (the offsets broadcasting clients keep in their
own files), pop (POP consumption), subexpr (tag expressions, Java's String.hashCode), results
(consumerProgress), reports (lagReport's runs), plans (resetOffsetByTime, the journal), allocation
(allocateMQ), watch (samples, statuses), versions (MQVersion names).

Submodules load on first use: every command starts in a fresh process, and defining the
classes of the ones a command does not need would be start-up time for nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    "AppliedQueue": "writes",
    "WriteResult": "writes",
    "AllocationResult": "allocation",
    "BackendKind": "queues",
    "BackendTarget": "queues",
    "BackendWarning": "queues",
    "BrokerData": "queues",
    "BrokerFailure": "queues",
    "Connection": "clients",
    "ClientOffsets": "broadcast",
    "ConsumeStats": "queues",
    "ConsumerConnection": "clients",
    "ConsumerRunningInfo": "clients",
    "D_DRAINED": "watch",
    "D_DRAINING": "watch",
    "D_NEVER": "watch",
    "D_UNKNOWN": "watch",
    "FOUND_OFFSETS": "clients",
    "FOUND_RETRY_TOPIC": "clients",
    "FOUND_SUBSCRIPTION": "clients",
    "GroupOverview": "clients",
    "GroupProgress": "results",
    "GroupRef": "clients",
    "GroupSummary": "results",
    "JOURNAL_SCHEMA": "plans",
    "JournalRecord": "plans",
    "LagReportSummary": "reports",
    "LagStatusSummary": "reports",
    "MessageQueue": "queues",
    "Move": "allocation",
    "OffsetChange": "writes",
    "PERM_READ": "queues",
    "PERM_WRITE": "queues",
    "PlanRow": "plans",
    "ProcessQueueInfo": "clients",
    "ProgressRow": "results",
    "QueueData": "queues",
    "QueueOffset": "positions",
    "QueuePoint": "watch",
    "QueueSpan": "positions",
    "QueueStat": "queues",
    "QueueTime": "positions",
    "QueueWatch": "watch",
    "RETRY_PREFIX": "queues",
    "Rates": "watch",
    "RebalanceReport": "allocation",
    "RebalanceRow": "allocation",
    "ResetPlan": "plans",
    "Rules": "watch",
    "SAMPLE_SCHEMA": "watch",
    "STATUSES": "watch",
    "SUB_ALL": "subexpr",
    "SYSTEM_GROUPS": "clients",
    "S_OK": "watch",
    "S_REWIND": "watch",
    "S_STALL": "watch",
    "S_STOP": "watch",
    "S_STUCK": "watch",
    "S_WARN": "watch",
    "Sample": "watch",
    "StoredMessage": "clients",
    "StuckMessage": "watch",
    "SubExpr": "subexpr",
    "Subscription": "clients",
    "SubscriptionGroup": "clients",
    "TIME_UNREADABLE": "queues",
    "TagCount": "positions",
    "Target": "plans",
    "TargetKind": "plans",
    "TopicAllocation": "allocation",
    "TopicConfig": "queues",
    "TopicRoute": "queues",
    "V4_9_7": "versions",
    "V5_0_0": "versions",
    "V5_2_0": "versions",
    "V5_3_3": "versions",
    "V5_5_0": "versions",
    "V5_5_1": "versions",
    "WHY_SCHEMA": "watch",
    "W_BELOW_MIN": "plans",
    "W_BEYOND_MAX": "plans",
    "W_CLAMPED": "plans",
    "W_EMPTY": "plans",
    "W_KEPT": "plans",
    "W_NO_COMMIT": "plans",
    "WatchView": "watch",
    "group_of_retry_topic": "clients",
    "is_system_group": "clients",
    "java_compare_key": "queues",
    "java_split": "queues",
    "java_string_hash": "subexpr",
    "parse_subexpr": "subexpr",
    "severity": "watch",
    "version_name": "versions",
    "version_ordinal": "versions",
    "is_legacy": "versions",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{where}"), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from mqctl.model.allocation import (
        AllocationResult,
        Move,
        RebalanceReport,
        RebalanceRow,
        TopicAllocation,
    )
    from mqctl.model.broadcast import ClientOffsets
    from mqctl.model.clients import (
        FOUND_OFFSETS,
        FOUND_RETRY_TOPIC,
        FOUND_SUBSCRIPTION,
        SYSTEM_GROUPS,
        Connection,
        ConsumerConnection,
        ConsumerRunningInfo,
        GroupOverview,
        GroupRef,
        ProcessQueueInfo,
        StoredMessage,
        Subscription,
        SubscriptionGroup,
        group_of_retry_topic,
        is_system_group,
    )
    from mqctl.model.plans import (
        JOURNAL_SCHEMA,
        W_BELOW_MIN,
        W_BEYOND_MAX,
        W_CLAMPED,
        W_EMPTY,
        W_KEPT,
        W_NO_COMMIT,
        JournalRecord,
        PlanRow,
        ResetPlan,
        Target,
        TargetKind,
    )
    from mqctl.model.positions import QueueOffset, QueueSpan, QueueTime, TagCount
    from mqctl.model.queues import (
        PERM_READ,
        PERM_WRITE,
        RETRY_PREFIX,
        TIME_UNREADABLE,
        BackendKind,
        BackendTarget,
        BackendWarning,
        BrokerData,
        BrokerFailure,
        ConsumeStats,
        MessageQueue,
        QueueData,
        QueueStat,
        TopicConfig,
        TopicRoute,
        java_compare_key,
        java_split,
    )
    from mqctl.model.reports import LagReportSummary, LagStatusSummary
    from mqctl.model.results import GroupProgress, GroupSummary, ProgressRow
    from mqctl.model.subexpr import (
        SUB_ALL,
        SubExpr,
        java_string_hash,
        parse_subexpr,
    )
    from mqctl.model.versions import (
        V4_9_7,
        V5_0_0,
        V5_2_0,
        V5_3_3,
        V5_5_0,
        V5_5_1,
        is_legacy,
        version_name,
        version_ordinal,
    )
    from mqctl.model.watch import (
        D_DRAINED,
        D_DRAINING,
        D_NEVER,
        D_UNKNOWN,
        S_OK,
        S_REWIND,
        S_STALL,
        S_STOP,
        S_STUCK,
        S_WARN,
        SAMPLE_SCHEMA,
        STATUSES,
        WHY_SCHEMA,
        QueuePoint,
        QueueWatch,
        Rates,
        Rules,
        Sample,
        StuckMessage,
        WatchView,
        severity,
    )
