"""The lagReport dataset's schemas, declared once.

Only the Spark job imports this module (it imports pyspark at the top): every DataFrame the job
builds or receives from a Python function is checked against one of these.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from mqctl.model import STATUSES

__all__ = [
    "CQ_FILES",
    "GROUP_STATUS",
    "HISTORY",
    "LAG_REPORT",
    "LIVE_QUEUES",
    "QUEUE_CONSUMERS",
    "QUEUE_STATUS",
    "SCAN",
    "SCAN_INPUT",
]


def _f(name: str, dtype: object, nullable: bool = False) -> StructField:
    return StructField(name, dtype, nullable)  # type: ignore[arg-type]


# One ConsumeQueue file: where it belongs and its bytes. fileStart is the queue index of its
# first slot (the 20-digit file name / 20); path is the URI Spark listed, or (direct) the local
# path the driver found.
CQ_FILES = StructType(
    [
        _f("brokerName", StringType()),
        _f("topic", StringType()),
        _f("queueId", IntegerType()),
        _f("fileStart", LongType()),
        _f("path", StringType(), True),  # null: a queue's placeholder (see SCAN_INPUT)
        _f("content", BinaryType(), True),  # null when executors read the file themselves (direct)
    ]
)

# The consumers of one queue, folded into one array so each CQ file is scanned once for all groups.
# committedOffset is -1 when the offset table holds no value for the queue; hashes is null without
# a subscription for (group, topic) and empty when the subscription is "*".
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

# What the scan reads: a CQ file (or a queue's placeholder: fileStart -1, no path, no content)
# with the consumers of its queue.
SCAN_INPUT = StructType([*CQ_FILES.fields, QUEUE_CONSUMERS["consumers"]])

# Output of the per-file kernel pass: one row per (CQ file, consuming group). Indexes are queue
# offsets; store times are read from the commit log for the (at most two) entries of interest.
SCAN = StructType(
    [
        _f("brokerName", StringType()),
        _f("topic", StringType()),
        _f("queueId", IntegerType()),
        _f("group", StringType()),
        _f("committedOffset", LongType()),  # the consumer's, carried to the report
        _f("matchAll", BooleanType(), True),
        _f("fileStart", LongType()),  # -1: the queue's placeholder (validEnd 0, nothing else)
        _f("validEnd", LongType()),  # one past the file's last valid entry
        _f("liveStart", LongType(), True),  # first entry still in the commit log, null if none here
        _f("matched", LongType(), True),  # unconsumed tag matches here; null: no subscription
        _f("lastTimestamp", LongType(), True),  # entry consumerOffset-1, if in this file and live
        _f("oldestIndex", LongType(), True),  # first live entry >= consumerOffset in this file
        _f("oldestTimestamp", LongType(), True),
    ]
)

# The key of every per-(group, queue) schema below.
_GROUP_QUEUE = [
    _f("group", StringType()),
    _f("topic", StringType()),
    _f("brokerName", StringType()),
    _f("queueId", IntegerType()),
]

# The dataset lagReport writes: one row per (group, topic, brokerName, queueId), from stores or a
# live cluster (-n). Declared once for both, and for the history (HISTORY adds the sample time):
# - minOffset is null live when the broker did not answer GET_TOPIC_STATS_INFO for the topic;
# - matchedDiff is null without --subscriptions, and always live (see lagreport_live);
# - oldestUnconsumedTimestamp and lagMs are null live without --lag-time, and on a store where the
#   commit log is damaged (the record cannot be read: unknown, never 0);
# - noCommittedOffset (and belowMin / aboveMax) is null live when the broker's offset table
#   could not be read (the consume stats alone cannot tell "no commit" from 0);
# - consumeTps, pullOffset and inflight are live only (null from stores; pullOffset is also null
#   from brokers before 5.1, which do not report it). consumeTps is the group's, on each row.
LAG_REPORT = StructType(
    [
        *_GROUP_QUEUE,
        _f("minOffset", LongType(), True),
        _f("brokerOffset", LongType()),
        _f("consumerOffset", LongType()),
        _f("diff", LongType()),
        _f("matchedDiff", LongType(), True),
        _f("lastTimestamp", LongType()),
        _f("oldestUnconsumedTimestamp", LongType(), True),
        _f("lagMs", LongType(), True),
        _f("noCommittedOffset", BooleanType(), True),
        _f("belowMin", BooleanType(), True),
        _f("aboveMax", BooleanType(), True),
        _f("consumeTps", DoubleType(), True),
        _f("pullOffset", LongType(), True),
        _f("inflight", LongType(), True),
    ]
)

# Driver-built from a live cluster's answers (lagreport_live): one row per (group, queue) of the
# consume stats. committed: the queue is in the broker's offset table (null: table not read);
# oldestUnconsumedTimestamp: store time of the first unconsumed message (0 none, null not asked).
LIVE_QUEUES = StructType(
    [
        *_GROUP_QUEUE,
        _f("minOffset", LongType(), True),
        _f("brokerOffset", LongType()),
        _f("consumerOffset", LongType()),
        _f("committed", BooleanType(), True),
        _f("lastTimestamp", LongType()),
        _f("pullOffset", LongType(), True),
        _f("oldestUnconsumedTimestamp", LongType(), True),
        _f("consumeTps", DoubleType(), True),
    ]
)

# The history dataset (--history DIR): every run's report rows with the run's time, partitioned
# by the UTC date and hour of sampleMs (directories date=YYYY-MM-DD/hour=HH). date and hour are
# strings so the directory names keep their zero padding.
HISTORY = StructType(
    [
        *LAG_REPORT.fields,
        _f("sampleMs", LongType()),
        _f("date", StringType()),
        _f("hour", StringType()),
    ]
)

# lagReport --status: one row per queue of the history's window, judged by consumerProgress
# --watch's rules (mqctl/ops/watch/rules.py). points/spanMs: the samples judged and the time they span;
# stale: the queue's broker did not answer its group's newest sample (last known values);
# the offsets and lag are the newest point's; rates are messages/s over the window (null with
# fewer than two points), drain one of model.D_* and drainS its seconds.
QUEUE_STATUS = StructType(
    [
        *_GROUP_QUEUE,
        _f("status", StringType()),
        _f("reason", StringType()),
        _f("points", IntegerType()),
        _f("spanMs", LongType()),
        _f("stale", BooleanType()),
        _f("sampleMs", LongType()),
        _f("brokerOffset", LongType()),
        _f("consumerOffset", LongType()),
        _f("pullOffset", LongType(), True),
        _f("lag", LongType()),
        _f("lagMs", LongType()),
        _f("consumeRate", DoubleType(), True),
        _f("produceRate", DoubleType(), True),
        _f("drain", StringType()),
        _f("drainS", DoubleType(), True),
    ]
)

# lagReport --status, rolled up per group: the worst queue's status, reason and queue ("topic
# broker queueId"), the number of queues per status (one column per status, lower case), stale
# queues, lag summed and the largest lag time, rates summed, the newest sample's time.
GROUP_STATUS = StructType(
    [
        _f("group", StringType()),
        _f("status", StringType()),
        _f("reason", StringType()),
        _f("worstQueue", StringType()),
        _f("queues", LongType()),
        *[_f(s.lower(), LongType()) for s in STATUSES],
        _f("stale", LongType()),
        _f("lag", LongType()),
        _f("maxLagMs", LongType()),
        _f("consumeRate", DoubleType(), True),
        _f("produceRate", DoubleType(), True),
        _f("sampleMs", LongType()),
    ]
)
