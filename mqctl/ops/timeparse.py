"""Parsing of durations (and, for resets, timestamps) given on the command line."""

from __future__ import annotations

import re

from mqctl.errors import UsageError
from mqctl.model.queues import JAVA_LONG

_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
_SIMPLE = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)")
_ISO = re.compile(
    r"P(?:(?P<w>\d+(?:\.\d+)?)W)?(?:(?P<d>\d+(?:\.\d+)?)D)?"
    r"(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?"
)

DURATION_FORMATS = "ISO 8601 (PT1H30M, P1D) or compact (1h30m, 90s, 500ms, 2d)"
# Beyond this a duration is a typo, not an intent (10,000 years; far before any stored message).
MAX_DURATION_MS = 10_000 * 365 * 86_400_000
# 9999-12-31T23:59:59.999Z: the last instant a date in any accepted format can name.
MAX_TIMESTAMP_MS = 253_402_300_799_999


def _bounded(ms: int, text: str) -> int:
    if ms > MAX_DURATION_MS:
        raise UsageError(f"duration {text!r} is longer than 10,000 years; accepted: {DURATION_FORMATS}")
    return ms


def parse_duration_ms(text: str, *, bare_ms: bool = True) -> int:
    """'1h30m', '90s', '500ms', '2d', 'PT1H30M', 'P1DT2H' or plain milliseconds -> milliseconds.
    ``bare_ms=False``: a number without a unit is refused (``--by-duration 5`` is not 5 ms)."""
    s = text.strip()
    if not s:
        raise UsageError(f"empty duration; accepted: {DURATION_FORMATS}")
    if s.isdecimal():
        if not bare_ms:
            raise UsageError(
                f"duration {text!r} has no unit; accepted: {DURATION_FORMATS}",
                f"say which: {s}ms, {s}s, {s}m, {s}h or {s}d",
            )
        return _bounded(int(s), text)
    upper = s.upper()
    if upper.startswith("P"):
        m = _ISO.fullmatch(upper)
        if m and upper not in ("P", "PT") and not upper.endswith("T"):
            total = 0.0
            for key, unit in (("w", "w"), ("d", "d"), ("h", "h"), ("m", "m"), ("s", "s")):
                if m.group(key):
                    total += float(m.group(key)) * _UNITS_MS[unit]
            return _bounded(int(round(total)), text)
        raise UsageError(f"malformed duration {text!r}; accepted: {DURATION_FORMATS}")
    pos, total = 0, 0.0
    lowered = s.lower()
    for m in _SIMPLE.finditer(lowered):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS_MS[m.group(2)]
        pos = m.end()
    if pos != len(lowered) or pos == 0:
        raise UsageError(f"malformed duration {text!r}; accepted: {DURATION_FORMATS}")
    return _bounded(int(round(total)), text)


def time_before(now_ms: int, duration_ms: int) -> int:
    """The instant ``duration_ms`` before now; an instant before 1970 is 0, which lies before any
    stored message, so a reset to it reaches each queue's earliest offset (never wraps to 'now')."""
    return max(now_ms - duration_ms, 0)


TIMESTAMP_FORMATS = (
    "'now', epoch milliseconds (e.g. 1700000000000), 'yyyy-MM-dd#HH:mm:ss:SSS' in local time "
    "(e.g. 2026-11-20#10:00:00:000), or ISO 8601 with an offset (2026-11-20T10:00:00+08:00, ...Z)"
)
_EPOCH = re.compile(r"[+-]?\d+", re.ASCII)
# Ten digits read as milliseconds fall in 1970-01-12..1970-04-26, long before any RocketMQ
# message; read as seconds they are 2001-09-09..2286-11-20: a value in seconds, meant as a date.
_SECONDS_LIKE = range(1_000_000_000, 10_000_000_000)
_MQADMIN_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})#(\d{2}):(\d{2}):(\d{2}):(\d{3})", re.ASCII)
_ISO_OFFSET = re.compile(r"(Z|[+-]\d{2}:?\d{2})$", re.ASCII)


def parse_timestamp(text: str, now_ms: int, *, epoch_ms: bool = False) -> int:
    """A reset timestamp -> epoch milliseconds (mqadmin's -s, made strict).

    mqadmin's SimpleDateFormat is lenient (month 13 rolls into the next year, trailing text is
    ignored) and a failure there is a NullPointerException; here anything not exactly one of
    the accepted forms is a usage error naming them, so a typo never moves offsets.

    Any real date before 1970 (back to the year 1, in every form) is 0: before any stored
    message, so the reset reaches the earliest offset; never a negative number, which the broker
    reads as "the end of each queue". A negative epoch value typed as such keeps mqadmin's meaning
    (4.x scripts pass -1 for "latest"). Beyond the year 9999 is refused as absurd. An epoch value
    of ten digits is refused as seconds unless ``epoch_ms`` says it really is milliseconds.
    """
    import datetime as dt

    s = text.strip()
    bad = UsageError(f"malformed timestamp {text!r}; accepted: {TIMESTAMP_FORMATS}")
    if s == "now":
        return now_ms
    if _EPOCH.fullmatch(s):
        value = int(s)
        if not JAVA_LONG[0] <= value <= JAVA_LONG[1]:
            raise bad
        if value > MAX_TIMESTAMP_MS:
            raise UsageError(f"timestamp {text!r} lies after the year 9999; accepted: {TIMESTAMP_FORMATS}")
        if value in _SECONDS_LIKE and not epoch_ms:
            raise _seconds_like(text, value)
        return value
    m = _MQADMIN_DATE.fullmatch(s)
    if m:
        y, mo, d, h, mi, sec, ms = (int(g) for g in m.groups())
        try:
            local = dt.datetime(y, mo, d, h, mi, sec)  # naive = the process's local time zone
            if y < 1969:  # before 1970 in every time zone (local-time conversion fails for early years)
                return 0
            return max(int(local.timestamp()) * 1000 + ms, 0)
        except (ValueError, OverflowError, OSError):
            raise bad from None
    # ISO 8601: an offset is required, a bare local time would be a guess about the zone.
    if len(s) >= 16 and s[4:5] == "-" and s[10:11] in ("T", "t", " ") and _ISO_OFFSET.search(s):
        iso = s[:-1] + "+00:00" if s[-1] in "Zz" else s
        try:
            parsed = dt.datetime.fromisoformat(iso)
        except ValueError:
            raise bad from None
        if parsed.tzinfo is None:
            raise bad
        delta = parsed - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
        return max((delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000, 0)
    raise bad


def _seconds_like(text: str, value: int) -> UsageError:
    import datetime as dt

    utc = dt.timezone.utc
    as_s = dt.datetime.fromtimestamp(value, utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    as_ms = dt.datetime.fromtimestamp(value / 1000, utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return UsageError(
        f"timestamp {text.strip()!r} looks like epoch seconds ({as_s}); as milliseconds it is {as_ms}, "
        "before any RocketMQ message",
        f"give milliseconds ({value}000), or add --epoch-ms if {as_ms} is really meant",
    )


def positive_duration_ms(text: str, flag: str) -> int:
    """A flag's duration that must be positive (``flag`` names it in the error)."""
    ms = parse_duration_ms(text)
    if ms <= 0:
        raise UsageError(f"{flag} {text}: expected a positive duration")
    return ms
