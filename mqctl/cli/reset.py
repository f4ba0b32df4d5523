"""mqctl resetOffsetByTime — plan a reset as a dry run, apply it safely with --execute, undo it."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from mqctl.cli.errors import handle_errors, warn
from mqctl.cli.options import (
    ClusterOpt,
    NamesrvOpt,
    OutputFormat,
    OutputLongOpt,
    ProfileOpt,
    StoreOpt,
    open_backend,
    resolve_format,
)
from mqctl.errors import UsageError

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
        raise UsageError(f"{flag}: expected an integer, got {value!r}")
    return int(s)


def _force(value: str) -> bool:
    v = value.strip().lower()
    if v not in ("true", "false"):
        raise UsageError(f"-f/--force: expected true or false, got {value!r}")
    return v == "true"


@handle_errors
def reset_offset_by_time(
    group: Annotated[
        str | None, typer.Option("--group", "-g", help="Consumer group.", show_default=False)
    ] = None,
    topic: Annotated[str | None, typer.Option("--topic", "-t", help="Topic.", show_default=False)] = None,
    timestamp: Annotated[
        str | None,
        typer.Option(
            "--timestamp",
            "-s",
            help="now | epoch millis | yyyy-MM-dd#HH:mm:ss:SSS (local) | ISO 8601 with offset.",
            show_default=False,
        ),
    ] = None,
    force: Annotated[
        str, typer.Option("--force", "-f", metavar="true|false", help="false: only move queues backwards.")
    ] = "true",
    broker: Annotated[
        str | None,
        typer.Option("--broker", "-b", help="One queue: broker NAME (with -q).", show_default=False),
    ] = None,
    queue: Annotated[
        str | None, typer.Option("--queue", "-q", help="One queue: queue id (with -b).", show_default=False)
    ] = None,
    offset: Annotated[
        str | None,
        typer.Option(
            "--offset", "-o", help="One queue: explicit target offset in [min, max+1].", show_default=False
        ),
    ] = None,
    cluster: ClusterOpt = None,
    to_earliest: Annotated[
        bool, typer.Option("--to-earliest", help="Target: each queue's min offset.")
    ] = False,
    to_latest: Annotated[bool, typer.Option("--to-latest", help="Target: each queue's max offset.")] = False,
    to_offset: Annotated[
        str | None,
        typer.Option(
            "--to-offset", metavar="N", help="Target: offset N, clamped to [min, max].", show_default=False
        ),
    ] = None,
    shift_by: Annotated[
        str | None,
        typer.Option(
            "--shift-by",
            metavar="N",
            help="Target: committed offset + N (negative replays).",
            show_default=False,
        ),
    ] = None,
    by_duration: Annotated[
        str | None,
        typer.Option(
            "--by-duration",
            metavar="DURATION",
            help="Target: the time DURATION ago (PT1H30M, 1h30m).",
            show_default=False,
        ),
    ] = None,
    execute: Annotated[bool, typer.Option("--execute", help="Apply the plan (default: dry run).")] = False,
    export: Annotated[
        Path | None,
        typer.Option(
            "--export", metavar="FILE", help="Write the plan to FILE (.json or .csv).", show_default=False
        ),
    ] = None,
    from_file: Annotated[
        Path | None,
        typer.Option(
            "--from-file", metavar="FILE", help="Use a plan written by --export.", show_default=False
        ),
    ] = None,
    undo: Annotated[
        str | None,
        typer.Option(
            "--undo", metavar="ID|latest", help="Plan the reverse of a journalled reset.", show_default=False
        ),
    ] = None,
    unsafe_ignore_abort_file: Annotated[
        bool,
        typer.Option(
            "--unsafe-ignore-abort-file",
            help="Write although the store has an abort file (never while the broker holds its lock).",
        ),
    ] = False,
    store: StoreOpt = None,
    profile: ProfileOpt = None,
    namesrv: NamesrvOpt = None,
    output: OutputLongOpt = None,
    now_ms: Annotated[int | None, typer.Option("--now-ms", hidden=True)] = None,
) -> None:
    from mqctl.ops import reset as ops
    from mqctl.ops.timeparse import parse_duration_ms, parse_timestamp

    now = int(time.time() * 1000) if now_ms is None else now_ms
    group = group.strip() if group else None
    topic = topic.strip() if topic else None
    is_force = _force(force)
    qid = _int_opt(queue, "-q/--queue")
    explicit = _int_opt(offset, "-o/--offset")
    chosen = [
        n
        for n, given in (
            ("-s/--timestamp", timestamp is not None and explicit is None),
            ("--to-earliest", to_earliest),
            ("--to-latest", to_latest),
            ("--to-offset", to_offset is not None),
            ("--shift-by", shift_by is not None),
            ("--by-duration", by_duration is not None),
            ("--from-file", from_file is not None),
            ("--undo", undo is not None),
            ("-o/--offset", explicit is not None),
        )
        if given
    ]
    if len(chosen) != 1:
        raise UsageError(
            ("conflicting targets: " + ", ".join(chosen) if chosen else "no target")
            + "; give exactly one of -s, --to-earliest, --to-latest, --to-offset, --shift-by, --by-duration, "
            "-o (with -b/-q), --from-file, --undo"
        )
    if explicit is not None and (broker is None or qid is None):
        raise UsageError("-o/--offset needs -b BROKER_NAME and -q QUEUE_ID (one queue)")
    if qid is not None and qid < 0:
        qid = None  # mqadmin: -q < 0 means the whole topic
    file_based = from_file is not None or undo is not None
    if not file_based and (not group or not topic):
        raise UsageError("-g/--group and -t/--topic are required")
    if export is not None and export.suffix.lower() not in (".json", ".csv"):
        raise UsageError(f"--export {export}: the file name must end in .json or .csv")

    ts_text, ts_long = "", -1
    if timestamp is not None:
        ts_text, ts_long = timestamp.strip(), parse_timestamp(timestamp, now)
    if explicit is not None:
        target = ops.Target("explicit", explicit, str(explicit))
    elif to_earliest:
        target = ops.Target("earliest", text="--to-earliest")
    elif to_latest:
        target = ops.Target("latest", text="--to-latest")
    elif to_offset is not None:
        target = ops.Target("offset", _int_opt(to_offset, "--to-offset") or 0, to_offset)
    elif shift_by is not None:
        target = ops.Target("shift", _int_opt(shift_by, "--shift-by") or 0, shift_by)
    elif by_duration is not None:
        ts_text, ts_long = by_duration, now - parse_duration_ms(by_duration)
        target = ops.Target("time", ts_long, by_duration)
    else:
        target = ops.Target("time", ts_long, ts_text)

    record = None
    plan_file = None
    if undo is not None:
        from mqctl.store.safewrite import read_journal

        record = read_journal(undo.strip())
    elif from_file is not None:
        plan_file = ops.load_plan_file(from_file)
    for name, given, actual in (
        ("-g/--group", group, (record or {}).get("group") or (plan_file.group if plan_file else None)),
    ):
        if given and actual and given != actual:
            raise UsageError(
                f"{name} {given!r} does not match the {'journal' if record else 'plan'} ({actual!r})"
            )

    if record is not None and not store and not profile and not namesrv:
        from mqctl.backends.store import StoreBackend

        backend = StoreBackend({b: Path(p) for b, p in record["stores"].items()})
    else:
        backend = open_backend(store, profile, namesrv)
    journal = None
    with backend:
        for w in getattr(backend, "warnings", []):
            warn(w)
        if record is not None:
            plan = ops.plan_undo(backend, record)
        elif plan_file is not None:
            plan = ops.plan_from_file(backend, plan_file, str(from_file))
        else:
            assert group and topic
            plan = ops.plan_reset(backend, group, topic, target, force=is_force, broker=broker, queue=qid)
        if export is not None:
            _export(plan, export)
        if execute:
            journal = ops.apply_plan(backend, plan, force_abort_file=unsafe_ignore_abort_file)
    _render(plan, journal, resolve_format(output), ts_text or plan.target.text, ts_long)


def _export(plan, path: Path) -> None:  # type: ignore[no-untyped-def]
    from mqctl.render import reset as render

    try:
        with open(path, "w", encoding="utf-8", newline="") as f:
            if path.suffix.lower() == ".json":
                from mqctl.render.jsonout import write_json

                write_json(render.json_doc(plan, None), f)
            else:
                from mqctl.render.csvout import write_csv

                write_csv(render.CSV_COLUMNS, render.csv_rows(plan, None), f)
    except OSError as exc:
        raise UsageError(f"--export {path}: {exc.strerror or exc}") from None


def _render(plan, journal, fmt: OutputFormat, ts_text: str, ts_long: int) -> None:  # type: ignore[no-untyped-def]
    from mqctl.render import reset as render

    out = sys.stdout
    if fmt is OutputFormat.json:
        from mqctl.render.jsonout import write_json

        write_json(render.json_doc(plan, journal), out)
    elif fmt is OutputFormat.csv:
        from mqctl.render.csvout import write_csv

        sys.stderr.write(render.status_line(plan, journal) + "\n")
        write_csv(render.CSV_COLUMNS, render.csv_rows(plan, journal), out)
    elif fmt is OutputFormat.plain:
        render.plain(plan, out, journal, ts_text, ts_long)
    else:
        render.table(plan, out, journal)
    out.flush()


reset_offset_by_time.__doc__ = HELP
