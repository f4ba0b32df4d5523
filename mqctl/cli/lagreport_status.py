"""lagReport --status: the history's window judged by consumerProgress --watch's rules, on Spark.

The rules are ops/watch.py's pure functions; this CLI layer hands them to the pipeline (which
does not import ops) and prints the groups' statuses.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any, TextIO

from mqctl.cli.errors import debug_enabled, warn
from mqctl.cli.options import OutputFormat
from mqctl.errors import UsageError

__all__ = ["StatusJob", "render_status", "run_status", "status_command"]

SCHEMA = "mqctl/lagReport.status/v1"


@dataclass(frozen=True)
class StatusJob:
    history: str
    now: int
    window_ms: int
    out: str | None
    dataset_format: str
    overwrite: bool
    top: int


def run_status(spark_job: Any, job: StatusJob, spark: Any, progress: Any) -> tuple[list[dict[str, Any]], int]:
    """(the worst ``top`` groups, the number of queues judged); per-queue statuses under --out."""
    from mqctl.model import Rules
    from mqctl.ops.watch import queue_rates, queue_status
    from mqctl.pipeline.history import read_history
    from mqctl.pipeline.lagreport_status import StatusRules, group_status_df, queue_status_df

    progress.phase(f"reading {job.history}")
    history = read_history(spark, job.history, job.now - job.window_ms, job.now)
    queues = queue_status_df(history, StatusRules(queue_status, queue_rates, Rules())).cache()
    try:
        progress.phase("judging queues")
        if job.out is not None:
            spark_job.write_report(queues, job.out, job.dataset_format, overwrite=job.overwrite)
        groups = group_status_df(queues)
        rows = [r.asDict() for r in (groups.limit(job.top) if job.top else groups).collect()]
        return rows, queues.count()
    finally:
        queues.unpersist()


def status_command(
    history: str | None,
    window: str,
    now_ms: int | None,
    output: tuple[str | None, str, bool, int],
    fmt: OutputFormat,
    spark_opts: tuple[str | None, str, bool],
    cluster_named: bool,
) -> None:
    """lagReport --status: check the flags, run the job, print the groups."""
    from mqctl.ops.timeparse import parse_duration_ms
    from mqctl.pipeline.lagreport_run import run_spark, spark_job

    if history is None:
        raise UsageError("--status needs --history DIR (the dataset lagReport --history runs build)")
    if cluster_named:
        raise UsageError("--status reads only the --history dataset: drop -S/-n")
    window_ms = parse_duration_ms(window)
    if window_ms <= 0:
        raise UsageError(f"--window {window}: expected a positive duration")
    now = int(time.time() * 1000) if now_ms is None else now_ms
    job = StatusJob(history, now, window_ms, *output)
    job_module = spark_job()
    master, driver_memory, verbose = spark_opts
    rows, queues = run_spark(
        lambda spark, progress: run_status(job_module, job, spark, progress),
        master,
        driver_memory,
        verbose=verbose,
        warn=warn,
        debug=debug_enabled(),
    )
    render_status(fmt, rows, job, queues, sys.stdout)


_COLUMNS = [
    "group",
    "status",
    "queues",
    "lag",
    "maxLagMs",
    "consumeRate",
    "produceRate",
    "worstQueue",
    "reason",
]


def render_status(
    fmt: OutputFormat, rows: list[dict[str, Any]], job: StatusJob, queues: int, out: TextIO
) -> None:
    from mqctl.model import STATUSES
    from mqctl.render.plain import format_duration_ms

    counts = [s.lower() for s in STATUSES]
    if fmt is OutputFormat.json:
        from mqctl.render.jsonout import write_json

        doc = {"schema": SCHEMA, "history": job.history, "nowMs": job.now, "windowMs": job.window_ms}
        write_json({**doc, "queues": queues, "out": job.out, "groups": rows}, out)
    elif fmt is OutputFormat.csv:
        from mqctl.render.csvout import write_csv

        cols = [*_COLUMNS[:3], *counts, "stale", *_COLUMNS[3:]]
        write_csv(cols, [[r[c] for c in cols] for r in rows], out)
    else:
        from mqctl.render.table import Column, TableSpec, write_table

        def rate(v: float | None) -> str:
            return "-" if v is None else f"{v:.2f}"

        heads = [
            "#Group",
            "#Status",
            "#Queues",
            "#Lag",
            "#Max Lag",
            "#Consume/s",
            "#Produce/s",
            "#Worst Queue",
        ]
        spec = TableSpec(
            columns=[Column(h, "right" if 2 <= i <= 6 else "left") for i, h in enumerate(heads)]
            + [Column("#Why", kind="text")],
            rows=[
                [
                    r["group"],
                    r["status"],
                    _queues_cell(r, counts),
                    r["lag"],
                    format_duration_ms(r["maxLagMs"]) if r["maxLagMs"] else "-",
                    rate(r["consumeRate"]),
                    rate(r["produceRate"]),
                    r["worstQueue"],
                    r["reason"],
                ]
                for r in rows
            ],  # fmt: skip
            footer_lines=[
                f"{queues} queues judged over the last {format_duration_ms(job.window_ms)} of {job.history}"
                + (f"; per-queue statuses written to {job.out} ({job.dataset_format})" if job.out else "")
            ],
        )
        write_table(spec, out)
    out.flush()


def _queues_cell(r: dict[str, Any], counts: list[str]) -> str:
    """ "12" when all are OK, else "12 (2 STALL, 1 WARN)"; stale ones are said too."""
    parts = [f"{r[c]} {c.upper()}" for c in reversed(counts) if c != "ok" and r[c]]
    if r["stale"]:
        parts.append(f"{r['stale']} stale")
    return f"{r['queues']}" + (f" ({', '.join(parts)})" if parts else "")
