"""lagReport on Apache Spark: fleet-wide consumer lag as a dataset.

Shape: pure DataFrame -> DataFrame transforms over the schemas of ``spark_schemas``, and
``run_lag_report`` wiring them; the session (worker Python, Spark's log file, progress) is
``session.build_session``, re-exported here. Only ``mqctl lagReport`` imports this module, so
pyspark is imported at the top here and in ``session``, nowhere else.

How the numbers match ``consumerProgress`` (ops/progress.py) while every ConsumeQueue file is
read exactly once, by Spark:
- Each CQ file is joined (broadcast, no shuffle of the bytes) with the consumers of its queue, and
  one Python pass per file computes, per consumer: the file's valid end, its first live entry
  (physical offset >= commit-log min, not filler), the tag matches in the unconsumed part, and
  the store times of the entries at consumerOffset-1 and at the first unconsumed offset.
- Physical offsets grow along a queue, so "first live entry >= consumerOffset" seen per file is
  exactly max(consumerOffset, minOffset) once the per-file results are folded per queue.
- Store times come from the same pass: a few bytes of the commit log per file and group
  (CommitLog on the executor), so the job is one scan stage and one small aggregation.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from mqctl.pipeline import spark_schemas as S
from mqctl.pipeline.session import build_session
from mqctl.store.consumequeue import first_live, valid_count

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from mqctl.pipeline.inputs import BrokerInput, ConsumerQueue

__all__ = [
    "QUEUE_KEY",
    "build_session",
    "consumer_queues_df",
    "cq_files_df",
    "lag_report_df",
    "queue_consumers_df",
    "queue_state_df",
    "run_lag_report",
    "scan_df",
    "top_groups_df",
    "write_report",
]

QUEUE_KEY = ["brokerName", "topic", "queueId"]
_CONSUMER_KEY = [*QUEUE_KEY, "group"]
_CQ_NAME = r"/consumequeue/([^/]+)/([0-9]+)/([0-9]{20})$"
# Off while lagReport resolves its CQ glob: see _load_cq_glob.
_SINK_METADATA_IGNORED = "spark.sql.streaming.fileStreamSink.ignoreMetadata"


# ---------------------------------------------------------------------------------------------
# inputs


def consumer_queues_df(spark: SparkSession, rows: Sequence[ConsumerQueue]) -> DataFrame:
    """The queues to report, from the driver-side offset tables (schema CONSUMER_QUEUES)."""
    data = [
        (
            r.broker_name,
            r.group,
            r.topic,
            r.queue_id,
            r.committed,
            None if r.sub is None else r.sub.match_all,
            None if r.sub is None else sorted(r.sub.hashes),
        )
        for r in rows
    ]
    return spark.createDataFrame(data, S.CONSUMER_QUEUES)


def cq_files_df(
    spark: SparkSession,
    roots: Mapping[str, str],
    topics: Mapping[str, Sequence[str]],
    *,
    direct: bool = False,
) -> DataFrame:
    """Every ConsumeQueue file of the given topics, one row per file with its bytes (CQ_FILES).

    ``roots`` maps broker name -> store root (any path Spark reads); ``topics`` broker name ->
    topic directories to read, so queues nobody consumes are never loaded. Commit-log segments
    are never loaded this way: binaryFile materialises whole files.

    ``direct``: Spark only lists the files (binaryFile prunes an unselected content column) and
    the executors read them from a local or shared filesystem, skipping the JVM -> Arrow copies.
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
                F.lit(None).cast("binary").alias("content") if direct else F.col("content"),
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


def queue_consumers_df(consumer_queues: DataFrame) -> DataFrame:
    """Fold the consumers of each queue into one array (QUEUE_CONSUMERS)."""
    return consumer_queues.groupBy(*QUEUE_KEY).agg(
        F.collect_list(F.struct("group", "committedOffset", "matchAll", "hashes")).alias("consumers")
    )


def scan_df(
    cq_files: DataFrame,
    queue_consumers: DataFrame,
    commitlog_min: Mapping[str, int],
    commitlog_dirs: Mapping[str, Sequence[str]],
) -> DataFrame:
    """One kernel pass per CQ file for all consumers of its queue (SCAN).

    The consumers table is small and broadcast, so the file bytes stay where they were read.
    The store times of the entries at consumerOffset-1 and at the first unconsumed offset are read
    in the same pass (a few bytes from the commit log per file and group, on the executor).
    """
    joined = cq_files.join(F.broadcast(queue_consumers), QUEUE_KEY, "inner")
    cl_min = dict(commitlog_min)
    dirs = {k: list(v) for k, v in commitlog_dirs.items()}

    def scan(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return _scan_batches(batches, cl_min, dirs)

    return joined.mapInArrow(scan, S.SCAN)


def queue_state_df(scan: DataFrame) -> DataFrame:
    """Fold the per-file results per (queue, group): broker/min offsets, matches, store times."""
    oldest = F.when(F.col("oldestIndex").isNotNull(), F.struct("oldestIndex", "oldestTimestamp"))
    agg = scan.groupBy(*_CONSUMER_KEY).agg(
        # max offset comes from the last file only (an empty new file means max = its start).
        F.max_by("validEnd", "fileStart").alias("brokerOffset"),
        F.min("liveStart").alias("liveMin"),
        F.sum("matched").alias("matched"),
        F.max("lastTimestamp").alias("lastTimestamp"),  # at most one file holds that entry
        F.min(oldest).alias("oldest"),
    )
    return agg.select(
        *_CONSUMER_KEY,
        "brokerOffset",
        F.coalesce("liveMin", "brokerOffset").alias("minOffset"),
        "matched",
        "lastTimestamp",
        F.col("oldest.oldestTimestamp").alias("oldestUnconsumedTimestamp"),
    )


def lag_report_df(consumer_queues: DataFrame, state: DataFrame, now_ms: int) -> DataFrame:
    """The report (LAG_REPORT): consumerProgress's columns for every consumer queue.

    Queues without any CQ file are empty (min = max = 0). A committed offset of -1 ("none") reads
    as 0, like the broker; belowMin / aboveMax only judge offsets that were really committed.
    """
    j = consumer_queues.join(state, _CONSUMER_KEY, "left")
    committed = F.col("committedOffset")
    has_commit = committed >= 0
    consumer_offset = F.greatest(committed, F.lit(0))
    broker_offset = F.coalesce("brokerOffset", F.lit(0))
    min_offset = F.coalesce("minOffset", F.lit(0))
    oldest = F.coalesce("oldestUnconsumedTimestamp", F.lit(0))
    matched = F.when(F.col("matchAll").isNull(), F.lit(None).cast("long")).otherwise(
        F.coalesce("matched", F.lit(0))
    )
    return j.select(
        "group",
        "topic",
        "brokerName",
        "queueId",
        min_offset.alias("minOffset"),
        broker_offset.alias("brokerOffset"),
        consumer_offset.alias("consumerOffset"),
        (broker_offset - consumer_offset).alias("diff"),
        matched.alias("matchedDiff"),
        F.coalesce("lastTimestamp", F.lit(0)).alias("lastTimestamp"),
        oldest.alias("oldestUnconsumedTimestamp"),
        F.when(oldest > 0, F.greatest(F.lit(now_ms) - oldest, F.lit(0))).otherwise(F.lit(0)).alias("lagMs"),
        (~has_commit).alias("noCommittedOffset"),
        (has_commit & (committed < min_offset)).alias("belowMin"),
        (has_commit & (committed > broker_offset)).alias("aboveMax"),
        # live only: a store knows no consume TPS and no pull offsets
        F.lit(None).cast("double").alias("consumeTps"),
        F.lit(None).cast("long").alias("pullOffset"),
        F.lit(None).cast("long").alias("inflight"),
    )


def top_groups_df(report: DataFrame, n: int) -> DataFrame:
    """Groups ordered by total diff (then by the oldest unconsumed message), the first ``n``."""
    return (
        report.groupBy("group")
        .agg(
            F.sum("diff").alias("diffTotal"),
            F.sum("matchedDiff").alias("matchedDiffTotal"),
            F.max("lagMs").alias("maxLagMs"),
            F.count(F.lit(1)).alias("queues"),
            F.countDistinct("topic").alias("topics"),
            F.sum(F.col("belowMin").cast("int")).alias("queuesBelowMin"),
            F.sum(F.col("aboveMax").cast("int")).alias("queuesAboveMax"),
        )
        .orderBy(F.col("diffTotal").desc(), F.col("maxLagMs").desc(), F.col("group"))
        .limit(n)
    )


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
    consumers = consumer_queues_df(spark, rows)
    topics: dict[str, set[str]] = {}
    for r in rows:
        topics.setdefault(r.broker_name, set()).add(r.topic)
    files = cq_files_df(
        spark,
        {b.broker_name: str(b.root) for b in brokers},
        {k: sorted(v) for k, v in topics.items()},
        direct=direct,
    )
    scanned = scan_df(
        files,
        queue_consumers_df(consumers),
        {b.broker_name: b.commitlog_min for b in brokers},
        {b.broker_name: b.commitlog_dirs for b in brokers},
    )
    state = queue_state_df(scanned)
    return lag_report_df(consumers, state, now_ms)


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


# ---------------------------------------------------------------------------------------------
# executor side (plain Python over Arrow batches)


def _arrow_schema(schema: object) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema)  # type: ignore[arg-type]


def _read_local(uri: str) -> np.ndarray:
    """A CQ file Spark listed, read straight from the filesystem (direct mode)."""
    import numpy as np

    from mqctl.errors import StoreError
    from mqctl.store.consumequeue import CQ_DTYPE, CQ_UNIT

    if uri.startswith("file://"):
        local = uri[len("file://") :]
    elif uri.startswith("file:"):
        local = uri[len("file:") :]
    elif "://" not in uri and ":" not in uri.split("/", 1)[0]:
        local = uri
    else:
        raise StoreError(
            f"direct CQ reads need a local or mounted path, got {uri}", hint="drop --cq-read direct"
        )
    with open(local, "rb") as f:
        data = f.read()
    return np.frombuffer(data, dtype=CQ_DTYPE, count=len(data) // CQ_UNIT)


def _scan_batches(
    batches: Iterator[pa.RecordBatch], cl_min: Mapping[str, int], commitlog_dirs: Mapping[str, Sequence[str]]
) -> Iterator[pa.RecordBatch]:
    from pathlib import Path

    import numpy as np
    import pyarrow as pa

    from mqctl.store.commitlog import CommitLog
    from mqctl.store.consumequeue import CQ_DTYPE, CQ_UNIT
    from mqctl.store.scan import count_tag_matches

    schema = _arrow_schema(S.SCAN)
    logs: dict[str, CommitLog] = {}

    def stamp(broker: str, phys: int, size: int) -> int:
        log = logs.get(broker)
        if log is None:
            log = logs[broker] = CommitLog([Path(d) for d in commitlog_dirs[broker]])
        ts = log.store_timestamp(phys, size)
        return ts if ts > 0 else 0  # -1: the message is gone; consumerProgress shows 0

    try:
        for batch in batches:
            out: dict[str, list[object]] = {name: [] for name in S.SCAN.names}
            brokers = batch.column("brokerName").to_pylist()
            topics = batch.column("topic").to_pylist()
            qids = batch.column("queueId").to_pylist()
            starts = batch.column("fileStart").to_pylist()
            paths = batch.column("path").to_pylist()
            contents = batch.column("content")
            consumers = batch.column("consumers").to_pylist()
            for i in range(batch.num_rows):
                if contents[i].is_valid:
                    buf = contents[i].as_buffer()  # zero-copy view of the Arrow bytes
                    entries = np.frombuffer(buf, dtype=CQ_DTYPE, count=len(buf) // CQ_UNIT)
                else:
                    entries = _read_local(paths[i])
                phys, size = entries["phys"], entries["size"]
                valid = valid_count(phys, size)
                live = first_live(phys, size, valid, cl_min.get(brokers[i], 0))
                fs = starts[i]
                for c in consumers[i]:
                    co = max(c["committedOffset"], 0)
                    lo = max(co - fs, live)
                    matched: int | None = None
                    if c["matchAll"] is not None:
                        if lo >= valid:
                            matched = 0
                        elif c["matchAll"]:
                            matched = valid - lo
                        else:
                            matched = count_tag_matches(entries[lo:valid], c["hashes"])
                    j = co - 1 - fs
                    out["brokerName"].append(brokers[i])
                    out["topic"].append(topics[i])
                    out["queueId"].append(qids[i])
                    out["group"].append(c["group"])
                    out["fileStart"].append(fs)
                    out["validEnd"].append(fs + valid)
                    out["liveStart"].append(fs + live if live < valid else None)
                    out["matched"].append(matched)
                    out["lastTimestamp"].append(
                        stamp(brokers[i], int(phys[j]), int(size[j])) if live <= j < valid else None
                    )
                    out["oldestIndex"].append(fs + lo if lo < valid else None)
                    out["oldestTimestamp"].append(
                        stamp(brokers[i], int(phys[lo]), int(size[lo])) if lo < valid else None
                    )
            yield pa.RecordBatch.from_pydict(out, schema=schema)
    finally:
        for log in logs.values():
            log.close()
