"""--history files: one consumerProgress sample per line (JSON, schema SAMPLE_SCHEMA), appended
by every run or every --watch sample, read back by --status-from (and by the next --history run
to judge its window).

Appends are one ``write`` on an ``O_APPEND`` descriptor, so runs of cron jobs never interleave
lines; a line cut short by a killed run (the last one, without its newline) is skipped with a
warning (and the next append starts on a new line). A file may hold several groups (and -t
topics): readers keep the lines of theirs. Only the file's tail is read (``TAIL_BYTES``).
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Iterable
from pathlib import Path

from mqctl import fsio
from mqctl.errors import ExitStatus, MqctlError, UsageError
from mqctl.model import SAMPLE_SCHEMA, BackendKind, GroupProgress, Rules, Sample, WatchView
from mqctl.ops.watch.codec import sample_from_doc

TAIL_BYTES = 16 << 20


def _corrupt(path: Path, where: object, why: str) -> MqctlError:
    err = MqctlError(
        f"{path}: line {where} is not a consumerProgress sample ({why})",
        "a --history file holds only lines mqctl wrote; repair or move the file",
    )
    err.exit_status = ExitStatus.STORE_DATA
    return err


_HEAD = '{"schema":"%s",' % SAMPLE_SCHEMA


def _cut(line: str) -> bool:
    """A line mqctl began and did not finish: it starts as every sample line starts."""
    text = line.strip()
    return len(text) > len('{"schema":') and (_HEAD.startswith(text) or text.startswith(_HEAD))


def _foreign(path: Path, why: str) -> UsageError:
    return UsageError(
        f"{path} is not a consumerProgress history: {why}",
        f"a history file holds {SAMPLE_SCHEMA} lines (written by consumerProgress --history)",
    )


def _refuse_foreign(path: Path) -> None:
    """A first line that is not JSON: a JSON document over several lines (another command's
    -o json) is a foreign file (exit 2), anything else a corrupt one."""
    if path.stat().st_size > TAIL_BYTES:
        return
    try:
        doc = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except ValueError:
        return
    schema = doc.get("schema") if isinstance(doc, dict) else None
    raise _foreign(path, f"it holds one JSON document (schema {schema!r}), not one sample per line")


def check_history_path(target: str, protected: Iterable[Path]) -> Path:
    """Refuse a history file inside a broker store, a directory, a missing directory, or one that
    could not be appended to (before the cluster is read: a cron run must not lose its sample)."""
    path = Path(target).expanduser()
    resolved = path.resolve()
    for root in protected:
        if resolved == root.resolve() or resolved.is_relative_to(root.resolve()):
            raise UsageError(
                f"--history {target}: refusing to write inside the broker store {root}",
                "keep the history somewhere else, e.g. --history ./G.jsonl",
            )
    if not resolved.parent.is_dir():
        raise UsageError(f"--history {target}: directory {resolved.parent} does not exist")
    exists = path.exists()
    if exists and not path.is_file():
        raise UsageError(f"--history {target}: not a regular file")
    try:
        if exists:
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND))  # opened, nothing written
        else:
            fsio.probe_create(resolved.parent)
    except OSError as exc:
        raise MqctlError(
            f"--history {target}: cannot append to it: {exc.strerror or exc}; nothing read",
            "choose a file this user can write, in a directory it can write to",
        ) from None
    return path


def _tail(path: Path) -> tuple[list[str], int, bool]:
    """The file's last lines (a partial first line of a cut tail dropped), the line number of the
    first, and whether the last one ends with a newline."""
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        start = max(size - TAIL_BYTES, 0)
        f.seek(start)
        data = f.read()
    if start > 0:
        data = data[data.find(b"\n") + 1 :] if b"\n" in data else b""
    text = data.decode("utf-8", errors="replace")
    return text.split("\n"), 1 if start == 0 else 0, text.endswith("\n") or not text


def read_history(
    path: Path, group: str, topic: str | None, keep: int, *, required: bool = False, client: str | None = None
) -> tuple[list[Sample], list[str]]:
    """The last ``keep`` samples of ``group`` (and ``topic``; a broadcasting group's: of its
    ``client``) in the file, oldest first, and warnings. ``required``: a missing file or one without the group's samples is an error
    (--status-from); else they read as no samples. Lines of other groups are skipped; a line that
    is not a sample is exit 6 (corrupt), a file of another JSON schema exit 2 (foreign)."""
    if not path.exists():
        if required:
            raise UsageError(f"--status-from {path}: no such file")
        return [], []
    try:
        lines, first_no, terminated = _tail(path)
    except OSError as exc:
        raise MqctlError(
            f"{path}: cannot read it as a history file: {exc.strerror or exc}",
            "a --history file is a regular file mqctl appends to",
        ) from None
    out: deque[Sample] = deque(maxlen=max(keep, 1))
    warnings: list[str] = []
    groups: set[str] = set()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        n = first_no + i if first_no else 0
        where = n or "(tail)"
        try:
            doc = json.loads(line)
        except ValueError:
            if n == 1:
                _refuse_foreign(path)
            if (i == len(lines) - 1 and not terminated) or _cut(line):
                warnings.append(f"{path}: line {where} is cut short (a run killed while writing?); skipped")
                continue
            raise _corrupt(path, where, "not JSON") from None
        if isinstance(doc, dict) and doc.get("schema") != SAMPLE_SCHEMA:
            raise _foreign(path, f"line {where} has schema {doc.get('schema')!r}")
        try:
            sample = sample_from_doc(doc)
        except ValueError as e:
            raise _corrupt(path, where, str(e)) from None
        groups.add(sample.group)
        if sample.group == group and sample.topic == topic and sample.client == client:
            out.append(sample)
    if required and not out:
        what = f"group {group}" + (f" with -t {topic}" if topic else "")
        holds = ", ".join(sorted(groups)) or "no samples"
        raise UsageError(f"{path} has no samples of {what} (it holds: {holds})")
    return sorted(out, key=lambda s: s.at_ms), warnings


def append_line(path: Path, line: str) -> None:
    """Append one line in one write (fsio.append_line: a new line first after a cut one); a
    failure names the file (a full disk, or a file that takes no write although it opened)."""
    try:
        fsio.append_line(path, line)
    except OSError as exc:
        raise MqctlError(
            f"--history {path}: cannot append the sample: {exc.strerror or exc}; it is not recorded",
            "check the file, its permissions and free space",
        ) from None


def record(
    path: Path,
    progress: GroupProgress,
    kind: BackendKind,
    topic: str | None,
    rules: Rules,
    client: str | None = None,
) -> tuple[WatchView, list[str]]:
    """--history from a one-shot read (cron): the read judged with the file's last window, then
    appended to the file. Returns the view and the file's warnings (cut lines). ``client``: the
    read is one broadcasting client's (its samples are judged and recorded apart)."""
    from mqctl.ops.watch import codec
    from mqctl.ops.watch.rules import evaluate, sample_from_progress
    from mqctl.records import replace

    seed, warnings = read_history(path, progress.group, topic, rules.window * 3, client=client)
    sample = replace(sample_from_progress(progress, kind, topic), client=client)
    view = evaluate([*seed, sample], rules)
    append_line(path, codec.sample_line(view))
    return view, warnings


def judge(path: Path, group: str, topic: str | None, rules: Rules) -> tuple[WatchView, list[str]]:
    """--status-from: the file's last window of the group judged, without the cluster."""
    from mqctl.ops.watch.rules import evaluate

    samples, warnings = read_history(path, group, topic, rules.window * 3, required=True)
    return evaluate(samples, rules), warnings
