"""resetOffsetByTime's flags: their typer declarations and their checks (exactly one target, the
queue scope, what a replayed plan refuses). What a target's value means is ops/resettarget; the
plan file or journal record a plan comes from is ops/planfile. The command is cli/reset.py."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mqctl.cli.blocks import Flag, block, opt
from mqctl.cli.values import true_false
from mqctl.errors import UsageError
from mqctl.ops.resettarget import Scope
from mqctl.records import record


def parse_force(value: str) -> bool:
    return true_false(value, "-f/--force")


# The options, one alias each (the command's signature stays one line per option).
GroupOpt = Annotated[str | None, opt("--group", "-g", help="Consumer group.")]

TopicOpt = Annotated[str | None, opt("--topic", "-t", help="Topic.")]

TimestampOpt = Annotated[
    str | None,
    opt(
        "--timestamp",
        "-s",
        help="now | epoch millis | yyyy-MM-dd#HH:mm:ss:SSS (local) | ISO 8601 with offset.",
    ),
]

ForceOpt = Annotated[
    str, typer.Option("--force", "-f", metavar="true|false", help="false: only move queues backwards.")
]

BrokerOpt = Annotated[
    str | None,
    opt(
        "--broker",
        "-b",
        help="Broker NAME: with -q one queue; alone, only that broker's queues.",
    ),
]

QueueOpt = Annotated[str | None, opt("--queue", "-q", help="One queue: queue id (with -b).")]

OffsetOpt = Annotated[
    str | None,
    opt("--offset", "-o", help="One queue: explicit target offset in [min, max+1]."),
]

ToEarliestOpt = Annotated[bool, typer.Option("--to-earliest", help="Target: each queue's min offset.")]

ToLatestOpt = Annotated[bool, typer.Option("--to-latest", help="Target: each queue's max offset.")]

ToOffsetOpt = Annotated[
    str | None,
    opt("--to-offset", metavar="N", help="Target: offset N, clamped to [min, max]."),
]

ShiftByOpt = Annotated[
    str | None,
    opt(
        "--shift-by",
        metavar="N",
        help="Target: committed offset + N (negative replays).",
    ),
]

ByDurationOpt = Annotated[
    str | None,
    opt(
        "--by-duration",
        metavar="DURATION",
        help="Target: the time DURATION ago (PT1H30M, 1h30m).",
    ),
]

EpochMsOpt = Annotated[
    bool,
    typer.Option(
        "--epoch-ms",
        help="-s EPOCH is milliseconds even with ten digits (a date in 1970; refused as seconds without it).",
    ),
]

ExecuteOpt = Annotated[bool, typer.Option("--execute", help="Apply the plan (default: dry run).")]

DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Only plan, write nothing (the default; kafka's spelling).")
]

ExportOpt = Annotated[
    str | None,
    opt(
        "--export",
        metavar="FILE|-",
        help="Write the plan to FILE (.json or .csv; never inside a store, never over an existing "
        "file without --overwrite), or '-' for the JSON plan on stdout.",
    ),
]

OverwriteOpt = Annotated[bool, typer.Option("--overwrite", help="Let --export replace an existing file.")]

FromFileOpt = Annotated[
    Path | None,
    opt("--from-file", metavar="FILE", help="Use a plan written by --export."),
]

UndoOpt = Annotated[
    str | None,
    opt("--undo", metavar="ID|latest", help="Plan the reverse of a journalled reset."),
]

UnsafeIgnoreAbortFileOpt = Annotated[
    bool,
    typer.Option(
        "--unsafe-ignore-abort-file",
        help="Write although the store has an abort file (never while the broker holds its lock).",
    ),
]

LockTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--lock-timeout",
        metavar="SECONDS",
        help="A store: wait this long for another mqctl reset of the same store to finish (0: do not wait).",
    ),
]

NowMsOpt = Annotated[int | None, typer.Option("--now-ms", hidden=True)]


def lock_timeout_seconds(value: float) -> float:
    import math

    if not (math.isfinite(value) and value >= 0):
        raise UsageError(f"--lock-timeout {value}: expected a number of seconds, 0 or more")
    return value


@record(frozen=True)
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
    epoch_ms: bool = False

    @property
    def forced(self) -> bool:
        return parse_force(self.force)

    def scope(self, now: int, from_file: Path | None, undo: str | None) -> Scope:
        from mqctl.ops.resettarget import int_opt, reset_target

        qid = int_opt(self.queue, "-q/--queue")
        explicit = int_opt(self.offset, "-o/--offset")
        self._one_target(explicit, from_file, undo)
        target, ts_text, ts_long = reset_target(
            now,
            timestamp=self.timestamp,
            epoch_ms=self.epoch_ms is True,
            explicit=explicit,
            to_earliest=self.to_earliest,
            to_latest=self.to_latest,
            to_offset=self.to_offset,
            shift_by=self.shift_by,
            by_duration=self.by_duration,
        )
        if self.epoch_ms and self.timestamp is None:
            raise UsageError("--epoch-ms says how to read -s EPOCH; there is no -s")
        if from_file is not None or undo is not None:
            self._replayed_alone("--from-file" if from_file is not None else "--undo")
        whole_topic = qid is not None and qid < 0  # mqadmin: -q < 0 means every queue of the topic
        if explicit is not None and (self.broker is None or whole_topic or qid is None):
            raise UsageError("-o/--offset needs -b BROKER_NAME and -q QUEUE_ID (one queue)")
        return Scope.of(target, ts_text, ts_long, self.broker, self.queue, qid)

    def _one_target(self, explicit: int | None, from_file: Path | None, undo: str | None) -> None:
        """Exactly one target flag is given (``-s`` beside ``-o`` is mqadmin's header, not a target)."""
        chosen = [
            name
            for name, value in (
                ("-s/--timestamp", self.timestamp if explicit is None else None),
                ("--to-earliest", self.to_earliest),
                ("--to-latest", self.to_latest),
                ("--to-offset", self.to_offset),
                ("--shift-by", self.shift_by),
                ("--by-duration", self.by_duration),
                ("--from-file", from_file),
                ("--undo", undo),
                ("-o/--offset", explicit),
            )
            if value is not None and value is not False  # -o 0 is a target (0 == False)
        ]
        if len(chosen) != 1:
            raise UsageError(
                ("conflicting targets: " + ", ".join(chosen) if chosen else "no target")
                + "; give exactly one of -s, --to-earliest, --to-latest, --to-offset, --shift-by, "
                "--by-duration, -o (with -b/-q), --from-file, --undo"
            )

    def _replayed_alone(self, source: str) -> None:
        """A plan file or a journal's undo names its own queues: a flag that would narrow or
        change them is refused rather than ignored."""
        given = [
            flag
            for flag, value in (("-b/--broker", self.broker), ("-q/--queue", self.queue))
            if value is not None
        ]
        if not self.forced:
            given.append("-f false")
        if given:
            raise UsageError(
                f"{', '.join(given)} cannot narrow {source}: it replays exactly the queues it lists",
                "edit the plan file (or export a new one with those flags) instead",
            )


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
        Flag("epoch_ms", EpochMsOpt, False),
    ],
    TargetFlags,
)
