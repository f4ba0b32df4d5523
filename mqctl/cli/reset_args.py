"""resetOffsetByTime's flags: their typer declarations and what they mean (the one target they
name, the plan file or journal record a plan comes from). The command itself is cli/reset.py."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from mqctl.cli.blocks import Flag, block
from mqctl.cli.values import true_false
from mqctl.errors import UsageError

if TYPE_CHECKING:
    from mqctl.model import JournalRecord, Target
    from mqctl.ops.planfile import PlanFile


def int_opt(value: str | None, flag: str) -> int | None:
    if value is None:
        return None
    s = value.strip()
    if not s.lstrip("+-").isdigit() or s.count("-") + s.count("+") > 1:
        hint = None
        if flag.startswith("-o") and s.lower() in ("table", "plain", "json", "csv"):
            hint = f"here -o is mqadmin's --offset; the output format is --output {s.lower()}"
        raise UsageError(f"{flag}: expected an integer, got {value!r}", hint)
    return int(s)


def parse_force(value: str) -> bool:
    return true_false(value, "-f/--force")


# The options, one alias each (the command's signature stays one line per option).
GroupOpt = Annotated[str | None, typer.Option("--group", "-g", help="Consumer group.", show_default=False)]

TopicOpt = Annotated[str | None, typer.Option("--topic", "-t", help="Topic.", show_default=False)]

TimestampOpt = Annotated[
    str | None,
    typer.Option(
        "--timestamp",
        "-s",
        help="now | epoch millis | yyyy-MM-dd#HH:mm:ss:SSS (local) | ISO 8601 with offset.",
        show_default=False,
    ),
]

ForceOpt = Annotated[
    str, typer.Option("--force", "-f", metavar="true|false", help="false: only move queues backwards.")
]

BrokerOpt = Annotated[
    str | None,
    typer.Option("--broker", "-b", help="One queue: broker NAME (with -q).", show_default=False),
]

QueueOpt = Annotated[
    str | None, typer.Option("--queue", "-q", help="One queue: queue id (with -b).", show_default=False)
]

OffsetOpt = Annotated[
    str | None,
    typer.Option(
        "--offset", "-o", help="One queue: explicit target offset in [min, max+1].", show_default=False
    ),
]

ToEarliestOpt = Annotated[bool, typer.Option("--to-earliest", help="Target: each queue's min offset.")]

ToLatestOpt = Annotated[bool, typer.Option("--to-latest", help="Target: each queue's max offset.")]

ToOffsetOpt = Annotated[
    str | None,
    typer.Option(
        "--to-offset", metavar="N", help="Target: offset N, clamped to [min, max].", show_default=False
    ),
]

ShiftByOpt = Annotated[
    str | None,
    typer.Option(
        "--shift-by",
        metavar="N",
        help="Target: committed offset + N (negative replays).",
        show_default=False,
    ),
]

ByDurationOpt = Annotated[
    str | None,
    typer.Option(
        "--by-duration",
        metavar="DURATION",
        help="Target: the time DURATION ago (PT1H30M, 1h30m).",
        show_default=False,
    ),
]

ExecuteOpt = Annotated[bool, typer.Option("--execute", help="Apply the plan (default: dry run).")]

DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Only plan, write nothing (the default; kafka's spelling).")
]

ExportOpt = Annotated[
    str | None,
    typer.Option(
        "--export",
        metavar="FILE|-",
        help="Write the plan to FILE (.json or .csv; never inside a store, never over an existing "
        "file without --overwrite), or '-' for the JSON plan on stdout.",
        show_default=False,
    ),
]

OverwriteOpt = Annotated[bool, typer.Option("--overwrite", help="Let --export replace an existing file.")]

FromFileOpt = Annotated[
    Path | None,
    typer.Option("--from-file", metavar="FILE", help="Use a plan written by --export.", show_default=False),
]

UndoOpt = Annotated[
    str | None,
    typer.Option(
        "--undo", metavar="ID|latest", help="Plan the reverse of a journalled reset.", show_default=False
    ),
]

UnsafeIgnoreAbortFileOpt = Annotated[
    bool,
    typer.Option(
        "--unsafe-ignore-abort-file",
        help="Write although the store has an abort file (never while the broker holds its lock).",
    ),
]

NowMsOpt = Annotated[int | None, typer.Option("--now-ms", hidden=True)]


def parse_target(now: int, **given: object) -> tuple[Target, str, int]:
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
            return Target(kind, int_opt(value, flag) or 0, value), ts_text, ts_long  # type: ignore[arg-type]
    by_duration = given["by_duration"]
    if isinstance(by_duration, str):
        ts_long = time_before(now, parse_duration_ms(by_duration))
        return Target("time", ts_long, by_duration), by_duration, ts_long
    return Target("time", ts_long, ts_text), ts_text, ts_long


def plan_source(
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


@dataclass(frozen=True)
class Scope:
    """What the target flags name: the target, mqadmin's -s text and millis (plain's header), and
    the one queue of -b/-q (None: every queue; ``whole_topic``: mqadmin's -q < 0)."""

    target: Target
    ts_text: str
    ts_long: int
    broker: str | None
    queue: int | None
    whole_topic: bool
    queue_text: str


@dataclass(frozen=True)
class TargetFlags:
    """The flags that name a reset's target (one of them) and the queue it applies to."""

    timestamp: str | None = None
    force: str = "true"
    broker: str | None = None
    queue: str | None = None
    offset: str | None = None
    to_earliest: bool = False
    to_latest: bool = False
    to_offset: str | None = None
    shift_by: str | None = None
    by_duration: str | None = None

    @property
    def forced(self) -> bool:
        return parse_force(self.force)

    def scope(self, now: int, from_file: Path | None, undo: str | None) -> Scope:
        qid = int_opt(self.queue, "-q/--queue")
        explicit = int_opt(self.offset, "-o/--offset")
        target, ts_text, ts_long = parse_target(
            now,
            timestamp=self.timestamp,
            explicit=explicit,
            to_earliest=self.to_earliest,
            to_latest=self.to_latest,
            to_offset=self.to_offset,
            shift_by=self.shift_by,
            by_duration=self.by_duration,
            from_file=from_file,
            undo=undo,
        )
        whole_topic = qid is not None and qid < 0  # mqadmin: -q < 0 means every queue of the topic
        if explicit is not None and (self.broker is None or whole_topic or qid is None):
            raise UsageError("-o/--offset needs -b BROKER_NAME and -q QUEUE_ID (one queue)")
        queue = None if whole_topic else qid
        text = self.queue.strip() if self.queue else "-1"
        return Scope(target, ts_text, ts_long, self.broker, queue, whole_topic, text)


target_options = block(
    "target",
    [
        Flag("timestamp", TimestampOpt),
        Flag("force", ForceOpt, "true"),
        Flag("broker", BrokerOpt),
        Flag("queue", QueueOpt),
        Flag("offset", OffsetOpt),
        Flag("to_earliest", ToEarliestOpt, False),
        Flag("to_latest", ToLatestOpt, False),
        Flag("to_offset", ToOffsetOpt),
        Flag("shift_by", ShiftByOpt),
        Flag("by_duration", ByDurationOpt),
    ],
    TargetFlags,
)
