"""lagReport, the batch job, from what the flags asked to the rows collected: one entry point per
mode (``store_report``, ``live_report``, ``status_report``), each returning a summary for the CLI
to draw. Spark runs inside ``lagreport_run.run_spark`` (session, progress, one-line errors).

No pyspark at import: the CLI imports this module for every lagReport call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl.model import LagReportSummary, LagStatusSummary
from mqctl.records import field, record

if TYPE_CHECKING:
    from mqctl.backends.base import Backend
    from mqctl.errors import MqctlError
    from mqctl.pipeline.inputs import BrokerInput, ConsumerQueue, LiveSnapshot

Warn = Callable[[str], None]

__all__ = ["Dataset", "SparkFlags", "live_report", "status_report", "store_report"]


@record(frozen=True)
class SparkFlags:
    """How to run Spark: the master, the driver's memory, Spark's log on stderr (``verbose``)."""

    master: str | None = None
    driver_memory: str = "1g"
    verbose: bool = False
    debug: bool = False  # Spark's failures raised as they are (--debug)


@record(frozen=True)
class Dataset:
    """What the run writes and prints: the dataset under ``out``, the ``history`` appended to, the
    ``top`` groups collected, all at the run's time ``now``."""

    now: int
    out: str | None = None
    dataset_format: str = "parquet"
    overwrite: bool = False
    top: int = 20
    history: str | None = None

    def check_targets(self, spark: SparkFlags, stores: Sequence[str] = ()) -> None:
        """Before any work (Spark refuses an existing --out only after the whole job): --out
        exists only with --overwrite; --out and --history never inside a store root; where Spark
        writes this machine's files, both can be created."""
        from mqctl.pipeline.inputs import check_dataset_target, local_spark

        here = local_spark(spark.master)
        if self.out is not None:
            check_dataset_target("--out", self.out, stores, must_be_new=not self.overwrite, here=here)
        if self.history is not None:
            check_dataset_target("--history", self.history, stores, must_be_new=False, here=here)


@record(frozen=True)
class _Inputs:
    rows: int  # queue rows the report covers
    brokers: Sequence[BrokerInput] = ()  # stores
    queues: Sequence[ConsumerQueue] = ()
    direct: bool = False
    snapshot: LiveSnapshot | None = None  # live
    notes: list[str] = field(default_factory=list)
    unreported: Sequence[str] = ()  # groups of the overview without a queue row


def _on_driver(root: Path) -> bool:
    """A store root the driver reads as a file (a file: URI or a plain existing path): executors
    of a local master see it too, and a cluster's must (the commit-log lookups read it)."""
    from mqctl.pipeline.inputs import local_path

    local = local_path(str(root))
    return local is not None and Path(local).exists()


def store_report(
    stores: Sequence[tuple[str, str]],
    subscriptions: Path | None,
    cq_read: str,
    ds: Dataset,
    spark: SparkFlags,
    warn: Warn,
) -> LagReportSummary:
    """lagReport over store roots: the driver reads the config files, Spark scans the ConsumeQueues."""
    from mqctl.pipeline.inputs import (
        consumer_queues,
        load_broker_input,
        load_subscriptions,
        unreported_groups,
    )
    from mqctl.pipeline.lagreport_run import spark_job

    ds.check_targets(spark, [root for _name, root in stores])
    job = spark_job()  # no Spark: exit 7 before anything is read
    subs = load_subscriptions(subscriptions) if subscriptions is not None else None
    brokers = [load_broker_input(name, Path(root)) for name, root in stores]
    for b in brokers:
        for w in b.warnings:
            warn(w)
    queues = consumer_queues(brokers, subs)
    direct = cq_read == "direct" or (cq_read == "auto" and all(_on_driver(b.root) for b in brokers))
    unreported = unreported_groups(brokers, queues)
    inputs = _Inputs(rows=len(queues), brokers=brokers, queues=queues, direct=direct, unreported=unreported)
    return _run(job, inputs, ds, spark, warn, "store")


def live_snapshot(backend: Backend, *, lag_time: bool) -> tuple[LiveSnapshot, MqctlError | None]:
    """The cluster for lagReport -n: the detailed groups overview (consume stats of every group on
    every broker, each queue's min offset and whether it has a committed offset), then with
    ``lag_time`` the store times of the lagging queues' first unconsumed messages, once per
    distinct position. Returns the snapshot and the error to exit with when brokers did not
    answer (their rows are missing)."""
    from mqctl.errors import BrokersFailedError
    from mqctl.model import QueueOffset
    from mqctl.pipeline.inputs import LiveSnapshot

    overviews = list(backend.groups_overview(detail=True))
    oldest = None
    if lag_time:
        positions = list(
            dict.fromkeys(
                QueueOffset(q.queue, start)
                for ov in overviews
                for q in (ov.stats.queues if ov.stats is not None else ())
                if (start := max(q.consumer_offset, q.min_offset or 0)) < q.broker_offset
            )
        )  # one request pair per distinct position: groups at the same offset share it
        times = backend.store_times(positions)
        oldest = {(p.queue, p.offset): t for p, t in zip(positions, times) if t > 0}
    failures = [f for ov in overviews for f in (ov.stats.failures if ov.stats is not None else ov.failures)]
    unread = sum(1 for ov in overviews if ov.failure)
    failure = None
    if failures or unread:
        failure = BrokersFailedError(failures, "their rows are missing", unread_groups=unread)
    return LiveSnapshot(overviews, oldest), failure


def live_report(
    backend: Backend, lag_time: bool, ds: Dataset, spark: SparkFlags, warn: Warn
) -> tuple[LagReportSummary, MqctlError | None]:
    """lagReport of a live cluster: the snapshot fetched on the driver, the rows built by Spark.
    The second value is the error to raise after printing (brokers that did not answer)."""
    from mqctl.pipeline.lagreport_run import spark_job

    ds.check_targets(spark)
    job = spark_job()
    snapshot, failure = live_snapshot(backend, lag_time=lag_time)
    for w in backend.take_warnings():
        warn(str(w))
    inputs = _Inputs(rows=snapshot.queue_count, snapshot=snapshot, unreported=snapshot.unreported)
    return _run(job, inputs, ds, spark, warn, "live"), failure


def _run(
    job: Any, inputs: _Inputs, ds: Dataset, flags: SparkFlags, warn: Warn, source: str
) -> LagReportSummary:
    from mqctl.pipeline.lagreport_run import run_spark

    def work(spark: Any, progress: Any) -> tuple[list[dict[str, Any]], int]:
        return _phases(job, inputs, ds, spark, progress)

    top, unknown = run_spark(
        work, flags.master, flags.driver_memory, verbose=flags.verbose, warn=warn, debug=flags.debug
    )
    return LagReportSummary(
        rows=inputs.rows,
        source=source,
        now_ms=ds.now,
        out=ds.out,
        dataset_format=ds.dataset_format,
        history=ds.history,
        top=top,
        time_unknown=unknown,
        groups_without_rows=list(inputs.unreported),
    )


def _phases(
    job: Any, inputs: _Inputs, ds: Dataset, spark: Any, progress: Any
) -> tuple[list[dict[str, Any]], int]:
    """The Spark part: the report, the dataset under --out, the history, the top groups (collected),
    and (stores) how many rows have a store time the commit log could not give."""
    progress.phase("listing ConsumeQueue files" if inputs.snapshot is None else "building rows")
    if inputs.snapshot is not None:
        from mqctl.pipeline.lagreport_live import run_live_report

        report = run_live_report(spark, inputs.snapshot, ds.now)
    else:
        report = job.run_lag_report(spark, inputs.brokers, inputs.queues, ds.now, direct=inputs.direct)
    report = report.cache()
    if ds.out is not None:
        progress.phase(f"scanning, writing {ds.out}")
        job.write_report(report, ds.out, ds.dataset_format, overwrite=ds.overwrite)
    if ds.history is not None:
        from mqctl.pipeline.history import append_history

        progress.phase(f"appending to {ds.history}")
        append_history(report, ds.history, ds.now)
    top_rows: list[dict[str, Any]] = []
    if ds.top:
        progress.phase("ranking groups" if ds.out or ds.history else "scanning")
        top_rows = [r.asDict() for r in job.top_groups_df(report, ds.top).collect()]
    # A store's lagMs is null only where its commit log is damaged (live: where lag time was not asked).
    unknown = report.where("lagMs IS NULL").count() if inputs.snapshot is None else 0
    report.unpersist()
    return top_rows, unknown


def status_report(
    history: str, window_ms: int, ds: Dataset, flags: SparkFlags, warn: Warn
) -> LagStatusSummary:
    """lagReport --status: the history's last ``window_ms`` judged with consumerProgress --watch's
    rules per queue (per-queue statuses under ``ds.out``) and per group (the worst ``ds.top``)."""
    from mqctl.pipeline.inputs import check_history_source, local_spark

    ds.check_targets(flags)
    if local_spark(flags.master):  # else a plain path may name the cluster's filesystem
        check_history_source(history)
    from mqctl.model import Rules
    from mqctl.ops.watch.rules import queue_rates, queue_status
    from mqctl.pipeline.history import read_history
    from mqctl.pipeline.lagreport_run import run_spark, spark_job
    from mqctl.pipeline.lagreport_status import StatusRules, group_status_df, queue_status_df

    job = spark_job()

    def work(spark: Any, progress: Any) -> tuple[list[dict[str, Any]], int]:
        progress.phase(f"reading {history}")
        samples = read_history(spark, history, ds.now - window_ms, ds.now)
        queues = queue_status_df(samples, StatusRules(queue_status, queue_rates, Rules())).cache()
        try:
            progress.phase("judging queues")
            if ds.out is not None:
                job.write_report(queues, ds.out, ds.dataset_format, overwrite=ds.overwrite)
            groups = group_status_df(queues)
            rows = [r.asDict() for r in (groups.limit(ds.top) if ds.top else groups).collect()]
            return rows, queues.count()
        finally:
            queues.unpersist()

    rows, judged = run_spark(
        work, flags.master, flags.driver_memory, verbose=flags.verbose, warn=warn, debug=flags.debug
    )
    return LagStatusSummary(history, ds.now, window_ms, judged, ds.out, ds.dataset_format, rows)


def window_ms(window: str) -> int:
    """--status --window: a positive duration, in milliseconds."""
    from mqctl.ops.timeparse import positive_duration_ms

    return positive_duration_ms(window, "--window")


def check_times_readable(report: LagReportSummary) -> None:
    """A damaged store: the rows are written, no gate or script passes on them (exit 6)."""
    if report.time_unknown:
        from mqctl.errors import StoreCorruptError

        raise StoreCorruptError(
            f"store times of {report.time_unknown} queue row(s) cannot be read: their lagMs is null",
            "the commit log is damaged there; consumerProgress -g GROUP --store ... names the files",
        )
