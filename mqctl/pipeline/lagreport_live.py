"""lagReport of a live cluster (-n): the driver's snapshot as the report's rows (LAG_REPORT).

Who fetches what: the CLI asks the cluster through the live backend on the driver (the overview's
GET_CONSUME_STATS for every group and broker, pipelined; GET_TOPIC_STATS_INFO per broker and
topic for min offsets; GET_ALL_CONSUMER_OFFSET per broker to tell "no commit" from 0; with
--lag-time the oldest unconsumed message's store time, two requests per lagging queue) and hands
a ``LiveSnapshot`` of model objects here. Spark turns it into rows with the same column rules as
the store job, spread over the executors.

The numbers are consumerProgress's (ops/progress.rows_from_stats): the first unconsumed offset
is max(consumerOffset, minOffset); lagMs is now - its store time, 0 when nothing is unconsumed or
the message is gone. matchedDiff is always null live: counting tag matches reads every
unconsumed ConsumeQueue unit over the network (consumerProgress -g G --tags does that per group).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from mqctl.pipeline import spark_schemas as S

if TYPE_CHECKING:
    from mqctl.pipeline.inputs import LiveSnapshot

__all__ = ["live_queues_df", "live_report_df", "live_rows", "run_live_report"]

# Rows per partition of the driver-built table: a few thousand rows are one task's worth.
_ROWS_PER_SLICE = 20_000


def live_rows(snap: LiveSnapshot) -> list[tuple[object, ...]]:
    """The snapshot flattened into LIVE_QUEUES tuples, one per (group, queue)."""
    rows: list[tuple[object, ...]] = []
    for ov in snap.overviews:
        if ov.stats is None:
            continue
        tps = ov.stats.consume_tps
        for q in ov.stats.queues:
            oldest: int | None = None
            if snap.oldest is not None:
                start = max(q.consumer_offset, q.min_offset or 0)
                oldest = snap.oldest.get((q.queue, start), 0) if start < q.broker_offset else 0
            mq = q.queue
            rows.append(
                (ov.ref.name, mq.topic, mq.broker_name, mq.queue_id, q.min_offset, q.broker_offset,
                 q.consumer_offset, q.committed, q.last_timestamp, q.pull_offset, oldest, tps)
            )  # fmt: skip
    return rows


def live_queues_df(spark: SparkSession, snap: LiveSnapshot) -> DataFrame:
    """The snapshot as a DataFrame (LIVE_QUEUES), sliced so every executor gets a share."""
    rows = live_rows(snap)
    slices = max(spark.sparkContext.defaultParallelism, -(-len(rows) // _ROWS_PER_SLICE))
    if not rows:
        return spark.createDataFrame([], S.LIVE_QUEUES)
    rdd = spark.sparkContext.parallelize(rows, min(slices, len(rows)))
    return spark.createDataFrame(rdd, S.LIVE_QUEUES)


def live_report_df(queues: DataFrame, now_ms: int) -> DataFrame:
    """LAG_REPORT from LIVE_QUEUES: consumerProgress's columns, the flags, the live-only ones."""
    committed = F.col("committed")
    co, bo, mn = F.col("consumerOffset"), F.col("brokerOffset"), F.col("minOffset")
    oldest = F.col("oldestUnconsumedTimestamp")
    lag = F.when(oldest.isNull(), F.lit(None).cast("long")).otherwise(
        F.when(oldest > 0, F.greatest(F.lit(now_ms) - oldest, F.lit(0))).otherwise(F.lit(0))
    )
    pull = F.col("pullOffset")
    return queues.select(
        "group",
        "topic",
        "brokerName",
        "queueId",
        mn.alias("minOffset"),
        bo.alias("brokerOffset"),
        co.alias("consumerOffset"),
        (bo - co).alias("diff"),
        F.lit(None).cast("long").alias("matchedDiff"),
        F.col("lastTimestamp"),
        oldest.alias("oldestUnconsumedTimestamp"),
        lag.cast("long").alias("lagMs"),
        (~committed).alias("noCommittedOffset"),
        # Like the store job: only an offset really committed is judged below min / above max.
        (committed & (co < mn)).alias("belowMin"),
        (committed & (co > bo)).alias("aboveMax"),
        F.col("consumeTps"),
        pull.alias("pullOffset"),
        F.when(pull.isNotNull(), pull - co).alias("inflight"),
    )


def run_live_report(spark: SparkSession, snap: LiveSnapshot, now_ms: int) -> DataFrame:
    return live_report_df(live_queues_df(spark, snap), now_ms)
