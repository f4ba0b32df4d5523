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

from mqctl.pipeline import spark_schemas as S

if TYPE_CHECKING:
    from mqctl.pipeline.inputs import LiveSnapshot

__all__ = ["live_queues_df", "live_report_df", "live_rows", "run_live_report"]

# The session keeps Arrow batches small (CQ files are 6 MB rows); the live rows are small.
_BATCH = "spark.sql.execution.arrow.maxRecordsPerBatch"


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
    """The snapshot as a DataFrame (LIVE_QUEUES), sent to the JVM as Arrow columns (row objects
    cost seconds at 20,000 rows) in one batch per executor core."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    rows = live_rows(snap)
    schema = to_arrow_schema(S.LIVE_QUEUES)
    columns = list(zip(*rows)) if rows else [()] * len(schema)
    table = pa.Table.from_arrays([pa.array(c, type=t) for c, t in zip(columns, schema.types)], schema=schema)
    per_batch = max(1, -(-len(rows) // spark.sparkContext.defaultParallelism))
    previous = spark.conf.get(_BATCH, None)
    spark.conf.set(_BATCH, str(per_batch))  # read while the table is sent, below
    try:
        return spark.createDataFrame(table, S.LIVE_QUEUES)
    finally:
        if previous is None:
            spark.conf.unset(_BATCH)
        else:
            spark.conf.set(_BATCH, previous)


# consumerProgress's columns from the live rows, in one SQL statement (one JVM round trip).
_REPORT_SQL = """
SELECT `group`, topic, brokerName, queueId, minOffset, brokerOffset, consumerOffset,
       brokerOffset - consumerOffset AS diff,
       CAST(NULL AS BIGINT) AS matchedDiff,
       lastTimestamp,
       oldestUnconsumedTimestamp,
       CASE WHEN oldestUnconsumedTimestamp IS NULL THEN CAST(NULL AS BIGINT)
            WHEN oldestUnconsumedTimestamp > 0 THEN greatest({now} - oldestUnconsumedTimestamp, 0)
            ELSE CAST(0 AS BIGINT) END AS lagMs,
       NOT committed AS noCommittedOffset,
       -- like the store job: only an offset really committed is below min / above max
       committed AND consumerOffset < minOffset AS belowMin,
       committed AND consumerOffset > brokerOffset AS aboveMax,
       consumeTps,
       pullOffset,
       pullOffset - consumerOffset AS inflight
FROM {queues}
"""


def live_report_df(queues: DataFrame, now_ms: int) -> DataFrame:
    """LAG_REPORT from LIVE_QUEUES: consumerProgress's columns, the flags, the live-only ones."""
    sql = _REPORT_SQL.replace("{now}", f"CAST({int(now_ms)} AS BIGINT)")
    return queues.sparkSession.sql(sql, queues=queues)


def run_live_report(spark: SparkSession, snap: LiveSnapshot, now_ms: int) -> DataFrame:
    return live_report_df(live_queues_df(spark, snap), now_ms)
