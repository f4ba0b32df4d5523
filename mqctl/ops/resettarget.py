"""What a reset's target flag means: its value read as a ``model.Target``.

cli/reset_args checks that exactly one target flag is given; this reads its value (an integer,
a timestamp, a duration before now) into the target a plan is made for, with mqadmin's ``-s``
text and millis for the plain header.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.errors import UsageError
from mqctl.model.queues import JAVA_INT, JAVA_LONG
from mqctl.records import record

if TYPE_CHECKING:
    from mqctl.model import Target


@record(frozen=True)
class Scope:
    """What the target flags name: the target, mqadmin's -s text and millis (plain's header), the
    broker and queue of -b/-q (None: every one), and what the first line says about that scope."""

    target: Target
    ts_text: str
    ts_long: int
    broker: str | None
    queue: int | None
    note: str | None

    @classmethod
    def of(
        cls,
        target: Target,
        ts_text: str,
        ts_long: int,
        broker: str | None,
        queue_text: str | None,
        qid: int | None,
    ) -> Scope:
        """-b/-q as mqadmin reads them: a negative queue id means every queue of the topic (on -b's
        broker, if given); -b alone keeps to that broker's queues. The note says so."""
        whole_topic = qid is not None and qid < 0
        note = None
        if whole_topic:
            note = f"-q {queue_text.strip() if queue_text else -1} means every queue, as in mqadmin"
            note += f"; -b {broker} keeps to that broker's" if broker else ""
        elif broker is not None and qid is None:
            note = f"-b {broker} without -q: that broker's queues only"
        return cls(target, ts_text, ts_long, broker, None if whole_topic else qid, note)


def int_opt(value: str | None, flag: str) -> int | None:
    """An integer flag's value (None when not given); ``flag`` names it in the error. Digits are
    decimal ones (Java's parse takes any script's, and so does this; never a superscript), and the
    value must fit the Java type the broker holds it in: a long, an int for -q."""
    if value is None:
        return None
    s = value.strip()
    if not s.lstrip("+-").isdecimal() or s.count("-") + s.count("+") > 1:
        hint = None
        if flag.startswith("-o") and s.lower() in ("table", "plain", "json", "csv"):
            hint = f"here -o is mqadmin's --offset; the output format is --output {s.lower()}"
        raise UsageError(f"{flag}: expected an integer, got {value!r}", hint)
    n = int(s)
    kind, (low, high) = ("int", JAVA_INT) if flag.startswith("-q") else ("long", JAVA_LONG)
    if not low <= n <= high:
        raise UsageError(f"{flag}: {s} does not fit in a Java {kind}, as the broker holds it ({low}..{high})")
    return n


def reset_target(
    now: int,
    *,
    timestamp: str | None,
    epoch_ms: bool,
    explicit: int | None,
    to_earliest: bool,
    to_latest: bool,
    to_offset: str | None,
    shift_by: str | None,
    by_duration: str | None,
) -> tuple[Target, str, int]:
    """The target of the one flag given (none of these: a time target at ``-s``, or -1 when a
    plan file or journal names the targets), with mqadmin's -s text and millis. ``-s`` is read
    even beside ``-o``: mqadmin's plain header prints it."""
    from mqctl.model import Target
    from mqctl.ops.timeparse import parse_duration_ms, parse_timestamp, time_before

    ts_text, ts_long = "", -1
    if isinstance(timestamp, str):
        ts_text, ts_long = timestamp.strip(), parse_timestamp(timestamp, now, epoch_ms=epoch_ms)
    if isinstance(explicit, int):
        return Target("explicit", explicit, str(explicit)), ts_text, ts_long
    if to_earliest:
        return Target("earliest", text="--to-earliest"), ts_text, ts_long
    if to_latest:
        return Target("latest", text="--to-latest"), ts_text, ts_long
    if isinstance(to_offset, str):
        return Target("offset", int_opt(to_offset, "--to-offset") or 0, to_offset), ts_text, ts_long
    if isinstance(shift_by, str):
        return Target("shift", int_opt(shift_by, "--shift-by") or 0, shift_by), ts_text, ts_long
    if isinstance(by_duration, str):
        ts_long = time_before(now, parse_duration_ms(by_duration, bare_ms=False))
        return Target("time", ts_long, by_duration), by_duration, ts_long
    return Target("time", ts_long, ts_text), ts_text, ts_long
