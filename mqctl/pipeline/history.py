"""The lagReport history: every run's rows appended to one Parquet dataset (--history DIR).

Layout: ``DIR/date=YYYY-MM-DD/hour=HH/part-*.parquet``, the UTC date and hour of the run's
``sampleMs`` (one value per run: the time the run started). The schema is declared once
(spark_schemas.HISTORY) and imposed on both sides: appended rows are cast to it, readers pass
it instead of inferring one, so runs from stores and from live clusters (whose nullable columns
differ) read back as one table. Each run adds one file (its rows are few: coalesced to one
task), so a cron run every minute makes 60 files per hour partition.

Concurrent appends: Spark's file committer stages a job under ``DIR/_temporary`` and removes it
at commit, so two jobs appending to one directory at once can lose each other's files. On a
local or mounted filesystem an exclusive lock (``DIR/_lagreport.lock``, ignored by readers as
every ``_`` name is) serialises appends; on a Hadoop URI, runs must not overlap.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from mqctl.pipeline import spark_schemas as S
from mqctl.pipeline.inputs import check_history_source, local_path

__all__ = ["append_history", "history_df", "local_dir", "partition_of", "read_history"]

LOCK_NAME = "_lagreport.lock"
PARTITIONS = ["date", "hour"]


def partition_of(sample_ms: int) -> tuple[str, str]:
    """(date, hour) of a sample time, UTC: ("2026-01-01", "07")."""
    t = time.gmtime(sample_ms // 1000)
    return time.strftime("%Y-%m-%d", t), time.strftime("%H", t)


def local_dir(path: str) -> Path | None:
    """The local directory a dataset path names (file: URIs and plain paths), else None."""
    local = local_path(path)
    return None if local is None else Path(local)


def history_df(report: DataFrame, sample_ms: int) -> DataFrame:
    """The report's rows as history rows (HISTORY): the declared types, the run's time."""
    date, hour = partition_of(sample_ms)
    extra = {"sampleMs": F.lit(sample_ms), "date": F.lit(date), "hour": F.lit(hour)}
    return report.select(
        *[
            (extra[f.name] if f.name in extra else F.col(f.name)).cast(f.dataType).alias(f.name)
            for f in S.HISTORY.fields
        ]
    )


@contextmanager
def _append_lock(path: str) -> Iterator[None]:
    local = local_dir(path)
    if local is None:
        yield
        return
    import fcntl

    local.mkdir(parents=True, exist_ok=True)
    fd = os.open(local / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def append_history(report: DataFrame, path: str, sample_ms: int) -> None:
    """Append the report's rows to the history at ``path`` (one file per run)."""
    rows = history_df(report, sample_ms).coalesce(1)
    with _append_lock(path):
        rows.write.mode("append").partitionBy(*PARTITIONS).parquet(path)


def read_history(
    spark: SparkSession, path: str, since_ms: int | None = None, until_ms: int | None = None
) -> DataFrame:
    """The history's rows (HISTORY) with since_ms <= sampleMs <= until_ms; the date partitions
    outside the range are never listed past their directory names."""
    check_history_source(path)
    df = spark.read.schema(S.HISTORY).parquet(path)
    if since_ms is not None:
        df = df.where((F.col("date") >= partition_of(since_ms)[0]) & (F.col("sampleMs") >= since_ms))
    if until_ms is not None:
        df = df.where((F.col("date") <= partition_of(until_ms)[0]) & (F.col("sampleMs") <= until_ms))
    return df
