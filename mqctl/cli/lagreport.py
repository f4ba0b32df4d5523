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
from mqctl.cli.options import (
    AccessKeyOpt,
    LiveOptions,
    NamesrvOpt,
    OutputFormat,
    OutputOpt,
    ProfileOpt,
    SecretKeyOpt,
    StoreOpt,
    TimeoutOpt,
    TlsInsecureOpt,
    TlsOpt,
    backend_options,
    cluster_target,
    resolve_format,
)
from mqctl.errors import MqctlError, UsageError

if TYPE_CHECKING:
    from mqctl.model import BackendTarget
    from mqctl.pipeline.inputs import BrokerInput, ConsumerQueue, LiveSnapshot

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
    auto = "auto"
    spark = "spark"
    direct = "direct"


class DatasetFormat(str, Enum):
    parquet = "parquet"
    json = "json"
    csv = "csv"


def _opt(*names: str, metavar: str | None = None, **kw: Any) -> Any:
    return typer.Option(*names, metavar=metavar, show_default=kw.pop("show_default", False), **kw)


_SubscriptionsOpt = Annotated[
    Path | None,
    _opt(
        "--subscriptions",
        metavar="FILE",
        help="Stores only: JSON or TOML (*.toml) {group: {topic: 'TagA || TagB'}}: adds matchedDiff, the "
        "exact count of unconsumed messages whose tag hash matches. Without it matchedDiff is null.",
    ),
]
_LagTimeOpt = Annotated[
    bool,
    _opt(
        "--lag-time",
        help="Live (-n): also the store time of each lagging queue's oldest unconsumed message and "
        "lagMs (two more requests per lagging queue); null without. Stores always have them.",
    ),
]
_MasterOpt = Annotated[
    str | None,
    _opt(
        "--master",
        metavar="URL",
        help="Spark master URL: local[*] (default), local[N], spark://HOST:7077, yarn. "
        "Under spark-submit the submitted master is used.",
    ),
]
_DriverMemoryOpt = Annotated[
    str,
    _opt("--driver-memory", metavar="SIZE", help="Driver memory when mqctl starts Spark.", show_default=True),
]
_OutOpt = Annotated[
    str | None, _opt("--out", metavar="DIR", help="Write the dataset here (any path Spark writes).")
]
_FormatOpt = Annotated[
    DatasetFormat,
    _opt("--format", help="Dataset format under --out.", case_sensitive=False, show_default=True),
]
_OverwriteOpt = Annotated[bool, _opt("--overwrite", help="Replace an existing --out directory.")]
_HistoryOpt = Annotated[
    str | None,
    _opt(
        "--history",
        metavar="DIR",
        help="Append this run's rows, with its time (sampleMs), to the Parquet history dataset DIR "
        "(partitioned date=YYYY-MM-DD/hour=HH, UTC). Any path Spark writes.",
    ),
]
_StatusOpt = Annotated[
    bool,
    _opt(
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
    _opt(
        "--window",
        metavar="DURATION",
        help="With --status: the span of history judged, ending now (15m, 1h, PT30M).",
        show_default=True,
    ),
]
_CqReadOpt = Annotated[
    CqRead,
    _opt(
        "--cq-read",
        help="auto: direct when every store root is a local or mounted path, else spark. direct: the "
        "driver lists the CQ files and executors map them from the filesystem (fast; the commit-log "
        "lookups need that access anyway). spark: Spark lists and reads the bytes (binaryFile, any "
        "Hadoop path).",
        case_sensitive=False,
        show_default=True,
    ),
]
_TopOpt = Annotated[
    int, _opt("--top", metavar="N", help="Groups to print, by diff total.", show_default=True)
]
_VerboseOpt = Annotated[
    bool,
    _opt(
        "--verbose",
        help="Leave Spark's own log (and the JVM's start-up output) on stderr instead of "
        "writing it to a log file; no progress line.",
    ),
]


@dataclass(frozen=True)
class _Job:
    now: int
    rows: int  # queue rows the report covers
    out: str | None
    dataset_format: str
    overwrite: bool
    top: int
    history: str | None
    brokers: Sequence[BrokerInput] = ()  # stores
    queues: Sequence[ConsumerQueue] = ()
    direct: bool = False
    snapshot: LiveSnapshot | None = None  # live

    def report(self, spark_job: Any, spark: Any) -> Any:
        if self.snapshot is not None:
            from mqctl.pipeline.lagreport_live import run_live_report

            return run_live_report(spark, self.snapshot, self.now)
        return spark_job.run_lag_report(spark, self.brokers, self.queues, self.now, direct=self.direct)


def _run_job(spark_job: Any, job: _Job, spark: Any, progress: Any) -> list[dict[str, Any]]:
    """The Spark part: the report, the dataset under --out, the history, the top groups (collected)."""
    progress.phase("listing ConsumeQueue files" if job.snapshot is None else "building rows")
    report = job.report(spark_job, spark).cache()
    if job.out is not None:
        progress.phase(f"scanning, writing {job.out}")
        spark_job.write_report(report, job.out, job.dataset_format, overwrite=job.overwrite)
    if job.history is not None:
        from mqctl.pipeline.history import append_history

        progress.phase(f"appending to {job.history}")
        append_history(report, job.history, job.now)
    top_rows: list[dict[str, Any]] = []
    if job.top:
        progress.phase("ranking groups" if job.out or job.history else "scanning")
        top_rows = [r.asDict() for r in spark_job.top_groups_df(report, job.top).collect()]
    report.unpersist()
    return top_rows


@handle_errors
def lag_report(
    store: StoreOpt = None,
    namesrv: NamesrvOpt = None,
    profile: ProfileOpt = None,
    subscriptions: _SubscriptionsOpt = None,
    lag_time: _LagTimeOpt = False,
    history: _HistoryOpt = None,
    status: _StatusOpt = False,
    window: _WindowOpt = "15m",
    master: _MasterOpt = None,
    driver_memory: _DriverMemoryOpt = "1g",
    out: _OutOpt = None,
    dataset_format: _FormatOpt = DatasetFormat.parquet,
    overwrite: _OverwriteOpt = False,
    cq_read: _CqReadOpt = CqRead.auto,
    top: _TopOpt = 20,
    timeout: TimeoutOpt = 60.0,  # a fleet-wide fetch: 1,000 groups took 4-25 s on 2 loaded cores
    access_key: AccessKeyOpt = None,
    secret_key: SecretKeyOpt = None,
    tls: TlsOpt = False,
    tls_insecure: TlsInsecureOpt = False,
    output: OutputOpt = None,
    verbose: _VerboseOpt = False,
    now_ms: Annotated[int | None, typer.Option("--now-ms", hidden=True)] = None,
) -> None:
    from mqctl.pipeline.lagreport_run import run_spark, spark_job

    if top < 0:
        raise UsageError("--top must be >= 0")
    fmt = resolve_format(output)
    if status:
        from mqctl.cli.lagreport_status import status_command

        return status_command(history, window, now_ms, (out, dataset_format.value, overwrite, top), fmt,
                       (master, driver_memory, verbose), bool(store or namesrv))  # fmt: skip
    target = cluster_target(store, profile, namesrv)
    if not target.kind.reads_files and subscriptions is not None:
        raise UsageError(
            "--subscriptions needs stores: live, matchedDiff would read every unconsumed "
            "ConsumeQueue unit over the network",
            "per group: mqctl consumerProgress -n ... -g GROUP --tags EXPR",
        )
    job_module = spark_job()  # no Spark: exit 7 before anything is read
    now = int(time.time() * 1000) if now_ms is None else now_ms
    common: dict[str, Any] = {
        "now": now,
        "out": out,
        "dataset_format": dataset_format.value,
        "overwrite": overwrite,
    }
    common |= {"top": top, "history": history}
    failure: MqctlError | None = None
    if target.kind.reads_files:
        job = _store_job(target, subscriptions, cq_read, common)
    else:
        live = LiveOptions(timeout, access_key, secret_key, tls, tls_insecure)
        from mqctl.cli.lagreport_fetch import live_fetch

        snapshot, failure = live_fetch(target, backend_options(live, profile), lag_time)
        job = _Job(rows=snapshot.queue_count, snapshot=snapshot, **common)

    top_rows = run_spark(
        lambda spark, progress: _run_job(job_module, job, spark, progress),
        master,
        driver_memory,
        verbose=verbose,
        warn=warn,
        debug=debug_enabled(),
    )
    _render(fmt, top_rows, job, sys.stdout)
    if failure is not None:
        raise failure


def _store_job(target: BackendTarget, subscriptions: Path | None, cq_read: CqRead, common: dict) -> _Job:
    from mqctl.pipeline.inputs import consumer_queues, load_broker_input, load_subscriptions

    subs = load_subscriptions(subscriptions) if subscriptions is not None else None
    brokers = [load_broker_input(name, Path(root)) for name, root in target.stores]
    for b in brokers:
        for w in b.warnings:
            warn(w)
    queues = consumer_queues(brokers, subs)
    direct = cq_read is CqRead.direct or (cq_read is CqRead.auto and all(_on_driver(b.root) for b in brokers))
    return _Job(rows=len(queues), brokers=brokers, queues=queues, direct=direct, **common)


def _on_driver(root: Path) -> bool:
    """A store root the driver reads as a file (a file: URI or a plain existing path): executors
    of a local master see it too, and a cluster's must (the commit-log lookups read it)."""
    from mqctl.pipeline.inputs import local_path

    local = local_path(str(root))
    return local is not None and Path(local).exists()


# ---------------------------------------------------------------------------------------------
# output


def _render(fmt: OutputFormat, top_rows: list[dict[str, Any]], job: _Job, stdout: TextIO) -> None:
    out = job.out
    if fmt is OutputFormat.json:
        from mqctl.render.jsonout import write_json

        doc: dict[str, Any] = {
            "schema": SCHEMA,
            "out": out,
            "format": job.dataset_format if out else None,
            "rows": job.rows,
        }
        doc |= {"history": job.history, "source": "store" if job.snapshot is None else "live"}
        doc |= {"nowMs": job.now, "top": [{k: r[k] for k in _TOP_COLUMNS} for r in top_rows]}
        write_json(doc, stdout)
    elif fmt is OutputFormat.csv:
        from mqctl.render.csvout import write_csv

        write_csv(_TOP_COLUMNS, [[r[k] for k in _TOP_COLUMNS] for r in top_rows], stdout)
    else:
        from mqctl.render.table import Column, TableSpec, write_table

        footer = f"{job.rows} queue rows" + (f" written to {out} ({job.dataset_format})" if out else "")
        if job.history:
            footer += f"; appended to the history {job.history}"
        heads = ["#Group", "#Diff Total", "#Matched", "#Max Lag", "#Queues", "#Below Min", "#Above Max"]
        spec = TableSpec(
            columns=[Column(h, "left" if i == 0 else "right") for i, h in enumerate(heads)],
            rows=[[_cell(k, r[k]) for k in _TOP_COLUMNS] for r in top_rows],
            footer_lines=[footer],
        )
        write_table(spec, stdout)
    stdout.flush()


def _cell(key: str, value: Any) -> Any:
    """A table cell: "-" for null (live: no matchedDiff, no lag time) and for no lag at all."""
    from mqctl.render.plain import format_duration_ms

    if value is None or (key == "maxLagMs" and not value):
        return "-"
    return format_duration_ms(value) if key == "maxLagMs" else value


lag_report.__doc__ = HELP
