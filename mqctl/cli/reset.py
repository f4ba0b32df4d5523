"""mqctl resetOffsetByTime — plan a reset as a dry run, apply it safely with --execute, undo it."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from mqctl.cli.errors import handle_errors, warn
from mqctl.cli.options import (
    AccessKeyOpt,
    ClusterOpt,
    LiveOptions,
    MqadminVersionOpt,
    NamesrvOpt,
    OutputFormat,
    OutputLongOpt,
    ProfileOpt,
    SecretKeyOpt,
    StoreOpt,
    TimeoutOpt,
    TlsInsecureOpt,
    TlsOpt,
    backend_options,
    emit,
    open_backend,
    resolve_format,
)
from mqctl.errors import ExitStatus, UsageError

if TYPE_CHECKING:
    from mqctl.backends.open import BackendOptions
    from mqctl.model import JournalRecord, Target
    from mqctl.ops.planfile import PlanFile

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
a future time or a negative timestamp go to max. -s accepts: now, epoch millis,
yyyy-MM-dd#HH:mm:ss:SSS (local time, strict: no month roll-over), ISO 8601 with an offset
(2026-11-20T10:00:00+08:00 or ...Z). -f false only moves a queue backwards (the legacy rule).
One queue: -b BROKER_NAME (a store's broker name, not mqadmin's address) -q QUEUE_ID, optionally
-o OFFSET, which must lie in [min, max+1] (the broker's check; a target of 0 is applied, unlike
mqadmin).

Workflow: review the dry run (or --export plan.json / plan.csv), then --execute, or
--from-file plan.json --execute, which refuses (exit 5, nothing written) when any current offset
differs from the one in the plan. Every execute is journalled in $MQCTL_JOURNAL_DIR (default
$XDG_STATE_HOME/mqctl/journal or ~/.local/state/mqctl/journal); --undo ID|latest plans the
reverse (dry run first, refuses if the offsets moved since) and --execute applies it.

Safety on a store: refuses while the broker holds its store lock (it would overwrite the change
from memory; nothing overrides this), refuses when an abort file is present unless
--unsafe-ignore-abort-file, takes mqctl's own lock, re-reads the file and refuses if it does not
parse, keeps the old file as .bak, writes temp + fsync + rename + directory fsync.

Exit: 0 ok, 2 usage, 3 unknown group/topic/queue/broker, 5 refused, 6 bad store.

mqadmin equivalent: mqadmin resetOffsetByTime -g GROUP -t TOPIC -s TIMESTAMP [-f true|false]
[-b BROKER_ADDR -q QUEUE_ID [-o OFFSET]] [-c CLUSTER]"""


def _int_opt(value: str | None, flag: str) -> int | None:
    if value is None:
        return None
    s = value.strip()
    if not s.lstrip("+-").isdigit() or s.count("-") + s.count("+") > 1:
        hint = None
        if flag.startswith("-o") and s.lower() in ("table", "plain", "json", "csv"):
            hint = f"here -o is mqadmin's --offset; the output format is --output {s.lower()}"
        raise UsageError(f"{flag}: expected an integer, got {value!r}", hint)
    return int(s)


def _force(value: str) -> bool:
    v = value.strip().lower()
    if v not in ("true", "false"):
        raise UsageError(f"-f/--force: expected true or false, got {value!r}")
    return v == "true"


# The options, one alias each (the command's signature stays one line per option).
_GroupOpt = Annotated[str | None, typer.Option("--group", "-g", help="Consumer group.", show_default=False)]

_TopicOpt = Annotated[str | None, typer.Option("--topic", "-t", help="Topic.", show_default=False)]

_TimestampOpt = Annotated[
    str | None,
    typer.Option(
        "--timestamp",
        "-s",
        help="now | epoch millis | yyyy-MM-dd#HH:mm:ss:SSS (local) | ISO 8601 with offset.",
        show_default=False,
    ),
]

_ForceOpt = Annotated[
    str, typer.Option("--force", "-f", metavar="true|false", help="false: only move queues backwards.")
]

_BrokerOpt = Annotated[
    str | None,
    typer.Option("--broker", "-b", help="One queue: broker NAME (with -q).", show_default=False),
]

_QueueOpt = Annotated[
    str | None, typer.Option("--queue", "-q", help="One queue: queue id (with -b).", show_default=False)
]

_OffsetOpt = Annotated[
    str | None,
    typer.Option(
        "--offset", "-o", help="One queue: explicit target offset in [min, max+1].", show_default=False
    ),
]

_ToEarliestOpt = Annotated[bool, typer.Option("--to-earliest", help="Target: each queue's min offset.")]

_ToLatestOpt = Annotated[bool, typer.Option("--to-latest", help="Target: each queue's max offset.")]

_ToOffsetOpt = Annotated[
    str | None,
    typer.Option(
        "--to-offset", metavar="N", help="Target: offset N, clamped to [min, max].", show_default=False
    ),
]

_ShiftByOpt = Annotated[
    str | None,
    typer.Option(
        "--shift-by",
        metavar="N",
        help="Target: committed offset + N (negative replays).",
        show_default=False,
    ),
]

_ByDurationOpt = Annotated[
    str | None,
    typer.Option(
        "--by-duration",
        metavar="DURATION",
        help="Target: the time DURATION ago (PT1H30M, 1h30m).",
        show_default=False,
    ),
]

_ExecuteOpt = Annotated[bool, typer.Option("--execute", help="Apply the plan (default: dry run).")]

_DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Only plan, write nothing (the default; kafka's spelling).")
]

_ExportOpt = Annotated[
    str | None,
    typer.Option(
        "--export",
        metavar="FILE|-",
        help="Write the plan to FILE (.json or .csv; never inside a store, never over an existing "
        "file without --overwrite), or '-' for the JSON plan on stdout.",
        show_default=False,
    ),
]

_OverwriteOpt = Annotated[bool, typer.Option("--overwrite", help="Let --export replace an existing file.")]

_FromFileOpt = Annotated[
    Path | None,
    typer.Option("--from-file", metavar="FILE", help="Use a plan written by --export.", show_default=False),
]

_UndoOpt = Annotated[
    str | None,
    typer.Option(
        "--undo", metavar="ID|latest", help="Plan the reverse of a journalled reset.", show_default=False
    ),
]

_UnsafeIgnoreAbortFileOpt = Annotated[
    bool,
    typer.Option(
        "--unsafe-ignore-abort-file",
        help="Write although the store has an abort file (never while the broker holds its lock).",
    ),
]

_NowMsOpt = Annotated[int | None, typer.Option("--now-ms", hidden=True)]


@handle_errors
def reset_offset_by_time(
    group: _GroupOpt = None,
    topic: _TopicOpt = None,
    timestamp: _TimestampOpt = None,
    force: _ForceOpt = "true",
    broker: _BrokerOpt = None,
    queue: _QueueOpt = None,
    offset: _OffsetOpt = None,
    cluster: ClusterOpt = None,
    to_earliest: _ToEarliestOpt = False,
    to_latest: _ToLatestOpt = False,
    to_offset: _ToOffsetOpt = None,
    shift_by: _ShiftByOpt = None,
    by_duration: _ByDurationOpt = None,
    execute: _ExecuteOpt = False,
    dry_run: _DryRunOpt = False,
    export: _ExportOpt = None,
    overwrite: _OverwriteOpt = False,
    from_file: _FromFileOpt = None,
    undo: _UndoOpt = None,
    unsafe_ignore_abort_file: _UnsafeIgnoreAbortFileOpt = False,
    store: StoreOpt = None,
    profile: ProfileOpt = None,
    namesrv: NamesrvOpt = None,
    timeout: TimeoutOpt = 10.0,
    access_key: AccessKeyOpt = None,
    secret_key: SecretKeyOpt = None,
    tls: TlsOpt = False,
    tls_insecure: TlsInsecureOpt = False,
    output: OutputLongOpt = None,
    mqadmin_version: MqadminVersionOpt = None,
    now_ms: _NowMsOpt = None,
) -> None:
    now = int(time.time() * 1000) if now_ms is None else now_ms
    if execute and dry_run:
        raise UsageError("--execute and --dry-run contradict each other")
    group = group.strip() if group else None
    topic = topic.strip() if topic else None
    qid = _int_opt(queue, "-q/--queue")
    explicit = _int_opt(offset, "-o/--offset")
    target, ts_text, ts_long = _target(
        now,
        timestamp=timestamp,
        explicit=explicit,
        to_earliest=to_earliest,
        to_latest=to_latest,
        to_offset=to_offset,
        shift_by=shift_by,
        by_duration=by_duration,
        from_file=from_file,
        undo=undo,
    )
    if explicit is not None and (broker is None or qid is None or qid < 0):
        raise UsageError("-o/--offset needs -b BROKER_NAME and -q QUEUE_ID (one queue)")
    whole_topic = qid is not None and qid < 0  # mqadmin: -q < 0 means every queue of the topic
    if whole_topic:
        qid = None
    record, plan_file = _source(undo, from_file, group)
    if record is None and plan_file is None and (not group or not topic):
        raise UsageError("-g/--group and -t/--topic are required")
    if export is not None and export != STDOUT and Path(export).suffix.lower() not in (".json", ".csv"):
        raise UsageError(f"--export {export}: the file name must end in .json or .csv (or '-' for stdout)")

    from mqctl.ops import reset as ops
    from mqctl.ops.planfile import check_export_target

    live = LiveOptions(timeout, access_key, secret_key, tls, tls_insecure)
    options = backend_options(
        live, profile, ignore_abort_file=unsafe_ignore_abort_file, mqadmin_version=mqadmin_version
    )
    with _backend(record, store, profile, namesrv, options) as backend:
        export_path = (
            check_export_target(export, backend.protected_paths(), overwrite) if export is not None else None
        )
        plan = _plan(
            backend, record, plan_file, from_file, (group, topic, target, _force(force), broker, qid)
        )
        if whole_topic:
            plan = ops.note(plan, f"-q {queue.strip() if queue else -1} means every queue, as in mqadmin")
        journal = ops.apply_plan(backend, plan) if execute else None
        for w in backend.take_warnings():
            warn(str(w))
    _report_write(journal)
    exported = _export(plan, journal, export, export_path, overwrite)
    _render(plan, journal, resolve_format(output), ts_text or plan.target.text, ts_long, exported)
    _exit_on_missed(journal)


def _report_write(journal) -> None:  # type: ignore[no-untyped-def]
    """How a live write went, queue by queue, on stderr (the first stdout line has the summary)."""
    result = None if journal is None else journal.result
    if result is None:
        return
    for line in result.notes:
        warn(line)
    for c in result.not_taken[:20]:
        q = c.queue
        warn(
            f"{q.broker_name} {q.topic} queue {q.queue_id}: target {c.target}, now {c.now}: {c.note or 'not applied'}"
        )
    moved = [c for c in result.checks if c.drift]
    if moved:
        warn(
            f"{len(moved)} queue(s) had moved since the plan (online consumers); the plan's targets were applied"
        )


def _exit_on_missed(journal) -> None:  # type: ignore[no-untyped-def]
    """The write was printed; a queue read back away from its target is not a success (an online
    consumer that committed past its new offset took the reset and resumed: that is a success)."""
    result = None if journal is None else journal.result
    if result is None or not result.not_taken:
        return
    unread = any(c.now is None for c in result.not_taken)
    raise typer.Exit(int(ExitStatus.UNREACHABLE if unread else ExitStatus.REFUSED))


def _plan(backend, record, plan_file, from_file, request):  # type: ignore[no-untyped-def]
    """The plan: the reverse of a journal record, a reviewed plan file, or a new one."""
    from mqctl.ops import reset as ops

    if record is not None:
        return ops.plan_undo(backend, record)
    if plan_file is not None:
        return ops.plan_from_file(backend, plan_file, str(from_file))
    group, topic, target, force, broker, qid = request
    assert group and topic
    return ops.plan_reset(backend, group, topic, target, force=force, broker=broker, queue=qid)


def _target(now: int, **given: object) -> tuple[Target, str, int]:
    """The one target the flags name, with mqadmin's -s text and millis for its plain header."""
    from mqctl.model import Target
    from mqctl.ops.timeparse import parse_duration_ms, parse_timestamp, time_before

    explicit = given["explicit"]
    chosen = [
        name
        for name, key in (
            ("-s/--timestamp", "timestamp"),
            ("--to-earliest", "to_earliest"),
            ("--to-latest", "to_latest"),
            ("--to-offset", "to_offset"),
            ("--shift-by", "shift_by"),
            ("--by-duration", "by_duration"),
            ("--from-file", "from_file"),
            ("--undo", "undo"),
            ("-o/--offset", "explicit"),
        )
        if given[key] not in (None, False) and not (key == "timestamp" and explicit is not None)
    ]
    if len(chosen) != 1:
        raise UsageError(
            ("conflicting targets: " + ", ".join(chosen) if chosen else "no target")
            + "; give exactly one of -s, --to-earliest, --to-latest, --to-offset, --shift-by, --by-duration, "
            "-o (with -b/-q), --from-file, --undo"
        )
    ts_text, ts_long = "", -1
    timestamp = given["timestamp"]
    if isinstance(timestamp, str):
        ts_text, ts_long = timestamp.strip(), parse_timestamp(timestamp, now)
    if isinstance(explicit, int):
        return Target("explicit", explicit, str(explicit)), ts_text, ts_long
    if given["to_earliest"]:
        return Target("earliest", text="--to-earliest"), ts_text, ts_long
    if given["to_latest"]:
        return Target("latest", text="--to-latest"), ts_text, ts_long
    for key, kind in (("to_offset", "offset"), ("shift_by", "shift")):
        value = given[key]
        if isinstance(value, str):
            flag = "--" + key.replace("_", "-")
            return Target(kind, _int_opt(value, flag) or 0, value), ts_text, ts_long  # type: ignore[arg-type]
    by_duration = given["by_duration"]
    if isinstance(by_duration, str):
        ts_long = time_before(now, parse_duration_ms(by_duration))
        return Target("time", ts_long, by_duration), by_duration, ts_long
    return Target("time", ts_long, ts_text), ts_text, ts_long


def _source(
    undo: str | None, from_file: Path | None, group: str | None
) -> tuple[JournalRecord | None, PlanFile | None]:
    """The journal record (--undo) or plan file (--from-file) the plan comes from, if any."""
    from mqctl.ops.planfile import load_plan_file

    record: JournalRecord | None = None
    plan_file: PlanFile | None = None
    if undo is not None:
        from mqctl.ops.journal import read_journal

        record = read_journal(undo.strip())
        actual = record.group
    elif from_file is not None:
        plan_file = load_plan_file(from_file)
        actual = plan_file.group
    else:
        return None, None
    if group and actual and group != actual:
        what = "journal" if record is not None else "plan"
        raise UsageError(f"-g/--group {group!r} does not match the {what} ({actual!r})")
    return record, plan_file


def _backend(record, store, profile, namesrv, options: BackendOptions):  # type: ignore[no-untyped-def]
    """An undo reopens the cluster its journal names (through the same opener) unless the user
    points elsewhere."""
    if record is not None and not store and not profile and not namesrv:
        from mqctl.backends.open import open_backend as open_target

        return open_target(record.target, options)
    return open_backend(store, profile, namesrv, options)


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


def _render(plan, journal, fmt: OutputFormat, ts_text: str, ts_long: int, exported: str | None) -> None:  # type: ignore[no-untyped-def]
    from mqctl.ops.planfile import CSV_COLUMNS, csv_rows, plan_document
    from mqctl.render import reset as render

    status = render.status_line(plan, journal, exported)
    out = sys.stdout
    if exported == STDOUT:
        sys.stderr.write(status + "\n")
        return
    if fmt in (OutputFormat.plain, OutputFormat.csv):
        # stdout carries mqadmin's table (or the CSV) alone, so scripts parsing it keep working.
        sys.stderr.write(status + "\n")
        sys.stderr.flush()
    emit(
        fmt,
        out,
        plain=lambda o: render.plain(plan, o, ts_text, ts_long),
        table=lambda o: render.table(plan, o, status),
        json_doc=lambda: plan_document(plan, journal),
        csv=lambda: (CSV_COLUMNS, csv_rows(plan, journal)),
    )


reset_offset_by_time.__doc__ = HELP
