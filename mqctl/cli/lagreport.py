"""mqctl lagReport — consumerProgress for every group of every broker, as a Spark dataset."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer

from mqctl.cli.errors import debug_enabled, handle_errors, warn
from mqctl.cli.options import OutputFormat, OutputOpt, StoreOpt, parse_store_specs, resolve_format
from mqctl.errors import MqctlError, NotAvailableError, UsageError

if TYPE_CHECKING:
    from mqctl.pipeline.inputs import BrokerInput, ConsumerQueue

HELP = """Fleet-wide lag as a dataset, computed by Apache Spark: one row per (group, topic, broker,
queue) with minOffset, brokerOffset, consumerOffset, diff, matchedDiff, lastTimestamp,
oldestUnconsumedTimestamp, lagMs and the noCommittedOffset / belowMin / aboveMax flags — the
numbers consumerProgress prints, for every group in the offset tables at once.

--out DIR writes the dataset (parquet, json lines or csv part files); the top N groups by
diff total are printed. Needs the optional extra: pip install 'mqctl[spark]'.

When mqctl starts Spark itself, Spark's own log goes to a file (named on stderr, under
$XDG_STATE_HOME/mqctl/spark/ or ~/.local/state/mqctl/spark/) and a terminal shows progress;
--verbose leaves Spark's log on stderr. With a local master the Python workers run the
interpreter mqctl runs in, unless PYSPARK_PYTHON or spark.pyspark.python names one.

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


@dataclass(frozen=True)
class _Job:
    brokers: Sequence[BrokerInput]
    rows: Sequence[ConsumerQueue]
    now: int
    direct: bool
    out: str | None
    dataset_format: str
    overwrite: bool
    top: int


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


def _start_session(session: Any, master: str | None, driver_memory: str, log_file: Path | None) -> Any:
    try:
        return session.build_session(master, driver_memory=driver_memory, log_file=log_file)
    except Exception as e:  # PySparkRuntimeError JAVA_GATEWAY_EXITED and kin: no usable JVM
        first = str(e).strip().splitlines()[0] if str(e).strip() else "no detail"
        why = session.startup_failure(log_file)  # the JVM's own reason, when it wrote one
        raise NotAvailableError(
            f"cannot start Spark: {why}" if why else f"cannot start Spark ({type(e).__name__}: {first})",
            "Spark needs Java 17+ on PATH or JAVA_HOME; check --master"
            + (f"; Spark's log: {log_file}" if log_file is not None else ""),
        ) from None


def _run_job(
    spark_job: Any,
    spark: Any,
    job: _Job,
    progress: Any,
) -> list[dict[str, Any]]:
    """The Spark part: the report, the dataset under --out, the top groups (collected)."""
    progress.phase("listing ConsumeQueue files")
    report = spark_job.run_lag_report(spark, job.brokers, job.rows, job.now, direct=job.direct).cache()
    if job.out is not None:
        progress.phase(f"scanning, writing {job.out}")
        spark_job.write_report(report, job.out, job.dataset_format, overwrite=job.overwrite)
    top_rows: list[dict[str, Any]] = []
    if job.top:
        progress.phase("ranking groups" if job.out is not None else "scanning")
        top_rows = [r.asDict() for r in spark_job.top_groups_df(report, job.top).collect()]
    report.unpersist()
    return top_rows


def _run_spark(
    spark_job: Any, job: _Job, master: str | None, driver_memory: str, *, verbose: bool
) -> list[dict[str, Any]]:
    """Start Spark (its log to a file unless --verbose), run the job with progress, stop Spark."""
    from mqctl.pipeline import session

    log_file = None
    if not verbose and session.launches_jvm():
        try:
            log_file = session.new_log_file()
        except OSError as e:
            warn(f"{e}; Spark logs to stderr")
    if log_file is not None:
        sys.stderr.write(f"Spark log: {log_file}\n")
        sys.stderr.flush()
    owned = not session.has_active_session()
    # Progress only when Spark's log is not on stderr too (--verbose, spark-submit: it is).
    with session.Progress(sys.stderr, enabled=log_file is not None) as progress:
        spark = _start_session(session, master, driver_memory, log_file)
        progress.attach(spark.sparkContext)
        try:
            return _run_job(spark_job, spark, job, progress)
        except MqctlError:
            raise
        except Exception as e:  # Spark's and the workers' failures: one line, and where the log is
            if debug_enabled():
                raise
            log_hint = f"Spark's log: {log_file}" if log_file else None
            raise session.job_error(e, log_hint, spark.sparkContext.pythonExec) from None
        finally:
            progress.attach(None)
            if owned:
                spark.stop()


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
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            help="Leave Spark's own log (and the JVM's start-up output) on stderr instead of "
            "writing it to a log file; no progress line.",
        ),
    ] = False,
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
    job = _Job(brokers, rows, now, cq_read is CqRead.direct, out, dataset_format.value, overwrite, top)

    top_rows = _run_spark(spark_job, job, master, driver_memory, verbose=verbose)
    _render(fmt, top_rows, job, sys.stdout)


def _render(fmt: OutputFormat, top_rows: list[dict[str, Any]], job: _Job, stdout: TextIO) -> None:
    from mqctl.render.plain import format_duration_ms

    out = job.out
    if fmt is OutputFormat.json:
        from mqctl.render.jsonout import write_json

        doc = {
            "schema": SCHEMA,
            "out": out,
            "format": job.dataset_format if out else None,
            "rows": len(job.rows),
        }
        write_json(
            {**doc, "nowMs": job.now, "top": [{k: r[k] for k in _TOP_COLUMNS} for r in top_rows]}, stdout
        )
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
                    format_duration_ms(r["maxLagMs"]) if r["maxLagMs"] else "-",
                    r["queues"],
                    r["queuesBelowMin"],
                    r["queuesAboveMax"],
                ]
                for r in top_rows
            ],
            footer_lines=[
                f"{len(job.rows)} queue rows" + (f" written to {out} ({job.dataset_format})" if out else "")
            ],
        )
        write_table(spec, stdout)
    stdout.flush()


lag_report.__doc__ = HELP
