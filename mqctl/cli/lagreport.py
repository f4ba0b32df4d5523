"""mqctl lagReport — consumerProgress for every group of every broker, as a Spark dataset."""

from __future__ import annotations

import sys
import time
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from mqctl.cli.errors import handle_errors, warn
from mqctl.cli.options import OutputFormat, OutputOpt, StoreOpt, parse_store_specs, resolve_format
from mqctl.errors import NotAvailableError, UsageError

HELP = """Fleet-wide lag as a dataset, computed by Apache Spark: one row per (group, topic, broker,
queue) with minOffset, brokerOffset, consumerOffset, diff, matchedDiff, lastTimestamp,
oldestUnconsumedTimestamp, lagMs and the noCommittedOffset / belowMin / aboveMax flags — the
numbers consumerProgress prints, for every group in the offset tables at once.

--out DIR writes the dataset (parquet, json lines or csv part files); the top N groups by
diff total are printed. Needs the optional extra: pip install 'mqctl[spark]'.

mqadmin equivalent: none (mqadmin consumerProgress, once per group)."""

SCHEMA = "mqctl/lagReport/v1"
_TOP_COLUMNS = [
    "group",
    "diffTotal",
    "matchedDiffTotal",
    "maxLagMs",
    "queues",
    "queuesBelowMin",
    "queuesAboveMax",
]


class CqRead(str, Enum):
    spark = "spark"
    direct = "direct"


class DatasetFormat(str, Enum):
    parquet = "parquet"
    json = "json"
    csv = "csv"


def _spark_job() -> Any:
    """Import the Spark job, turning a missing extra into one line and exit 7 (not available)."""
    try:
        import pandas  # noqa: F401 - pyspark's Arrow path needs it; fail here, not in an executor
        import pyarrow  # noqa: F401

        from mqctl.pipeline import spark_job
    except ImportError as e:
        raise NotAvailableError(
            f"lagReport needs Apache Spark, but {e.name or 'pyspark'} is not installed",
            "pip install 'mqctl[spark]' (pyspark 4, pandas, pyarrow; Spark needs Java 17+)",
        ) from None
    return spark_job


def _start_session(spark_job: Any, master: str | None, driver_memory: str) -> tuple[Any, bool]:
    from pyspark.sql import SparkSession

    owned = SparkSession.getActiveSession() is None
    try:
        return spark_job.build_session(master, driver_memory=driver_memory), owned
    except Exception as e:  # PySparkRuntimeError JAVA_GATEWAY_EXITED and kin: no usable JVM
        raise NotAvailableError(
            f"cannot start Spark ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else 'no detail'})",
            "Spark needs Java 17+ on PATH or JAVA_HOME; check --master",
        ) from None


def _fmt_ms(ms: int | None) -> str:
    if not ms:
        return "-"
    s = ms // 1000
    if s < 60:
        return f"{ms / 1000:.1f}s"
    h, rem = divmod(s, 3600)
    return f"{h}h{rem // 60:02d}m" if h else f"{rem // 60}m{rem % 60:02d}s"


@handle_errors
def lag_report(
    store: StoreOpt = None,
    subscriptions: Annotated[
        Path | None,
        typer.Option(
            "--subscriptions",
            metavar="FILE",
            help="JSON or TOML (*.toml) {group: {topic: 'TagA || TagB'}}: adds matchedDiff, the exact "
            "count of unconsumed messages whose tag hash matches. Without it matchedDiff is null.",
            show_default=False,
        ),
    ] = None,
    master: Annotated[
        str | None,
        typer.Option(
            "--master",
            metavar="URL",
            help="Spark master URL: local[*] (default), local[N], spark://HOST:7077, yarn. "
            "Under spark-submit the submitted master is used.",
            show_default=False,
        ),
    ] = None,
    driver_memory: Annotated[
        str, typer.Option("--driver-memory", metavar="SIZE", help="Driver memory when mqctl starts Spark.")
    ] = "1g",
    out: Annotated[
        str | None,
        typer.Option(
            "--out", metavar="DIR", help="Write the dataset here (any path Spark writes).", show_default=False
        ),
    ] = None,
    dataset_format: Annotated[
        DatasetFormat, typer.Option("--format", help="Dataset format under --out.", case_sensitive=False)
    ] = DatasetFormat.parquet,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing --out directory.")
    ] = False,
    cq_read: Annotated[
        CqRead,
        typer.Option(
            "--cq-read",
            help="spark: CQ bytes are read by Spark (binaryFile, any Hadoop path). direct: Spark lists "
            "the files and executors read them from a local or shared filesystem (faster; the commit-log "
            "lookups need that access anyway).",
            case_sensitive=False,
        ),
    ] = CqRead.spark,
    top: Annotated[int, typer.Option("--top", metavar="N", help="Groups to print, by diff total.")] = 20,
    output: OutputOpt = None,
    now_ms: Annotated[int | None, typer.Option("--now-ms", hidden=True)] = None,
) -> None:
    from mqctl.pipeline.inputs import consumer_queues, load_broker_input, load_subscriptions

    if not store:
        raise UsageError("lagReport needs at least one --store NAME=PATH")
    if top < 0:
        raise UsageError("--top must be >= 0")
    stores = parse_store_specs(store)
    fmt = resolve_format(output)
    spark_job = _spark_job()
    subs = load_subscriptions(subscriptions) if subscriptions is not None else None
    brokers = [load_broker_input(name, root) for name, root in stores.items()]
    for b in brokers:
        for w in b.warnings:
            warn(w)
    rows = consumer_queues(brokers, subs)
    now = int(time.time() * 1000) if now_ms is None else now_ms

    spark, owned = _start_session(spark_job, master, driver_memory)
    try:
        report = spark_job.run_lag_report(spark, brokers, rows, now, direct=cq_read is CqRead.direct).cache()
        if out is not None:
            spark_job.write_report(report, out, dataset_format.value, overwrite=overwrite)
        top_rows = [r.asDict() for r in spark_job.top_groups_df(report, top).collect()] if top else []
        report.unpersist()
    finally:
        if owned:
            spark.stop()

    stdout = sys.stdout
    if fmt is OutputFormat.json:
        from mqctl.render.jsonout import write_json

        doc = {
            "schema": SCHEMA,
            "out": out,
            "format": dataset_format.value if out else None,
            "rows": len(rows),
        }
        write_json({**doc, "nowMs": now, "top": [{k: r[k] for k in _TOP_COLUMNS} for r in top_rows]}, stdout)
    elif fmt is OutputFormat.csv:
        from mqctl.render.csvout import write_csv

        write_csv(_TOP_COLUMNS, [[r[k] for k in _TOP_COLUMNS] for r in top_rows], stdout)
    else:
        from mqctl.render.table import Column, TableSpec, write_table

        spec = TableSpec(
            columns=[
                Column("#Group"),
                Column("#Diff Total", "right"),
                Column("#Matched", "right"),
                Column("#Max Lag", "right"),
                Column("#Queues", "right"),
                Column("#Below Min", "right"),
                Column("#Above Max", "right"),
            ],
            rows=[
                [
                    r["group"],
                    r["diffTotal"],
                    "-" if r["matchedDiffTotal"] is None else r["matchedDiffTotal"],
                    _fmt_ms(r["maxLagMs"]),
                    r["queues"],
                    r["queuesBelowMin"],
                    r["queuesAboveMax"],
                ]
                for r in top_rows
            ],
            footer_lines=[
                f"{len(rows)} queue rows" + (f" written to {out} ({dataset_format.value})" if out else "")
            ],
        )
        write_table(spec, stdout)
    stdout.flush()


lag_report.__doc__ = HELP
