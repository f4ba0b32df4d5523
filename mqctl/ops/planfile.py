"""Plan files of resetOffsetByTime: the JSON/CSV documents, --export written safely, --from-file.

One owner for the format: ``-o json`` prints ``plan_document``, ``--export`` writes it (or the
CSV form), ``--from-file`` reads either back. ``plan_source`` is where a replayed plan comes
from: the plan file, or the journal record ``--undo`` names, checked against ``-g`` and ``-t``.

Export safety: a plan is never written inside a broker store (it could replace the broker's own
files), never replaces an existing file unless asked (``overwrite``), and lands atomically (a
temp file in the same directory, fsync, then a no-clobber link or a rename), so a reader never
sees half a plan.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from mqctl import fsio
from mqctl.errors import UsageError
from mqctl.model.queues import JAVA_INT, JAVA_LONG
from mqctl.records import record

if TYPE_CHECKING:
    from mqctl.model import JournalRecord, ResetPlan

PLAN_SCHEMA = "mqctl/resetOffsetByTime/v1"


def plan_rows(plan: ResetPlan) -> list[dict]:
    return [
        {
            "brokerName": r.broker_name,
            "queueId": r.queue_id,
            "topic": r.topic,
            "currentOffset": r.current_offset,
            "targetOffset": r.target_offset,
            "delta": r.delta,
            "targetTimestamp": r.target_timestamp,
            "minOffset": r.min_offset,
            "maxOffset": r.max_offset,
            "warning": ",".join(r.warnings),
        }
        for r in plan.rows
    ]


@record(frozen=True)
class PlanFileRow:
    topic: str
    broker_name: str
    queue_id: int
    current_offset: int
    target_offset: int


@record(frozen=True)
class PlanFile:
    group: str
    rows: tuple[PlanFileRow, ...]


def _bad_plan(path: Path, why: str) -> UsageError:
    return UsageError(f"plan file {path}: {why}; expected a file written by --export (.json or .csv)")


def _int_field(row: Mapping, key: str, path: Path, n: int) -> int:
    v = row.get(key)
    if isinstance(v, bool):
        raise _bad_plan(path, f"row {n}: {key} is not an integer")
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().lstrip("-").isdecimal():
        return int(v.strip())
    raise _bad_plan(path, f"row {n}: {key} is missing or not an integer")


def _check_bounds(row: PlanFileRow, path: Path, n: int) -> None:
    """What no broker could hold: the plan is wrong (exit 2), whatever the cluster says."""
    for key, value, low, high in (
        ("queueId", row.queue_id, 0, JAVA_INT[1]),
        ("currentOffset", row.current_offset, -1, JAVA_LONG[1]),
        ("targetOffset", row.target_offset, 0, JAVA_LONG[1]),
    ):
        if not low <= value <= high:
            raise _bad_plan(path, f"row {n}: {key} {value} is not in [{low}, {high}]")


def load_plan_file(path: Path) -> PlanFile:
    """A plan exported with --export (JSON or CSV by extension)."""
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        raise _bad_plan(path, "no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _bad_plan(path, f"unreadable ({exc})") from None
    suffix = path.suffix.lower()
    if suffix == ".json":
        group, raw_rows, default_topic = _json_plan(path, text)
    elif suffix == ".csv":
        group, raw_rows, default_topic = _csv_plan(path, text)
    else:
        raise _bad_plan(path, "unknown extension")
    if not isinstance(group, str) or not group:
        raise _bad_plan(path, "no group")
    if not raw_rows:
        raise _bad_plan(path, "no rows")
    return PlanFile(group, _plan_rows(path, raw_rows, default_topic))


def _json_plan(path: Path, text: str) -> tuple[object, list[Mapping], object]:
    """A ``-o json`` / ``--export x.json`` document: its group, raw rows and default topic."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise _bad_plan(path, f"not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("schema") != PLAN_SCHEMA or not isinstance(doc.get("rows"), list):
        raise _bad_plan(path, f"not a {PLAN_SCHEMA} document")
    return doc.get("group"), doc["rows"], doc.get("topic")


def _csv_plan(path: Path, text: str) -> tuple[object, list[Mapping], object]:
    """An ``--export x.csv`` file: its one group and raw rows (each row names its topic)."""
    reader = csv.DictReader(io.StringIO(text))
    missing = {"group", "topic", "brokerName", "queueId", "currentOffset", "targetOffset"} - set(
        reader.fieldnames or []
    )
    if missing:
        raise _bad_plan(path, f"missing columns {', '.join(sorted(missing))}")
    raw_rows: list[Mapping] = list(reader)
    groups = {r.get("group") for r in raw_rows}
    if len(groups) != 1:
        raise _bad_plan(path, "rows must name exactly one group")
    return groups.pop(), raw_rows, None


def _plan_rows(path: Path, raw_rows: list[Mapping], default_topic: object) -> tuple[PlanFileRow, ...]:
    """Each raw row checked field by field and within bounds; a queue listed twice is refused."""
    rows = []
    seen = set()
    for n, r in enumerate(raw_rows, 1):
        if not isinstance(r, Mapping):
            raise _bad_plan(path, f"row {n} is not an object")
        topic = r.get("topic") or default_topic
        broker = r.get("brokerName")
        if not isinstance(topic, str) or not topic or not isinstance(broker, str) or not broker:
            raise _bad_plan(path, f"row {n}: topic or brokerName missing")
        row = PlanFileRow(
            topic,
            broker,
            _int_field(r, "queueId", path, n),
            _int_field(r, "currentOffset", path, n),
            _int_field(r, "targetOffset", path, n),
        )
        _check_bounds(row, path, n)
        key = (row.topic, row.broker_name, row.queue_id)
        if key in seen:
            raise _bad_plan(path, f"row {n}: queue listed twice")
        seen.add(key)
        rows.append(row)
    return tuple(rows)


def plan_source(
    undo: str | None, from_file: Path | None, group: str | None, topic: str | None = None
) -> tuple[JournalRecord | None, PlanFile | None]:
    """The journal record (--undo) or plan file (--from-file) the plan comes from, if any; -g and
    -t, when given, must name what it holds."""
    record: JournalRecord | None = None
    plan_file: PlanFile | None = None
    if undo is not None:
        from mqctl.ops.journal import read_journal

        record = read_journal(undo.strip())
        actual, topics = record.group, {c.queue.topic for c in record.changes}
    elif from_file is not None:
        plan_file = load_plan_file(from_file)
        actual, topics = plan_file.group, {r.topic for r in plan_file.rows}
    else:
        return None, None
    what = "journal" if record is not None else "plan"
    if group and actual and group != actual:
        raise UsageError(f"-g/--group {group!r} does not match the {what} ({actual!r})")
    if topic and topics != {topic}:
        raise UsageError(f"-t/--topic {topic!r} does not match the {what} ({', '.join(sorted(topics))})")
    return record, plan_file


def plan_document(plan: ResetPlan, journal: JournalRecord | None) -> dict:
    """The plan as JSON: `-o json` output, the --export format and what --from-file reads back."""
    doc: dict = {
        "schema": PLAN_SCHEMA,
        "executed": journal is not None,
        "group": plan.group,
        "topic": plan.topic,
        "target": {"kind": plan.target.kind, "value": plan.target.value, "text": plan.target.text},
        "force": plan.force,
        "rows": plan_rows(plan),
        "totals": {
            "queues": len(plan.rows),
            "changed": plan.changed,
            "replayed": plan.replayed,
            "skipped": plan.skipped,
        },
    }
    if plan.undo_of:
        doc["undoOf"] = plan.undo_of
    if journal is not None:
        doc["journal"] = {"id": journal.id, "path": None if journal.path is None else str(journal.path)}
    return doc


CSV_COLUMNS = [
    "group",
    "topic",
    "brokerName",
    "queueId",
    "currentOffset",
    "targetOffset",
    "delta",
    "targetTimestamp",
    "minOffset",
    "maxOffset",
    "warning",
    "executed",
]


def csv_rows(plan: ResetPlan, journal: JournalRecord | None) -> list[list]:
    executed = "true" if journal is not None else "false"
    return [
        [
            plan.group,
            r.topic,
            r.broker_name,
            r.queue_id,
            r.current_offset,
            r.target_offset,
            r.delta,
            r.target_timestamp,
            r.min_offset,
            r.max_offset,
            ",".join(r.warnings),
            executed,
        ]
        for r in plan.rows
    ]


# ----------------------------------------------------------------------------------- export

STDOUT = "-"


def check_export_target(target: str, protected: Iterable[Path], overwrite: bool) -> Path | None:
    """Refuse an export path before anything is computed; None means stdout (``-``)."""
    if target == STDOUT:
        return None
    path = Path(target).expanduser()
    if path.suffix.lower() not in (".json", ".csv"):
        raise UsageError(f"--export {target}: the file name must end in .json or .csv (or '-' for stdout)")
    resolved = path.resolve()
    for root in protected:
        if resolved == root.resolve() or resolved.is_relative_to(root.resolve()):
            raise UsageError(
                f"--export {target}: refusing to write inside the broker store {root}",
                "write the plan somewhere else, e.g. --export ./plan.json",
            )
    if not resolved.parent.is_dir():
        raise UsageError(f"--export {target}: directory {resolved.parent} does not exist")
    if (path.exists() or path.is_symlink()) and not overwrite:
        raise UsageError(
            f"--export {target}: the file exists; nothing written",
            "pass --overwrite to replace it, or choose another name",
        )
    if path.exists() and not path.is_file():
        raise UsageError(f"--export {target}: not a regular file")
    _probe(path, target)
    return path


def _probe(path: Path, target: str) -> None:
    """A directory that takes no new file is refused before anything is planned or written, never
    after an --execute landed."""
    try:
        fsio.probe_create(path.parent)
    except OSError as exc:
        from mqctl.errors import MqctlError

        raise MqctlError(
            f"--export {target}: cannot create a file in {path.parent}: {exc.strerror or exc}; nothing written",
            "choose a directory this user can write to",
        ) from None


def render_plan(plan: ResetPlan, journal: JournalRecord | None, csv_form: bool) -> str:
    if not csv_form:
        return json.dumps(plan_document(plan, journal), ensure_ascii=False, indent=2) + "\n"
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows(["" if v is None else v for v in row] for row in csv_rows(plan, journal))
    return buf.getvalue()


def write_export(path: Path, text: str, overwrite: bool) -> None:
    """Atomically (fsio): renamed over the file with ``overwrite``, else linked (no clobber)."""
    try:
        fsio.atomic_write(path, text.encode("utf-8"), replace=overwrite)
    except FileExistsError:  # it appeared since the check: never replaced
        raise UsageError(
            f"--export {path}: the file exists; nothing written", "pass --overwrite to replace it"
        ) from None
