"""lagReport on Apache Spark: fleet-wide consumer lag as a dataset.

Shape: pure DataFrame -> DataFrame transforms over the schemas of ``spark_schemas``, and
``run_lag_report`` wiring them; the session (worker Python, Spark's log file, progress) is
``session.build_session``, re-exported here. Only ``mqctl lagReport`` imports this module, so
pyspark is imported at the top here and in ``session``, nowhere else. The live report is
``lagreport_live``, the history ``history``, the statuses ``lagreport_status``.

How the numbers match ``consumerProgress`` (ops/progress.py) while every ConsumeQueue file is
read exactly once:
- Each CQ file comes with the consumers of its queue (direct: attached on the driver, which lists
  the files; binaryFile: a broadcast join, no shuffle of the bytes), and one Python pass per file
  (lagreport_scan) computes, per consumer: the file's valid end, its first live entry (physical
  offset >= commit-log min, not filler), the tag matches in the unconsumed part, and the store
  times of the entries at consumerOffset-1 and at the first unconsumed offset.
- Physical offsets grow along a queue, so "first live entry >= consumerOffset" seen per file is
  exactly max(consumerOffset, minOffset) once the per-file results are folded per queue.
- Every queue also has a placeholder row, so a consumer of a queue without files still gets its
  row: the job is one scan stage and one small aggregation, with no join afterwards.
- The fold and the report's columns are one SQL statement: through the DataFrame API each column
  expression is a JVM round trip, a noticeable share of a warm run.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from mqctl.pipeline import spark_schemas as S
from mqctl.pipeline.session import build_session

if TYPE_CHECKING:
    import pyarrow as pa

    from mqctl.pipeline.inputs import BrokerInput, ConsumerQueue

__all__ = [
    "QUEUE_KEY",
    "build_session",
    "cq_files_df",
    "lag_report_df",
    "scan_input_df",
    "run_lag_report",
    "scan_df",
    "top_groups_df",
    "write_report",
]

QUEUE_KEY = ["brokerName", "topic", "queueId"]
_CQ_NAME = r"/consumequeue/([^/]+)/([0-9]+)/([0-9]{20})$"
# Off while lagReport resolves its CQ glob: see _load_cq_glob.
_SINK_METADATA_IGNORED = "spark.sql.streaming.fileStreamSink.ignoreMetadata"


# ---------------------------------------------------------------------------------------------
# inputs


def cq_files_df(
    spark: SparkSession, roots: Mapping[str, str], topics: Mapping[str, Sequence[str]]
) -> DataFrame:
    """Every ConsumeQueue file of the given topics read by Spark (binaryFile, any Hadoop path),
    one row per file with its bytes (CQ_FILES).

    ``roots`` maps broker name -> store root; ``topics`` broker name -> topic directories to
    read, so queues nobody consumes are never loaded. Commit-log segments are never loaded this
    way: binaryFile materialises whole files.
    """
    frames: list[DataFrame] = []
    for broker, root in roots.items():
        wanted = sorted(set(topics.get(broker, ())))
        if not wanted:
            continue
        # Hadoop globs take {a,b}; topic names are [%|a-zA-Z0-9_-]+ so none needs escaping.
        pattern = f"{root.rstrip('/')}/consumequeue/{{{','.join(wanted)}}}/*/[0-9]*"
        raw = _load_cq_glob(spark, pattern)
        if raw is None:
            continue
        frames.append(
            raw.select(
                F.lit(broker).alias("brokerName"),
                F.regexp_extract("path", _CQ_NAME, 1).alias("topic"),
                F.regexp_extract("path", _CQ_NAME, 2).cast("int").alias("queueId"),
                # integer division: names are byte offsets up to 20 digits, beyond a double's precision
                F.regexp_extract("path", _CQ_NAME, 3).cast("long").alias("fileByte"),
                F.col("path"),
                F.col("content"),
            )
            .where(F.col("topic") != "")
            .withColumn("fileStart", F.expr("fileByte div 20"))
        )
    if not frames:
        return spark.createDataFrame([], S.CQ_FILES)
    out = frames[0]
    for f in frames[1:]:
        out = out.unionByName(f)
    return out.select(*S.CQ_FILES.names)


def _load_cq_glob(spark: SparkSession, pattern: str) -> DataFrame | None:
    """binaryFile over one glob, resolved now; None when it matches no file (PATH_NOT_FOUND).

    A single load path makes Spark look for a streaming sink's ``_spark_metadata`` log under it
    (FileStreamSink.hasMetadata): it stats the glob text as if it were a directory, which fails,
    and logs a WARN with a FileNotFoundException stack trace. These are ConsumeQueue files, never
    a sink's output, so the look-up is switched off for this one resolution (the relation keeps
    its file listing; the setting is restored).
    """
    previous = spark.conf.get(_SINK_METADATA_IGNORED, None)
    spark.conf.set(_SINK_METADATA_IGNORED, "true")
    try:
        raw = spark.read.format("binaryFile").load(pattern)
        raw.schema  # noqa: B018 - resolving the relation is what raises PATH_NOT_FOUND
    except Exception as e:  # AnalysisException: no queue directory of these topics exists
        if "PATH_NOT_FOUND" in str(e) or "Path does not exist" in str(e):
            return None
        raise
    finally:
        if previous is None:
            spark.conf.unset(_SINK_METADATA_IGNORED)
        else:
            spark.conf.set(_SINK_METADATA_IGNORED, previous)
    return raw


# ---------------------------------------------------------------------------------------------
# transforms


def _consumers_by_queue(
    rows: Sequence[ConsumerQueue],
) -> dict[tuple[str, str, int], list[tuple[object, ...]]]:
    by_queue: dict[tuple[str, str, int], list[tuple[object, ...]]] = {}
    for r in rows:
        by_queue.setdefault((r.broker_name, r.topic, r.queue_id), []).append(
            (r.group, r.committed, None if r.sub is None else r.sub.match_all,
             None if r.sub is None else sorted(r.sub.hashes))
        )  # fmt: skip
    return by_queue


def scan_input_df(
    spark: SparkSession, roots: Mapping[str, str], rows: Sequence[ConsumerQueue], *, direct: bool
) -> DataFrame:
    """What the scan reads (SCAN_INPUT): each CQ file of the consumed queues with the consumers
    of its queue, plus one placeholder "file" per queue (fileStart -1, no path, no bytes) so that
    each consumer has a row even when its queue has no CQ file at all.

    ``direct``: the driver lists the files (a local or mounted filesystem), attaches the
    consumers and spreads the rows evenly over the executors, which map the files themselves:
    no binaryFile relation, no JVM -> Arrow copy of the bytes, no join. Otherwise Spark lists
    and reads the files and they are joined with the consumers (a broadcast driver-built table,
    so the bytes stay where they were read).
    """
    by_queue = _consumers_by_queue(rows)
    topics: dict[str, set[str]] = {}
    for broker, topic, _q in by_queue:
        topics.setdefault(broker, set()).add(topic)
    placeholders = [(*k, -1, None, None, v) for k, v in by_queue.items()]
    if direct:
        from mqctl.pipeline.inputs import list_cq_files

        found = [f for b, root in roots.items() for f in list_cq_files(b, root, topics.get(b, ()))]
        data = [
            (f.broker_name, f.topic, f.queue_id, f.file_start, f.path, None, by_queue[k])
            for f in found
            if (k := (f.broker_name, f.topic, f.queue_id)) in by_queue
        ]
        return spark.createDataFrame(data + placeholders, S.SCAN_INPUT)
    files = cq_files_df(spark, roots, {b: sorted(t) for b, t in topics.items()})
    consumers = spark.createDataFrame([(*k, v) for k, v in by_queue.items()], S.QUEUE_CONSUMERS)
    joined = files.join(F.broadcast(consumers), QUEUE_KEY, "inner")
    extra = spark.createDataFrame(placeholders, S.SCAN_INPUT).coalesce(1)
    return joined.select(*S.SCAN_INPUT.names).unionByName(extra)


def scan_df(
    scan_input: DataFrame, commitlog_min: Mapping[str, int], commitlog_dirs: Mapping[str, Sequence[str]]
) -> DataFrame:
    """One kernel pass per CQ file for all consumers of its queue (SCAN). The store times of the
    entries at consumerOffset-1 and at the first unconsumed offset are read in the same pass (a
    few bytes from the commit log per file and group, on the executor)."""
    cl_min = dict(commitlog_min)
    dirs = {k: list(v) for k, v in commitlog_dirs.items()}

    def scan(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from mqctl.pipeline.lagreport_scan import scan_batches

        return scan_batches(batches, cl_min, dirs)

    return scan_input.mapInArrow(scan, S.SCAN)


# The fold of SCAN per (queue, group) and the report's columns, as one SQL statement: the same
# transform through the DataFrame API costs a JVM round trip per column expression (about a
# thousand for these two steps, a fifth of a warm run on a small store).
_REPORT_SQL = """
SELECT `group`, topic, brokerName, queueId,
       coalesce(liveMin, brokerOffset) AS minOffset,
       brokerOffset,
       greatest(committedOffset, 0) AS consumerOffset,
       brokerOffset - greatest(committedOffset, 0) AS diff,
       CASE WHEN matchAll IS NULL THEN CAST(NULL AS BIGINT) ELSE coalesce(matched, 0) END AS matchedDiff,
       greatest(coalesce(lastTimestamp, 0), 0) AS lastTimestamp,  -- unreadable (-2): 0, as the broker's N/A
       -- -2 (TIME_UNREADABLE): the commit log is damaged there: the time and the lag are unknown
       CASE WHEN oldest.oldestTimestamp = -2 THEN CAST(NULL AS BIGINT)
            ELSE coalesce(oldest.oldestTimestamp, 0) END AS oldestUnconsumedTimestamp,
       CASE WHEN oldest.oldestTimestamp = -2 THEN CAST(NULL AS BIGINT)
            WHEN oldest.oldestTimestamp > 0 THEN greatest({now} - oldest.oldestTimestamp, 0)
            ELSE CAST(0 AS BIGINT) END AS lagMs,
       committedOffset < 0 AS noCommittedOffset,
       committedOffset >= 0 AND committedOffset < coalesce(liveMin, brokerOffset) AS belowMin,
       committedOffset >= 0 AND committedOffset > brokerOffset AS aboveMax,
       CAST(NULL AS DOUBLE) AS consumeTps,  -- live only: a store knows no consume TPS,
       CAST(NULL AS BIGINT) AS pullOffset,  -- and no pull offsets
       CAST(NULL AS BIGINT) AS inflight
FROM (
    SELECT brokerName, topic, queueId, `group`,
           max(committedOffset) AS committedOffset,  -- the same on every row of a key
           max(matchAll) AS matchAll,
           -- max offset comes from the last file only (an empty new file means max = its start;
           -- without any file, the placeholder's 0)
           max_by(validEnd, fileStart) AS brokerOffset,
           min(liveStart) AS liveMin,  -- first live entry: min offset (none live: max)
           sum(matched) AS matched,
           max(lastTimestamp) AS lastTimestamp,  -- at most one file holds that entry
           min(CASE WHEN oldestIndex IS NOT NULL THEN struct(oldestIndex, oldestTimestamp) END) AS oldest
    FROM {scan}
    GROUP BY brokerName, topic, queueId, `group`
)
"""


def lag_report_df(scan: DataFrame, now_ms: int) -> DataFrame:
    """The report (LAG_REPORT) from the scan's rows: per (queue, group), the per-file results
    folded and consumerProgress's columns computed.

    Queues without any CQ file are empty (min = max = 0: the placeholder). A committed offset of
    -1 ("none") reads as 0, like the broker; belowMin / aboveMax only judge offsets that were
    really committed. matchedDiff is null without a subscription for (group, topic).
    """
    return scan.sparkSession.sql(_REPORT_SQL.replace("{now}", f"CAST({int(now_ms)} AS BIGINT)"), scan=scan)


def top_groups_df(report: DataFrame, n: int) -> DataFrame:
    """Groups ordered by total diff (then by the oldest unconsumed message), the first ``n``."""
    sql = f"""
        SELECT `group`, sum(diff) AS diffTotal, sum(matchedDiff) AS matchedDiffTotal,
               max(lagMs) AS maxLagMs, count(1) AS queues, size(collect_set(topic)) AS topics,
               sum(CAST(belowMin AS INT)) AS queuesBelowMin, sum(CAST(aboveMax AS INT)) AS queuesAboveMax
        FROM {{report}}
        GROUP BY `group`
        ORDER BY diffTotal DESC, maxLagMs DESC, `group`
        LIMIT {int(n)}
    """
    return report.sparkSession.sql(sql, report=report)


# ---------------------------------------------------------------------------------------------
# the job


def run_lag_report(
    spark: SparkSession,
    brokers: Sequence[BrokerInput],
    rows: Sequence[ConsumerQueue],
    now_ms: int,
    *,
    direct: bool = False,
) -> DataFrame:
    """Wire the transforms: consumer queues + CQ files -> the report DataFrame (LAG_REPORT)."""
    scan_input = scan_input_df(spark, {b.broker_name: str(b.root) for b in brokers}, rows, direct=direct)
    scanned = scan_df(
        scan_input,
        {b.broker_name: b.commitlog_min for b in brokers},
        {b.broker_name: b.commitlog_dirs for b in brokers},
    )
    return lag_report_df(scanned, now_ms)


def write_report(report: DataFrame, out: str, fmt: str, *, overwrite: bool = False) -> None:
    """Write the dataset; json is Spark's JSON lines, with null matchedDiff kept as null."""
    writer = report.orderBy("group", "topic", "brokerName", "queueId").write.mode(
        "overwrite" if overwrite else "errorifexists"
    )
    if fmt == "json":
        writer = writer.option("ignoreNullFields", "false")
    elif fmt == "csv":
        writer = writer.option("header", "true")
    writer.format(fmt).save(out)
