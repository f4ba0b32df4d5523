"""mqctl lagReport — consumerProgress for every group of every broker, as a Spark dataset."""

from __future__ import annotations

import time
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from mqctl.cli.blocks import Flag, block, opt
from mqctl.cli.cluster import Cluster, cluster_options
from mqctl.cli.command import given
from mqctl.cli.errors import debug_enabled, handle_errors, warn
from mqctl.cli.output import Output, emit, output_options
from mqctl.errors import UsageError

if TYPE_CHECKING:
    from mqctl.errors import MqctlError
    from mqctl.model import LagReportSummary
    from mqctl.pipeline.lagreport import Dataset, SparkFlags

HELP = """Fleet-wide lag as a dataset, computed by Apache Spark: one row per (group, topic, broker,
queue) with minOffset, brokerOffset, consumerOffset, diff, matchedDiff, lastTimestamp,
oldestUnconsumedTimestamp, lagMs and the noCommittedOffset / belowMin / aboveMax flags — the
numbers consumerProgress prints, for every group at once — from store directories (-S) or a
live cluster (-n: plus consumeTps, pullOffset and inflight; matchedDiff is null, lag time only
with --lag-time).

--out DIR writes the dataset (parquet, json lines or csv part files); --history DIR appends
the rows with the run's time (sampleMs) to a Parquet dataset partitioned by date=/hour= (run it
from cron to build a history); --status --history DIR judges that history's last --window with
consumerProgress --watch's rules (OK, WARN, REWIND, STOP, STALL, STUCK) per queue and group.
The top N groups are printed. Needs the optional extra: pip install 'mqctl[spark]'.

When mqctl starts Spark itself, Spark's own log goes to a file (named on stderr, under
$XDG_STATE_HOME/mqctl/spark/ or ~/.local/state/mqctl/spark/) and a terminal shows progress;
--verbose leaves Spark's log on stderr. With a local master the Python workers run the
interpreter mqctl runs in, unless PYSPARK_PYTHON or spark.pyspark.python names one.

mqadmin equivalent: none (mqadmin consumerProgress, once per group)."""


class CqRead(str, Enum):
    auto = "auto"
    spark = "spark"
    direct = "direct"


class DatasetFormat(str, Enum):
    parquet = "parquet"
    json = "json"
    csv = "csv"


_SubscriptionsOpt = Annotated[
    Path | None,
    opt(
        "--subscriptions",
        metavar="FILE",
        help="Stores only: JSON or TOML (*.toml) {group: {topic: 'TagA || TagB'}}: adds matchedDiff, the "
        "exact count of unconsumed messages whose tag hash matches. Without it matchedDiff is null.",
    ),
]
_LagTimeOpt = Annotated[
    bool,
    opt(
        "--lag-time",
        help="Live (-n): also the store time of each lagging queue's oldest unconsumed message and "
        "lagMs (two more requests per lagging queue); null without. Stores always have them.",
    ),
]
_MasterOpt = Annotated[
    str | None,
    opt(
        "--master",
        metavar="URL",
        help="Spark master URL: local[*] (default), local[N], spark://HOST:7077, yarn. "
        "Under spark-submit the submitted master is used.",
    ),
]
_DriverMemoryOpt = Annotated[
    str,
    opt("--driver-memory", metavar="SIZE", help="Driver memory when mqctl starts Spark.", show_default=True),
]
_OutOpt = Annotated[
    str | None, opt("--out", metavar="DIR", help="Write the dataset here (any path Spark writes).")
]
_FormatOpt = Annotated[
    DatasetFormat,
    opt("--format", help="Dataset format under --out.", case_sensitive=False, show_default=True),
]
_OverwriteOpt = Annotated[bool, opt("--overwrite", help="Replace an existing --out directory.")]
_HistoryOpt = Annotated[
    str | None,
    opt(
        "--history",
        metavar="DIR",
        help="Append this run's rows, with its time (sampleMs), to the Parquet history dataset DIR "
        "(partitioned date=YYYY-MM-DD/hour=HH, UTC). Any path Spark writes.",
    ),
]
_StatusOpt = Annotated[
    bool,
    opt(
        "--status",
        help="Instead of a report: judge the --history DIR's samples of the last --window with "
        "consumerProgress --watch's rules, per queue and per group (worst queue wins): OK, WARN (lag "
        "grows), REWIND (committed offset went back), STOP (nothing moves while lag > 0), STALL "
        "(messages arrive, the committed offset does not move), STUCK (pulls advance, the committed "
        "offset does not: needs pull offsets, so histories of -n runs). --out writes the per-queue "
        "statuses; the worst --top groups are printed.",
    ),
]
_WindowOpt = Annotated[
    str,
    opt(
        "--window",
        metavar="DURATION",
        help="With --status: the span of history judged, ending now (15m, 1h, PT30M).",
        show_default=True,
    ),
]
_CqReadOpt = Annotated[
    CqRead,
    opt(
        "--cq-read",
        help="auto: direct when every store root is a local or mounted path, else spark. direct: the "
        "driver lists the CQ files and executors map them from the filesystem (fast; the commit-log "
        "lookups need that access anyway). spark: Spark lists and reads the bytes (binaryFile, any "
        "Hadoop path).",
        case_sensitive=False,
        show_default=True,
    ),
]
_TopOpt = Annotated[int, opt("--top", metavar="N", help="Groups to print, by diff total.", show_default=True)]
_VerboseOpt = Annotated[
    bool,
    opt(
        "--verbose",
        help="Leave Spark's own log (and the JVM's start-up output) on stderr instead of "
        "writing it to a log file; no progress line.",
    ),
]


def _spark_flags(master: str | None, driver_memory: str, verbose: bool) -> Any:
    from mqctl.pipeline.lagreport import SparkFlags

    return SparkFlags(master, driver_memory, verbose, debug_enabled())


spark_options = block(
    "spark",
    [
        Flag("master", _MasterOpt),
        Flag("driver_memory", _DriverMemoryOpt, "1g"),
        Flag("verbose", _VerboseOpt, False),
    ],
    _spark_flags,
)


@handle_errors
@output_options(arg="output")
@cluster_options(
    timeout=60.0, versioned=False
)  # a fleet-wide fetch: 1,000 groups took 4-25 s on 2 loaded cores
@spark_options
def lag_report(
    subscriptions: _SubscriptionsOpt = None,
    lag_time: _LagTimeOpt = False,
    history: _HistoryOpt = None,
    status: _StatusOpt = False,
    window: _WindowOpt = "15m",
    out: _OutOpt = None,
    dataset_format: _FormatOpt = DatasetFormat.parquet,
    overwrite: _OverwriteOpt = False,
    cq_read: _CqReadOpt = CqRead.auto,
    top: _TopOpt = 20,
    now_ms: Annotated[int | None, typer.Option("--now-ms", hidden=True)] = None,
    *,
    spark: Any,
    cluster: Cluster,
    output: Output,
) -> None:
    from mqctl.pipeline import lagreport as pipeline
    from mqctl.render import lagreport as render

    if top < 0:
        raise UsageError("--top must be >= 0")
    _check_idle(status, out, overwrite)
    now = int(time.time() * 1000) if now_ms is None else now_ms
    ds = pipeline.Dataset(now, out, dataset_format.value, overwrite, top, history)
    if status:
        summary = pipeline.status_report(
            _status_history(history, cluster), pipeline.window_ms(window), ds, spark, warn
        )
        return emit(output.fmt, render.status_views(summary))
    report, failure = _report(cluster, subscriptions, lag_time, cq_read, ds, spark)
    emit(output.fmt, render.report_views(report))
    if failure is not None:
        raise failure
    pipeline.check_times_readable(report)


def _check_idle(status: bool, out: str | None, overwrite: bool) -> None:
    """Flags that change nothing without the flag they belong to: said before Spark starts, not
    ignored after a job of minutes."""
    if given("window") and not status:
        raise UsageError("--window is the span --status judges; there is no --status")
    idle = [flag for flag, on in (("--format", given("dataset_format")), ("--overwrite", overwrite)) if on]
    if idle and out is None:
        verb = "apply" if len(idle) > 1 else "applies"
        raise UsageError(f"{' and '.join(idle)} {verb} to the dataset --out writes; there is no --out DIR")


def _report(
    cluster: Cluster,
    subscriptions: Path | None,
    lag_time: bool,
    cq_read: CqRead,
    ds: Dataset,
    spark: SparkFlags,
) -> tuple[LagReportSummary, MqctlError | None]:
    """The report from the stores (-S) or the live cluster (-n), and the brokers' failure live."""
    from mqctl.pipeline import lagreport as pipeline

    target = cluster.target()
    if target.kind.reads_files:
        return pipeline.store_report(target.stores, subscriptions, cq_read.value, ds, spark, warn), None
    if subscriptions is not None:
        raise UsageError(
            "--subscriptions needs stores: live, matchedDiff would read every unconsumed "
            "ConsumeQueue unit over the network",
            "per group: mqctl consumerProgress -n ... -g GROUP --tags EXPR",
        )
    with cluster.open() as backend:
        return pipeline.live_report(backend, lag_time, ds, spark, warn)


def _status_history(history: str | None, cluster: Cluster) -> str:
    if history is None:
        raise UsageError("--status needs --history DIR (the dataset lagReport --history runs build)")
    if cluster.store or cluster.namesrv:
        raise UsageError("--status reads only the --history dataset: drop -S/-n")
    return history


lag_report.__doc__ = HELP
