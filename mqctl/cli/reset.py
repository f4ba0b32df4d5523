"""mqctl resetOffsetByTime — plan a reset as a dry run, apply it safely with --execute, undo it."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from mqctl.cli import streams
from mqctl.cli.cluster import Cluster, cluster_options
from mqctl.cli.errors import handle_errors, warn_all
from mqctl.cli.output import Output, OutputFormat, emit, output_options
from mqctl.cli.reset_args import (
    DryRunOpt,
    ExecuteOpt,
    ExportOpt,
    FromFileOpt,
    GroupOpt,
    LockTimeoutOpt,
    NowMsOpt,
    OverwriteOpt,
    TargetFlags,
    TopicOpt,
    UndoOpt,
    UnsafeIgnoreAbortFileOpt,
    lock_timeout_seconds,
    target_options,
)
from mqctl.cli.reset_clients import ClientOffsetsOpt, PersistIntervalOpt
from mqctl.errors import LandedThenFailedError, UsageError
from mqctl.records import replace

if TYPE_CHECKING:
    from mqctl.backends.open import BackendOptions

STDOUT = "-"  # --export -: the JSON plan on stdout (ops.planfile.STDOUT)

HELP = """Reset a consumer group's committed offsets to a point in time (or earliest, latest, an offset,
a shift). DRY RUN BY DEFAULT: prints the plan and writes nothing; --execute applies it. The first
output line says which one happened.

Plan columns: broker, queue, current offset, target offset, delta (> 0 skips that many messages,
< 0 replays them), store time of the message at the target, warnings: clamped (the time or offset
lies outside the queue's retained messages, so the target is its min or max), queue-empty,
no-committed-offset, current-below-min, kept-not-backwards (-f false), beyond-max (-o = max+1).

Targets follow the 5.x broker: every queue 0..readQueueNums-1 of the topic on every broker with the
topic; first message with store time >= the timestamp (LOWER boundary), clamped to [min, max]; now,
a future time or a negative timestamp go to max. -s accepts: now, epoch millis (ten digits are
refused as seconds unless --epoch-ms), yyyy-MM-dd#HH:mm:ss:SSS (local time, strict: no month
roll-over), ISO 8601 with an offset (2026-11-20T10:00:00+08:00 or ...Z); any date before 1970 is
the earliest offset. -f false only moves a queue backwards (the legacy rule).
A 4.x cluster (detected, or --mqadmin-version 4.9.7) follows the 4.9.7 broker instead: the
consume-queue file chosen by its modification time, the nearest message, no clamp; -s now = -1.
One queue: -b BROKER_NAME (a store's broker name, not mqadmin's address) -q QUEUE_ID, optionally
-o OFFSET, which must lie in [min, max+1] (the broker's check; a target of 0 is applied, unlike
mqadmin); -b alone keeps to that broker's queues. Every target (flags, a plan file, an undo) is
checked against the cluster's [min, max+1] right before the write.

Workflow: review the dry run (or --export plan.json / plan.csv), then --execute, or
--from-file plan.json --execute, which refuses (exit 5, nothing written) when any current offset
differs from the one in the plan or a target lies outside its queue's range. Every execute is journalled in $MQCTL_JOURNAL_DIR (default
$XDG_STATE_HOME/mqctl/journal or ~/.local/state/mqctl/journal); --undo ID|latest plans the
reverse (dry run first, refuses if the offsets moved since) and --execute applies it.

Safety on a store: refuses while the broker holds its store lock (it would overwrite the change
from memory; nothing overrides this), refuses when an abort file is present unless
--unsafe-ignore-abort-file, takes mqctl's own lock (waiting up to --lock-timeout for another
reset), re-reads the file and refuses if it does not
parse, keeps the old file as .bak, writes temp + fsync + rename + directory fsync.

Live (-n): an online group's queues are reset by the brokers, which tell the clients; an offline
group's offsets are written queue by queue; every queue is read back afterwards.

Exit: 0 ok, 2 usage, 3 unknown group/topic/queue/broker, 4 unreachable (or a queue not read
back), 5 refused (a stale plan, a target out of range, a queue that did not take the write), 6 bad
store or journal record, 9 executed, then a later step (the export, stdout) failed: do not retry.

mqadmin equivalent: mqadmin resetOffsetByTime -g GROUP -t TOPIC -s TIMESTAMP [-f true|false]
[-b BROKER_ADDR -q QUEUE_ID [-o OFFSET]] [-c CLUSTER]"""


@handle_errors
@output_options(short=False)
@cluster_options(mqadmin_cluster=True)
@target_options
def reset_offset_by_time(
    group: GroupOpt = None,
    topic: TopicOpt = None,
    execute: ExecuteOpt = False,
    dry_run: DryRunOpt = False,
    export: ExportOpt = None,
    overwrite: OverwriteOpt = False,
    from_file: FromFileOpt = None,
    undo: UndoOpt = None,
    unsafe_ignore_abort_file: UnsafeIgnoreAbortFileOpt = False,
    lock_timeout: LockTimeoutOpt = 30.0,
    client_offsets: ClientOffsetsOpt = None,
    persist_interval: PersistIntervalOpt = None,
    now_ms: NowMsOpt = None,
    *,
    target: TargetFlags,
    cluster: Cluster,
    out: Output,
) -> None:
    from mqctl.ops import resetrun
    from mqctl.ops.planfile import plan_source

    now = int(time.time() * 1000) if now_ms is None else now_ms
    group = group.strip() if group else None
    topic = topic.strip() if topic else None
    scope = target.scope(now, from_file, undo)
    _check(execute and dry_run, export, overwrite)
    if client_offsets or persist_interval is not None or _client_undo(undo):
        from mqctl.cli.reset_clients import ClientReset, reset_clients

        req = ClientReset(group, topic, scope, target.forced, client_offsets, persist_interval, execute, undo)
        return reset_clients(req, cluster, out, _backend, (from_file, export))
    record, plan_file = plan_source(undo, from_file, group, topic)
    if record is None and plan_file is None and (not group or not topic):
        raise UsageError("-g/--group and -t/--topic are required")
    options = cluster.options(ignore_abort_file=unsafe_ignore_abort_file)
    options = replace(options, lock_timeout=lock_timeout_seconds(lock_timeout), on_lock_wait=_say_waiting)
    request = (group, topic, scope, target.forced, record, plan_file, from_file, execute, export, overwrite)
    done = resetrun.run(resetrun.BrokerReset(*request), _backend(record, cluster, options))
    _output(done, out.fmt, scope, export, overwrite)


def _output(done, fmt: OutputFormat, scope, export: str | None, overwrite: bool) -> None:  # type: ignore[no-untyped-def]
    """Export and draw the plan, the backend's warnings on stderr, how a write went; an --execute
    whose drawing or export fails after the write landed is exit 9, never a plain failure."""
    plan, journal = done.plan, done.journal
    shown: list[str] = []  # the status line, once it is on stderr
    try:
        exported = _export(plan, journal, export, done.export_path, overwrite)
        _render(plan, journal, fmt, scope.ts_text or plan.target.text, scope.ts_long, exported, shown)
        sys.stdout.flush()  # what is still buffered fails here, inside this guard
    except (Exception, KeyboardInterrupt, SystemExit) as exc:
        # SystemExit: rich exits from inside its own BrokenPipeError handler.
        closed = isinstance(exc, BrokenPipeError) or isinstance(exc.__context__, BrokenPipeError)
        if journal is None or (isinstance(exc, SystemExit) and not closed):
            raise
        if closed:  # `| head`: the write landed all the same, so exit 9, not a quiet 141
            streams.quiet_stdout()
        if not shown:  # the first stderr line says it was executed
            sys.stderr.write(
                f"EXECUTED (journal {journal.id}): the offsets were written and journalled; a later step failed\n"
            )
        raise LandedThenFailedError(journal.id, exc) from exc
    finally:
        warn_all(done.warnings)
    from mqctl.ops import resetrun
    from mqctl.render.reset import write_notes

    warn_all(write_notes(None if journal is None else journal.result))
    if status := resetrun.missed_status(journal):  # printed, but not every queue took it
        raise typer.Exit(status)


def _client_undo(undo: str | None) -> bool:
    """--undo of a reset written into broadcasting clients' files (its own kind of journal record)."""
    if undo is None:
        return False
    from mqctl.ops.clientjournal import is_client_journal

    return is_client_journal(undo)


def _check(contradiction: bool, export: str | None, overwrite: bool) -> None:
    if contradiction:
        raise UsageError("--execute and --dry-run contradict each other")
    if overwrite and export is None:
        raise UsageError("--overwrite lets --export replace a file; there is no --export")
    if export is not None and export != STDOUT and Path(export).suffix.lower() not in (".json", ".csv"):
        raise UsageError(f"--export {export}: the file name must end in .json or .csv (or '-' for stdout)")


def _backend(record, cluster: Cluster, options: BackendOptions):  # type: ignore[no-untyped-def]
    from mqctl.ops.resetrun import open_for

    return open_for(
        record, bool(cluster.store or cluster.profile or cluster.namesrv), cluster.target, options
    )


def _say_waiting(message: str) -> None:
    sys.stderr.write(f"mqctl: {message}\n")
    sys.stderr.flush()


def _export(plan, journal, export: str | None, path: Path | None, overwrite: bool) -> str | None:  # type: ignore[no-untyped-def]
    """Write --export after the plan was made (and applied, with --execute); returns where."""
    from mqctl.ops.planfile import render_plan, write_export

    if export is None:
        return None
    if path is None:  # '-': the JSON plan is the whole of stdout
        sys.stdout.write(render_plan(plan, journal, csv_form=False))
        sys.stdout.flush()
        return STDOUT
    write_export(path, render_plan(plan, journal, csv_form=path.suffix.lower() == ".csv"), overwrite)
    return str(path)


def _render(  # type: ignore[no-untyped-def]
    plan, journal, fmt: OutputFormat, ts_text: str, ts_long: int, exported: str | None, shown: list[str]
) -> None:
    from mqctl.ops.planfile import CSV_COLUMNS, csv_rows, plan_document
    from mqctl.render import Views
    from mqctl.render import reset as render

    status = render.status_line(plan, journal, exported)
    if exported == STDOUT or fmt in (OutputFormat.plain, OutputFormat.csv):
        # stdout carries the plan, mqadmin's table or the CSV alone, so scripts parsing it keep working.
        sys.stderr.write(status + "\n")
        sys.stderr.flush()
        shown.append(status)
    if exported == STDOUT:
        return
    emit(
        fmt,
        Views(
            plain=lambda o: render.plain(plan, o, ts_text, ts_long),
            table=lambda o: render.table(plan, o, status),
            json_doc=lambda: plan_document(plan, journal),
            csv=lambda: (CSV_COLUMNS, csv_rows(plan, journal)),
        ),
    )


reset_offset_by_time.__doc__ = HELP
