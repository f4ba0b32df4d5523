"""The lagReport dataset's schemas, declared once.

Only the Spark job imports this module (it imports pyspark at the top): every DataFrame the job
builds or receives from a Python function is checked against one of these.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

__all__ = [
    "CONSUMER_QUEUES",
    "CQ_FILES",
    "LAG_REPORT",
    "QUEUE_CONSUMERS",
    "SCAN",
]


def _f(name: str, dtype: object, nullable: bool = False) -> StructField:
    return StructField(name, dtype, nullable)  # type: ignore[arg-type]


# Driver-built: one row per (brokerName, group, topic, queueId) the report covers; committedOffset
# is -1 when the offset table holds no value for that queue. hashes is null without a
# subscription for (group, topic) and empty when the subscription is "*".
CONSUMER_QUEUES = StructType(
    [
        _f("brokerName", StringType()),
        _f("group", StringType()),
        _f("topic", StringType()),
        _f("queueId", IntegerType()),
        _f("committedOffset", LongType()),
        _f("matchAll", BooleanType(), True),
        _f("hashes", ArrayType(IntegerType(), False), True),
    ]
)

# One ConsumeQueue file: where it belongs and its bytes. fileStart is the queue index of its
# first slot (the 20-digit file name / 20); path is the URI Spark listed.
CQ_FILES = StructType(
    [
        _f("brokerName", StringType()),
        _f("topic", StringType()),
        _f("queueId", IntegerType()),
        _f("fileStart", LongType()),
        _f("path", StringType()),
        _f("content", BinaryType(), True),  # null when executors read the file themselves (direct)
    ]
)

# The consumers of one queue, folded into one array so each CQ file is scanned once for all groups.
QUEUE_CONSUMERS = StructType(
    [
        _f("brokerName", StringType()),
        _f("topic", StringType()),
        _f("queueId", IntegerType()),
        _f(
            "consumers",
            ArrayType(
                StructType(
                    [
                        _f("group", StringType()),
                        _f("committedOffset", LongType()),
                        _f("matchAll", BooleanType(), True),
                        _f("hashes", ArrayType(IntegerType(), False), True),
                    ]
                ),
                False,
            ),
        ),
    ]
)

# Output of the per-file kernel pass: one row per (CQ file, consuming group). Indexes are queue
# offsets; store times are read from the commit log for the (at most two) entries of interest.
SCAN = StructType(
    [
        _f("brokerName", StringType()),
        _f("topic", StringType()),
        _f("queueId", IntegerType()),
        _f("group", StringType()),
        _f("fileStart", LongType()),
        _f("validEnd", LongType()),  # one past the file's last valid entry
        _f("liveStart", LongType(), True),  # first entry still in the commit log, null if none here
        _f("matched", LongType(), True),  # unconsumed tag matches here; null: no subscription
        _f("lastTimestamp", LongType(), True),  # entry consumerOffset-1, if in this file and live
        _f("oldestIndex", LongType(), True),  # first live entry >= consumerOffset in this file
        _f("oldestTimestamp", LongType(), True),
    ]
)

# The dataset lagReport writes: one row per (group, topic, brokerName, queueId).
LAG_REPORT = StructType(
    [
        _f("group", StringType()),
        _f("topic", StringType()),
        _f("brokerName", StringType()),
        _f("queueId", IntegerType()),
        _f("minOffset", LongType()),
        _f("brokerOffset", LongType()),
        _f("consumerOffset", LongType()),
        _f("diff", LongType()),
        _f("matchedDiff", LongType(), True),
        _f("lastTimestamp", LongType()),
        _f("oldestUnconsumedTimestamp", LongType()),
        _f("lagMs", LongType()),
        _f("noCommittedOffset", BooleanType()),
        _f("belowMin", BooleanType()),
        _f("aboveMax", BooleanType()),
    ]
)
